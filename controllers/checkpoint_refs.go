/*
Copyright 2026 The tether authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// refLookMaxAge is how long one look at a workspace's checkpoint refs
// answers for its other Checkpoints. The Checkpoints of a Hook are
// reconciled together (at start, and when the refProber queues them), so
// one look serves them all, where each used to run git three times: 50,000
// Checkpoints meant 150,000 git runs at every start. A ref deleted by hand
// shows in Ready within the verify period and this age (half the period,
// if shorter).
const refLookMaxAge = 5 * time.Second

// refLooks shares looks at workspaces' checkpoint refs among the
// Checkpoint reconciles of a few seconds. It is a cache of what git says,
// not state: a restart only looks again.
type refLooks struct {
	mu    sync.Mutex
	looks map[string]*refLook
	// read is snapshot.ReadRefs; tests count its calls.
	read func(ctx context.Context, workspace string) (*snapshot.Refs, error)
}

// refLook is one look at a workspace, or its failure.
type refLook struct {
	at   time.Time
	refs *snapshot.Refs
	err  error
	// done is closed once refs or err is set, for reconciles that wait on
	// a look another started.
	done chan struct{}
}

// verify is snapshot.Verify through a look at most maxAge old, taken now
// if there is none. A failed look is not kept: the next Checkpoint looks
// again. A ref deleted by hand shows within the verify period and maxAge.
func (l *refLooks) verify(ctx context.Context, now time.Time, maxAge time.Duration, workspace, ref, commit string) error {
	look := l.look(ctx, now, maxAge, workspace)
	if look.err == nil && look.refs.Covers(ref) && look.refs.Verify(ref, commit) == nil {
		return nil
	}
	// Only a good answer is taken from a look: a ref created since (a new
	// Checkpoint's) must not read as missing, and a bad answer, which an
	// Event reports, is rare enough to be checked afresh.
	return snapshot.Verify(ctx, workspace, ref, commit)
}

func (l *refLooks) look(ctx context.Context, now time.Time, maxAge time.Duration, workspace string) *refLook {
	l.mu.Lock()
	if l.looks == nil {
		l.looks = map[string]*refLook{}
	}
	look, ok := l.looks[workspace]
	if ok && now.Sub(look.at) < maxAge && now.Sub(look.at) >= 0 {
		l.mu.Unlock()
		<-look.done
		return look
	}
	for ws, old := range l.looks {
		if now.Sub(old.at) >= maxAge || now.Before(old.at) {
			delete(l.looks, ws)
		}
	}
	look = &refLook{at: now, done: make(chan struct{})}
	l.looks[workspace] = look
	l.mu.Unlock()

	read := l.read
	if read == nil {
		read = snapshot.ReadRefs
	}
	look.refs, look.err = read(ctx, workspace)
	if look.err != nil {
		l.mu.Lock()
		if l.looks[workspace] == look {
			delete(l.looks, workspace)
		}
		l.mu.Unlock()
	}
	close(look.done)
	return look
}

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

package recoveryfile

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// LiveTimeout bounds the git commands that find the files changed since
// the last checkpoint for RenderLive and LostSince.
const LiveTimeout = 10 * time.Second

// RenderLive renders the recovery file of the Hook at key as tether
// recover prints it: from the object, with its Checkpoints and, when the
// Hook's workspace is reachable from here, the files changed since the
// newest one and the lost work, from git. A git failure is a warning
// through warn, and the file then shows status.recovery's list. A nil
// evidence renders without a key (NoKeyEvidence).
func RenderLive(ctx context.Context, c client.Reader, key client.ObjectKey, evidence Evidence, warn func(string)) ([]byte, error) {
	hook := &v1.Hook{}
	if err := c.Get(ctx, key, hook); err != nil {
		return nil, err
	}
	summaries, err := ListCheckpoints(ctx, c, hook)
	if err != nil {
		return nil, err
	}
	opts := Options{Evidence: evidence, Checkpoints: summaries}
	if err := LiveChanges(ctx, hook, &opts, LiveTimeout); err != nil {
		warn(fmt.Sprintf("finding the files changed since checkpoint %s: %v", summaries[0].Name, err))
	}
	return Render(hook, opts), nil
}

// LostSince is the work lost from hook's workspace that a checkpoint
// older than latest still holds, so that a diff against latest is not
// read as "nothing was lost"; nil when none is, or when git cannot tell.
func LostSince(ctx context.Context, c client.Reader, hook *v1.Hook, latest string) *LostWork {
	summaries, err := ListCheckpoints(ctx, c, hook)
	if err != nil {
		return nil
	}
	opts := Options{Checkpoints: summaries}
	if LiveChanges(ctx, hook, &opts, LiveTimeout) != nil || opts.Lost == nil || opts.Lost.Checkpoint == latest {
		return nil
	}
	return opts.Lost
}

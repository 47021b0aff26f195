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

// Package top is `tether top`, the live view: Hooks, Workers and recent
// Warning Events from watches on any backend, as a Bubble Tea program
// whose keys act through the CLI verbs' own code, or as one plain frame.
package top

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/config"
)

// Kind is the kind of a selected object.
type Kind string

// The kinds a row holds.
const (
	// KindHook is a Hook row.
	KindHook Kind = "Hook"
	// KindWorker is a Worker row.
	KindWorker Kind = "Worker"
)

// Object names one row's object.
type Object struct {
	// Kind is Hook or Worker.
	Kind Kind
	// Key is its namespace and name.
	Key client.ObjectKey
}

// Actions carry out the keys. The CLI implements them with the code of
// tether describe, recover, resume, pause, unpause and worker restart, so
// that a key does exactly what the verb does, through the same writers.
// Each returns what the verb would print.
type Actions interface {
	// Describe is `tether describe` of obj.
	Describe(ctx context.Context, obj Object) (string, error)
	// Recover is `tether recover` of a Hook: its recovery file.
	Recover(ctx context.Context, hook client.ObjectKey) (string, error)
	// Resume is `tether resume` of a Hook.
	Resume(ctx context.Context, hook client.ObjectKey) (string, error)
	// Pause is `tether pause` of a Hook.
	Pause(ctx context.Context, hook client.ObjectKey) (string, error)
	// Unpause is `tether unpause` of a Hook.
	Unpause(ctx context.Context, hook client.ObjectKey) (string, error)
	// RestartWorker is `tether worker restart` of a Worker.
	RestartWorker(ctx context.Context, worker client.ObjectKey) (string, error)
}

// Options configure a view.
type Options struct {
	// Namespace is the namespace watched; empty when every namespace is.
	Namespace string
	// Config gives each Hook's effective staleAfter; nil means the
	// built-in defaults.
	Config *config.Config
	// Actions carry out the keys; Once needs none.
	Actions Actions
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (o *Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o *Options) config() *config.Config {
	if o.Config == nil {
		return config.Default("")
	}
	return o.Config
}

// syncPoll is how often WaitForSync looks at the watches.
const syncPoll = 10 * time.Millisecond

// WaitForSync waits until every watch has listed once. It fails with the
// watch's error when one fails before, and with ctx's error when ctx ends.
func (s *Source) WaitForSync(ctx context.Context) error {
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for {
		synced := true
		for _, inf := range s.informers {
			synced = synced && inf.HasSynced()
		}
		if synced {
			return nil
		}
		if _, err := s.LastError(); err != nil {
			return fmt.Errorf("watching: %w", err)
		}
		select {
		case <-ctx.Done():
			return errors.New("watching: the backend did not answer in time")
		case <-tick.C:
		}
	}
}

// Once writes one frame of what src lists, without colour and without
// keys, then stops the watches: `tether top --once`.
func Once(ctx context.Context, src *Source, opts Options, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src.Start(ctx)
	if err := src.WaitForSync(ctx); err != nil {
		return err
	}
	f := &frame{now: opts.now(), cfg: opts.config(), namespace: opts.Namespace, selected: -1}
	_, err := io.WriteString(w, Plain(f.render(src.Snapshot())))
	return err
}

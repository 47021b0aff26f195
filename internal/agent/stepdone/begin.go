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

package stepdone

import (
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/workspace/stepfiles"
)

// BeginOptions configure `step begin`.
type BeginOptions struct {
	// Client reads and writes the Hook. Required.
	Client client.Client
	// Key names the Hook. Required.
	Key client.ObjectKey
	// Write says who acts and records the Event.
	Write hookwrite.Options
	// WorkingOn is what the agent is doing.
	WorkingOn string
	// Files, when not nil, are the files the step touches, as the agent
	// named them; nil detects them with git in spec.workspace.
	Files []string
	// Out receives the warnings of the detection; nil discards them.
	Out io.Writer
}

// Begin moves the Hook to step_running for its current step, recording
// what is worked on, the step's base tree and the files it touches (those
// changed since the base, unless opts.Files names them). Detection is a
// convenience: when git cannot tell, Begin warns on opts.Out and records
// no files.
func Begin(ctx context.Context, opts BeginOptions) (*v1.Hook, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	hook, _, err := hookwrite.Transition(ctx, opts.Client, opts.Key, func(h *v1.Hook) (hookfsm.Input, error) {
		in := hookfsm.Input{Event: hookfsm.Begin, WorkingOn: opts.WorkingOn, Files: opts.Files}
		if c := changes(ctx, out, h); c != nil {
			in.BaseTree = c.Base
			if opts.Files == nil {
				in.Files = c.Files
			}
		}
		return in, nil
	}, opts.Write)
	return hook, err
}

// changes is the base of hook's current step and the files changed since
// (stepfiles.Begin), or nil without a spec.workspace or when git cannot
// tell.
func changes(ctx context.Context, out io.Writer, hook *v1.Hook) *stepfiles.Changes {
	if hook.Spec.Workspace == "" {
		return nil
	}
	c, err := stepfiles.Begin(ctx, hook)
	if err != nil {
		_, _ = fmt.Fprintf(out, "warning: detecting the files touched: %v\n", err)
		return nil
	}
	if c.Truncated {
		_, _ = fmt.Fprintf(out, "warning: more than %d changed files; recording the first %d\n", stepfiles.Max, stepfiles.Max)
	}
	return c
}

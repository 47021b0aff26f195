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

// Package pause pauses and unpauses Hooks: the control plane's PAUSE, set by
// a person with `tether pause` and cleared with `tether unpause`. A paused
// Hook has spec.suspend true, so the Hook reconciler makes no time-based
// transition (no stale detection), `claim --next` skips it and an agent's
// Stop hook lets the agent stop; the reason is kept in the
// v1alpha1.PauseReasonAnnotation annotation.
package pause

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
)

// Event reasons of pause and unpause.
const (
	// ReasonPaused reports a pause.
	ReasonPaused = "Paused"
	// ReasonUnpaused reports an unpause.
	ReasonUnpaused = "Unpaused"
)

// Options say who pauses and how it is reported.
type Options struct {
	// Actor names who pauses or unpauses, in the Event.
	Actor string
	// Reason is why the Hook is paused; empty records no reason. Unpause
	// ignores it.
	Reason string
	// Recorder records the Event of a change; nil records none.
	Recorder events.EventRecorder
	// Now is the clock of the unpaused-at annotation; nil means time.Now.
	Now func() time.Time
}

// Result is the outcome of a pause or unpause.
type Result struct {
	// Hook is the Hook as written, or as read when nothing changed.
	Hook *v1.Hook
	// Changed is false when the Hook already was as asked: paused with the
	// same reason, or not paused.
	Changed bool
}

// TerminalError refuses to pause or unpause a Hook in a terminal state:
// nothing runs any more, so there is nothing to pause.
type TerminalError struct {
	// Name is the Hook's name.
	Name string
	// State is its terminal state.
	State v1.HookState
}

// Error names the Hook and its state.
func (e *TerminalError) Error() string {
	return fmt.Sprintf("hook %s is %s (terminal): there is nothing to pause or unpause", e.Name, e.State)
}

// Pause sets spec.suspend and the pause-reason annotation of the Hook key
// (the annotation is removed when opts.Reason is empty), re-reading on a
// conflict. A Hook already paused with the same reason is left as it is.
func Pause(ctx context.Context, c client.Client, key client.ObjectKey, opts Options) (Result, error) {
	reason := oneLine(opts.Reason)
	res, err := update(ctx, c, key, func(h *v1.Hook) bool {
		if h.Spec.Suspend && h.Annotations[v1.PauseReasonAnnotation] == reason {
			return false
		}
		h.Spec.Suspend = true
		setReason(h, reason)
		delete(h.Annotations, v1.UnpausedAtAnnotation)
		return true
	})
	if err != nil || !res.Changed {
		return res, err
	}
	note := "paused by " + actorOr(opts.Actor)
	if reason != "" {
		note += ": " + reason
	}
	emit(opts.Recorder, res.Hook, ReasonPaused, "Pause", note)
	return res, nil
}

// Unpause clears spec.suspend and removes the pause-reason annotation of
// the Hook key, re-reading on a conflict. A Hook not paused is left as it is.
func Unpause(ctx context.Context, c client.Client, key client.ObjectKey, opts Options) (Result, error) {
	res, err := update(ctx, c, key, func(h *v1.Hook) bool {
		if _, ok := h.Annotations[v1.PauseReasonAnnotation]; !h.Spec.Suspend && !ok {
			return false
		}
		h.Spec.Suspend = false
		setReason(h, "")
		if h.Annotations == nil {
			h.Annotations = map[string]string{}
		}
		now := time.Now
		if opts.Now != nil {
			now = opts.Now
		}
		h.Annotations[v1.UnpausedAtAnnotation] = now().UTC().Format(time.RFC3339Nano)
		return true
	})
	if err != nil || !res.Changed {
		return res, err
	}
	emit(opts.Recorder, res.Hook, ReasonUnpaused, "Unpause", "unpaused by "+actorOr(opts.Actor))
	return res, nil
}

// Reason is why hook is paused, from its annotation; empty when it is not
// paused or no reason was given.
func Reason(hook *v1.Hook) string {
	if !hook.Spec.Suspend {
		return ""
	}
	return hook.Annotations[v1.PauseReasonAnnotation]
}

// update reads the Hook, lets mutate change it and writes it through
// hookwrite.Update. A terminal Hook is refused with a *TerminalError.
func update(ctx context.Context, c client.Client, key client.ObjectKey, mutate func(*v1.Hook) bool) (Result, error) {
	var res Result
	_, err := hookwrite.Update(ctx, c, key, func(h *v1.Hook) (bool, error) {
		if h.Status.State.IsTerminal() {
			return false, &TerminalError{Name: h.Name, State: h.Status.State}
		}
		res = Result{Hook: h, Changed: mutate(h)}
		return res.Changed, nil
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

func setReason(h *v1.Hook, reason string) {
	if reason == "" {
		delete(h.Annotations, v1.PauseReasonAnnotation)
		return
	}
	if h.Annotations == nil {
		h.Annotations = map[string]string{}
	}
	h.Annotations[v1.PauseReasonAnnotation] = reason
}

func emit(rec events.EventRecorder, h *v1.Hook, reason, action, note string) {
	if rec == nil {
		return
	}
	rec.Eventf(h, nil, corev1.EventTypeNormal, reason, action, "%s", note)
}

func actorOr(a string) string {
	if a == "" {
		return "unknown"
	}
	return a
}

// oneLine folds whitespace runs, newlines included, into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

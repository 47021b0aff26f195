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

// Package hookwrite performs Hook transitions: it reads a Hook, applies one
// event through the pure state machine in hookfsm, writes the status back
// with retry-on-conflict and records an Event on the Hook naming the actor.
//
// It is the one way to change a Hook's status, and Update the one way to
// change its spec (a claim, a pause). The agent verbs call Transition;
// tether repair calls RebuildStatus; UpdateStatus changes anything but
// status.state. The Hook reconciler, which applies its phases in memory and
// writes once per reconcile, calls Apply and Emit, the pure and the
// recording halves of the same step, so both follow one encoding.
package hookwrite

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/optimistic"
)

// Options say who performs a transition, how it is reported and when.
type Options struct {
	// Actor names who causes the transition in status.history and in the
	// Event: a CLI user, a Worker or a controller.
	Actor string
	// Recorder records the Event of the transition; nil records none.
	Recorder events.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Event is the Kubernetes Event that reports a transition.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type string
	// Reason is the CamelCase reason, one per hookfsm event (per crash type
	// for an interruption).
	Reason string
	// Action is what was done, in CamelCase: the hookfsm event.
	Action string
	// Note is the human-readable text; it names the actor.
	Note string
}

// Result is the outcome of one transition.
type Result struct {
	// From is the state before the transition.
	From v1.HookState
	// To is the state after it.
	To v1.HookState
	// Changed is false when the event left the status as it was, as a
	// repeated interruption does.
	Changed bool
	// Events report the transition, one per status.history entry it
	// appended, oldest first: a begin on a Hook no reconciler initialized
	// yet reports Initialized, then StepBegun. Empty when nothing worth an
	// Event happened (a heartbeat, or no change).
	Events []Event
}

// Event reasons of Hook transitions. Interruptions use the crash type's
// condition reason (see CrashReason).
const (
	// ReasonInitialized reports initialize.
	ReasonInitialized = "Initialized"
	// ReasonStepBegun reports begin.
	ReasonStepBegun = "StepBegun"
	// ReasonValidationStarted reports validate.
	ReasonValidationStarted = "ValidationStarted"
	// ReasonValidationPassed reports a pass that moves to the next step; a pass
	// of the last step is ReasonCompleted.
	ReasonValidationPassed = "ValidationPassed"
	// ReasonCompleted reports a pass of the last step.
	ReasonCompleted = "Completed"
	// ReasonValidationFailed reports fail_validation.
	ReasonValidationFailed = "ValidationFailed"
	// ReasonAwaitingHuman reports await.
	ReasonAwaitingHuman = v1.ReasonAwaitingHuman
	// ReasonResumed reports resume.
	ReasonResumed = "Resumed"
	// ReasonAbandoned reports abandon.
	ReasonAbandoned = v1.ReasonAbandoned
	// ReasonFailed reports fail.
	ReasonFailed = v1.ReasonFailed
)

var crashReasons = map[v1.CrashType]string{
	v1.CrashStaleHeartbeat:        v1.ReasonHeartbeatExpired,
	v1.CrashValidationInterrupted: v1.ReasonValidationInterrupted,
	v1.CrashAssigneeLost:          v1.ReasonAssigneeLost,
	v1.CrashContextCompacted:      v1.ReasonContextCompacted,
	v1.CrashManual:                v1.ReasonManualRecovery,
}

// CrashReason is the condition and Event reason of an interruption of crash
// type t; ReasonManualRecovery for a type it does not know.
func CrashReason(t v1.CrashType) string {
	if r, ok := crashReasons[t]; ok {
		return r
	}
	return v1.ReasonManualRecovery
}

// Apply applies in to hook in memory, as Transition does between its read
// and its write: it sets the input's time and actor from opts, runs
// hookfsm.Apply and, on success, replaces hook.Status. It returns what
// happened and the Event that reports it. A rejected event leaves hook as
// it was and returns hookfsm's error: also every event but a heartbeat on
// a Hook whose status disagrees with its history (hookfsm.Trust), which
// RebuildStatus puts right first.
func Apply(hook *v1.Hook, in hookfsm.Input, opts Options) (Result, error) {
	if err := hookfsm.Trust(hook, in.Event); err != nil {
		return Result{}, err
	}
	in.Now = metav1.NewTime(opts.now())
	in.Actor = opts.Actor
	from := hook.Status.State.OrInitializing()
	n := len(hook.Status.History) + int(hook.Status.HistoryDropped)
	st, err := hookfsm.Apply(hook, in)
	if err != nil {
		return Result{}, err
	}
	added := len(st.History) + int(st.HistoryDropped) - n
	hook.Status = *st
	res := Result{From: from, To: st.State.OrInitializing(), Changed: added > 0 || in.Event == hookfsm.Heartbeat}
	if added > len(st.History) {
		added = len(st.History)
	}
	for i := len(st.History) - added; i < len(st.History); i++ {
		res.Events = append(res.Events, eventOf(hook, in, st.History[i], i == len(st.History)-1))
	}
	return res, nil
}

// eventOf describes entry, a history entry that applying in just appended
// to hook; the newest also tells where the Hook is now (last).
func eventOf(hook *v1.Hook, in hookfsm.Input, entry v1.HistoryEntry, last bool) Event {
	ev, from, to := hookfsm.Event(entry.Event), entry.From.OrInitializing(), entry.To.OrInitializing()
	e := Event{Type: corev1.EventTypeNormal, Action: camel(ev)}
	switch ev {
	case hookfsm.Initialize:
		e.Reason = ReasonInitialized
	case hookfsm.Begin:
		e.Reason = ReasonStepBegun
	case hookfsm.Validate:
		e.Reason = ReasonValidationStarted
	case hookfsm.Pass:
		e.Reason = ReasonValidationPassed
		if to == v1.HookCompleted {
			e.Reason = ReasonCompleted
		}
	case hookfsm.FailValidation:
		e.Type, e.Reason = corev1.EventTypeWarning, ReasonValidationFailed
	case hookfsm.Await:
		e.Reason = ReasonAwaitingHuman
	case hookfsm.Resume:
		e.Reason = ReasonResumed
	case hookfsm.Interrupt:
		crash := v1.CrashManual
		if in.Crash != nil {
			crash = in.Crash.Type
		}
		e.Type, e.Reason = corev1.EventTypeWarning, CrashReason(crash)
	case hookfsm.Abandon:
		e.Type, e.Reason = corev1.EventTypeWarning, ReasonAbandoned
	case hookfsm.Fail:
		e.Type, e.Reason = corev1.EventTypeWarning, ReasonFailed
	}
	if to == v1.HookFailed {
		e.Type = corev1.EventTypeWarning
	}
	actor := entry.Actor
	if actor == "" {
		actor = "an unnamed actor"
	}
	e.Note = fmt.Sprintf("%s by %s: %s → %s", ev, actor, from, to)
	if last {
		e.Note += "; now " + hookfsm.Describe(hook)
	}
	if entry.Message != "" {
		e.Note += ": " + entry.Message
	}
	return e
}

// Emit records es about hook with rec, in order; it does nothing when rec
// is nil.
func Emit(rec events.EventRecorder, hook *v1.Hook, es ...Event) {
	if rec == nil {
		return
	}
	for _, e := range es {
		rec.Eventf(hook, nil, e.Type, e.Reason, e.Action, "%s", e.Note)
	}
}

// Build returns the input to apply to the Hook just read; an error
// refuses the transition and writes nothing.
type Build func(hook *v1.Hook) (hookfsm.Input, error)

// Transition reads the Hook key with c, applies the input that build
// returns for it, and writes the status under the resourceVersion it read,
// starting again from the read on a conflict. It records the transition's
// Event once the write succeeded and returns the Hook as written. A
// rejected event, or an error from build or the client, writes nothing
// and is returned as is.
func Transition(ctx context.Context, c client.Client, key client.ObjectKey, build Build, opts Options) (*v1.Hook, Result, error) {
	var res Result
	hook, err := readModifyWrite(ctx, c, key, func(h *v1.Hook) (bool, error) {
		in, err := build(h)
		if err != nil {
			return false, err
		}
		r, err := Apply(h, in, opts)
		if err != nil {
			return false, err
		}
		res = r
		return r.Changed, nil
	}, statusWrite)
	if err != nil {
		return nil, Result{}, err
	}
	Emit(opts.Recorder, hook, res.Events...)
	return hook, res, nil
}

// Mutate changes the Hook just read and reports whether it changed
// anything; an error writes nothing and is returned as it is.
type Mutate func(hook *v1.Hook) (changed bool, err error)

// StateChangeError refuses a status write that changes status.state
// outside Transition: a state changes only through the state machine,
// which also records the history entry and the Event of the change.
type StateChangeError struct {
	// Name is the Hook's name.
	Name string
	// From is the state the Hook was read in.
	From v1.HookState
	// To is the state the mutation set.
	To v1.HookState
}

// Error names the Hook and the change refused.
func (e *StateChangeError) Error() string {
	return fmt.Sprintf("hook %s: a status write may not change status.state (%s to %s) outside a transition", e.Name, e.From.OrInitializing(), e.To.OrInitializing())
}

// UpdateStatus is the one read-modify-write of a Hook's status outside a
// transition: it reads the Hook key with c, lets mutate change it, and
// writes the status under the resourceVersion it read, starting again from
// the read on a conflict. Nothing is written when mutate changes nothing;
// a mutation that changes status.state is refused with a
// *StateChangeError, since only Transition changes it. It returns the Hook
// as last read or written.
func UpdateStatus(ctx context.Context, c client.Client, key client.ObjectKey, mutate Mutate) (*v1.Hook, error) {
	return readModifyWrite(ctx, c, key, func(h *v1.Hook) (bool, error) {
		from := h.Status.State
		changed, err := mutate(h)
		if err == nil && h.Status.State != from {
			err = &StateChangeError{Name: h.Name, From: from, To: h.Status.State}
		}
		return changed, err
	}, statusWrite)
}

// Update is the one read-modify-write of a Hook's spec and metadata (a
// claim, a pause): it reads the Hook key with c, lets mutate change it, and
// writes it under the resourceVersion it read, starting again from the read
// when the write loses to another change. Nothing is written when mutate
// changes nothing; mutate's own errors, a Conflict among them, end it as
// they are. It returns the Hook as last read or written.
func Update(ctx context.Context, c client.Client, key client.ObjectKey, mutate Mutate) (*v1.Hook, error) {
	return readModifyWrite(ctx, c, key, mutate, func(ctx context.Context, c client.Client, h *v1.Hook) error {
		return c.Update(ctx, h)
	})
}

func statusWrite(ctx context.Context, c client.Client, h *v1.Hook) error {
	return c.Status().Update(ctx, h)
}

// mutateError carries an error of the mutation through the retry, which
// would otherwise take a Conflict the mutation decided for a lost write.
type mutateError struct{ err error }

func (e *mutateError) Error() string { return e.err.Error() }

func readModifyWrite(ctx context.Context, c client.Client, key client.ObjectKey, mutate Mutate, write func(context.Context, client.Client, *v1.Hook) error) (*v1.Hook, error) {
	var hook *v1.Hook
	err := optimistic.RetryOnConflict(func() error {
		h := &v1.Hook{}
		if err := c.Get(ctx, key, h); err != nil {
			return err
		}
		changed, err := mutate(h)
		if err != nil {
			return &mutateError{err}
		}
		if changed {
			if err := write(ctx, c, h); err != nil {
				return err
			}
		}
		hook = h
		return nil
	})
	var me *mutateError
	if errors.As(err, &me) {
		return nil, me.err
	}
	if err != nil {
		return nil, err
	}
	return hook, nil
}

// Input is a Build that always returns in.
func Input(in hookfsm.Input) Build {
	return func(*v1.Hook) (hookfsm.Input, error) { return in, nil }
}

// camel turns an event such as fail_validation into FailValidation, the
// CamelCase an Event's action takes.
func camel(e hookfsm.Event) string {
	out := make([]byte, 0, len(e))
	upper := true
	for i := 0; i < len(e); i++ {
		c := e[i]
		if c == '_' {
			upper = true
			continue
		}
		if upper && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper = false
		out = append(out, c)
	}
	return string(out)
}

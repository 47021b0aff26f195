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
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// hookScope carries one reconcile of one Hook through its phases.
type hookScope struct {
	hook *v1.Hook
	orig *v1.HookStatus
	now  time.Time
	eff  config.Effective
	// invalid is why the state machine rejected the status, if it did.
	invalid error
	// requeueAt is when the Hook must be looked at again; zero for never.
	requeueAt time.Time
	// events are recorded once the status update that they report succeeds.
	events []pendingEvent
	// transitioned is true when this reconcile changed the state machine's
	// part of the status, which the recovery file renders.
	transitioned bool
	// staleDue is when the heartbeat that this reconcile found stale fell
	// due; zero when it found none.
	staleDue time.Time
	// history lists the status fields that disagree with the history.
	history []hookfsm.Disagreement
	// look is the interval reconciler's look this reconcile stores; nil
	// for none.
	look *intervalLook
	// report is the receipt verification this reconcile made, of the
	// evidence whose evidenceDigest is reportDigest; nil when it made none.
	// The recovery file renders it instead of verifying the same receipts
	// again.
	report       *receipts.Report
	reportDigest [sha256.Size]byte
}

type pendingEvent = hookwrite.Event

// apply runs the state machine on the scope's Hook through hookwrite, the
// one way a transition is made, and keeps the result; its Event is
// recorded once the status is written. A rejection (hookfsm.ErrRejected)
// is kept in s.invalid, for the Ready condition, and is no error. It
// returns the last of its Events, so a phase can say more in its note, or
// nil.
func (s *hookScope) apply(in hookfsm.Input) (*hookwrite.Event, error) {
	res, err := hookwrite.Apply(s.hook, in, hookwrite.Options{Actor: HookControllerName, Now: func() time.Time { return s.now }})
	if err != nil {
		var mismatch *hookfsm.StatusError
		if errors.As(err, &mismatch) {
			// A status that disagrees with its history drives no
			// transition; the history phase reports it (HistoryConsistent,
			// Ready), and tether repair puts it right.
			return nil, nil
		}
		if errors.Is(err, hookfsm.ErrRejected) {
			// No retry changes the state machine's answer on this Hook:
			// the Ready condition says why, and the Hook's next change
			// reconciles it again.
			s.invalid = err
			return nil, nil
		}
		return nil, err
	}
	if !res.Changed {
		return nil, nil
	}
	s.transitioned = true
	if len(res.Events) == 0 {
		return nil, nil
	}
	s.events = append(s.events, res.Events...)
	return &s.events[len(s.events)-1], nil
}

func (s *hookScope) requeue(at time.Time) {
	if s.requeueAt.IsZero() || at.Before(s.requeueAt) {
		s.requeueAt = at
	}
}

// reconcileInitialize initializes a Hook no one has touched yet.
func (r *HookReconciler) reconcileInitialize(_ context.Context, s *hookScope) error {
	if st := s.hook.Status.State; st != "" && st != v1.HookInitializing {
		return nil
	}
	_, err := s.apply(hookfsm.Input{Event: hookfsm.Initialize})
	return err
}

// staleEligible reports whether an agent is expected to heartbeat on hook
// (hookfsm.HeartbeatExpected, which tether top shares).
func staleEligible(hook *v1.Hook) bool {
	return hookfsm.HeartbeatExpected(hook)
}

// heartbeatDue is when hook's heartbeat goes stale: staleAfter after the
// later of the heartbeat and the end of the last pause (no agent
// heartbeats while paused). A malformed unpaused-at annotation is ignored.
func heartbeatDue(hook *v1.Hook, staleAfter time.Duration) time.Time {
	from := hook.Status.LastHeartbeat.Time
	if at, err := time.Parse(time.RFC3339Nano, hook.Annotations[v1.UnpausedAtAnnotation]); err == nil && at.After(from) {
		from = at
	}
	return from.Add(staleAfter)
}

// reconcileStale moves a working Hook whose heartbeat is overdue to
// recovering, or schedules the next look at the due time. A suspended
// Hook is never moved.
func (r *HookReconciler) reconcileStale(_ context.Context, s *hookScope) error {
	hook := s.hook
	if s.invalid != nil || !staleEligible(hook) {
		return nil
	}
	due := heartbeatDue(hook, s.eff.StaleAfter)
	if s.now.Before(due) {
		s.requeue(due)
		return nil
	}
	if hook.Spec.Suspend {
		return nil
	}
	last := hook.Status.State
	crash := v1.CrashStaleHeartbeat
	if last == v1.HookStepValidating {
		crash = v1.CrashValidationInterrupted
	}
	heartbeat := hook.Status.LastHeartbeat.UTC().Format(time.RFC3339)
	ev, err := s.apply(hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: crash}})
	if err != nil || ev == nil {
		return err
	}
	s.staleDue = due
	ev.Note = fmt.Sprintf("no heartbeat since %s (staleAfter %s) in %s: moved to recovering by %s. Next: %s",
		heartbeat, s.eff.StaleAfter, last, HookControllerName, hook.Status.Recovery.RecommendedAction)
	return nil
}

// reconcileHistory checks the Hook's state, step results and counters
// against the replay of its history (hookfsm.CheckHistory) and keeps the
// HistoryConsistent condition. A disagreement, such as a status edited by
// hand, is reported once with a Warning Event naming the fields.
func (r *HookReconciler) reconcileHistory(_ context.Context, s *hookScope) error {
	ds := hookfsm.CheckHistory(s.hook)
	s.history = ds
	cond := metav1.Condition{
		Type: v1.ConditionHistoryConsistent, Status: metav1.ConditionTrue, Reason: v1.ReasonHistoryMatches,
		Message:            "state, step results and counters agree with the replay of the history",
		ObservedGeneration: s.hook.Generation, LastTransitionTime: metav1.NewTime(s.now),
	}
	if len(ds) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, v1.ReasonHistoryMismatch
		cond.Message = fmt.Sprintf("%s disagree with the history and are not to be trusted: %s",
			strings.Join(hookfsm.Fields(ds), ", "), hookfsm.Summary(ds))
		if len(cond.Message) > maxConditionMessage {
			cond.Message = cond.Message[:maxConditionMessage-3] + "..."
		}
		old := meta.FindStatusCondition(s.orig.Conditions, v1.ConditionHistoryConsistent)
		if old == nil || old.Status != metav1.ConditionFalse || old.Message != cond.Message {
			s.events = append(s.events, pendingEvent{Type: corev1.EventTypeWarning, Reason: v1.ReasonHistoryMismatch,
				Action: "CheckHistory", Note: cond.Message})
		}
	}
	meta.SetStatusCondition(&s.hook.Status.Conditions, cond)
	return nil
}

// maxConditionMessage is the schema's bound on a condition's message.
const maxConditionMessage = 32768

// reconcileConditions sets Stale and Recovering from the status and
// summarises them in Ready, each with the Hook's generation.
func (r *HookReconciler) reconcileConditions(_ context.Context, s *hookScope) error {
	hook, st := s.hook, &s.hook.Status
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: typ, Status: status, Reason: reason, Message: msg,
			ObservedGeneration: hook.Generation, LastTransitionTime: metav1.NewTime(s.now),
		})
	}

	stale := false
	switch {
	case staleEligible(hook) || (st.State == v1.HookRecovering && st.LastHeartbeat != nil):
		due := heartbeatDue(hook, s.eff.StaleAfter)
		if s.now.Before(due) {
			// The message leaves out the heartbeat's time, so that a
			// heartbeat does not cost a second write.
			set(v1.ConditionStale, metav1.ConditionFalse, v1.ReasonHeartbeatFresh,
				fmt.Sprintf("heartbeat within staleAfter (%s)", s.eff.StaleAfter))
			s.requeue(due)
		} else {
			stale = true
			set(v1.ConditionStale, metav1.ConditionTrue, v1.ReasonHeartbeatExpired,
				fmt.Sprintf("no heartbeat since %s (staleAfter %s)", st.LastHeartbeat.UTC().Format(time.RFC3339), s.eff.StaleAfter))
		}
	default:
		set(v1.ConditionStale, metav1.ConditionFalse, v1.ReasonNoHeartbeatExpected, "no agent is expected to heartbeat in state "+string(st.State.OrInitializing()))
	}

	recoveringReason := ""
	if st.State == v1.HookRecovering {
		recoveringReason = v1.ReasonManualRecovery
		msg := "recovering"
		if rec := st.Recovery; rec != nil {
			recoveringReason = hookwrite.CrashReason(rec.CrashType)
			msg = fmt.Sprintf("%s in %s; next: %s", rec.CrashType, rec.LastState, rec.RecommendedAction)
		}
		set(v1.ConditionRecovering, metav1.ConditionTrue, recoveringReason, msg)
	} else {
		set(v1.ConditionRecovering, metav1.ConditionFalse, v1.ReasonNotRecovering, "")
	}

	status, reason, msg := metav1.ConditionFalse, "", hookfsm.Describe(hook)
	switch {
	case s.invalid != nil:
		reason, msg = v1.ReasonInvalidStatus, s.invalid.Error()
	case len(s.history) > 0:
		reason, msg = v1.ReasonHistoryMismatch, "the status disagrees with its history: "+strings.Join(hookfsm.Fields(s.history), ", ")
	case st.State == v1.HookCompleted:
		status, reason, msg = metav1.ConditionTrue, v1.ReasonSucceeded, fmt.Sprintf("all %d steps passed", len(hook.Spec.Steps))
	case st.State == v1.HookFailed:
		reason = v1.ReasonFailed
	case st.State == v1.HookAbandoned:
		reason = v1.ReasonAbandoned
	case hook.Spec.Suspend:
		reason, msg = v1.ReasonSuspended, "spec.suspend is true: no time-based transitions; "+msg
	case st.State == v1.HookRecovering:
		reason = recoveringReason
	case st.State == v1.HookAwaitingHuman:
		reason = v1.ReasonAwaitingHuman
	case stale:
		reason = v1.ReasonHeartbeatExpired
	default:
		status, reason = metav1.ConditionTrue, v1.ReasonProgressing
	}
	set(v1.ConditionReady, status, reason, msg)
	return nil
}

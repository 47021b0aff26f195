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

package hookfsm

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// ErrHistoryDamaged is what Rebuild's refusal is (errors.Is): the history
// itself cannot be replayed, or lost entries that it did not count, so it
// proves nothing a status could be rebuilt from.
var ErrHistoryDamaged = errors.New("the history itself is damaged")

// HistoryError refuses to rebuild a status from a history that is itself
// damaged.
type HistoryError struct {
	// Hook is the Hook's name.
	Hook string
	// Field is status.history or status.historyDropped.
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error names the Hook, the field and why no status can be rebuilt.
func (e *HistoryError) Error() string {
	return fmt.Sprintf("hook %q: %s: %s: %s, so the status cannot be rebuilt from it", e.Hook, e.Field, ErrHistoryDamaged, e.Reason)
}

// Is makes errors.Is(err, ErrHistoryDamaged) and errors.Is(err, ErrRejected) true.
func (e *HistoryError) Is(target error) bool {
	return target == ErrHistoryDamaged || target == ErrRejected
}

// Rebuild returns hook's status with every field CheckHistory reports set
// to what the replay of the history says, and the disagreements it
// corrected; a status that agrees with its history comes back unchanged,
// with none, so Rebuild is idempotent. It never modifies hook, and never
// touches the history.
//
// What a corrected field implies follows it: status.terminalAt is cleared
// when the state is not terminal (and set from the last entry when it is);
// status.recovery is cleared unless the state is recovering or
// awaiting_human; a missing current step is made from the replay (a
// current step at the wrong index keeps what it records of the work); a
// step no longer passed loses its completion time and files; a step that
// the history never began is pending again, with nothing recorded; a step
// the history passed is passed. Other fields (receipts, agent session,
// checkpoints) are kept as they are.
//
// A history that Fold cannot replay, or that lost entries it did not
// count (a status.historyDropped disagreement on a history that does not
// start at the first transition), is refused with a *HistoryError.
func Rebuild(hook *v1.Hook) (*v1.HookStatus, []Disagreement, error) {
	st := hook.Status.DeepCopy()
	ds := CheckHistory(hook)
	if len(ds) == 0 {
		return st, nil, nil
	}
	state, step, attempt, err := Fold(st.History)
	if err != nil {
		return nil, ds, &HistoryError{Hook: hook.Name, Field: "status.history", Reason: err.Error()}
	}
	for _, d := range ds {
		if d.Field != "status.historyDropped" {
			continue
		}
		if len(st.History) == 0 || st.History[0].From.OrInitializing() != v1.HookInitializing {
			return nil, ds, &HistoryError{Hook: hook.Name, Field: d.Field, Reason: d.String()}
		}
		st.HistoryDropped = 0
	}
	r := rebuilder{hook: hook, st: st, state: state, step: step, attempt: attempt}
	r.setState()
	r.currentStep()
	r.steps()
	r.passedAttempts()
	return st, ds, nil
}

// rebuilder carries one Rebuild: the status it corrects and the replay's
// position.
type rebuilder struct {
	hook          *v1.Hook
	st            *v1.HookStatus
	state         v1.HookState
	step, attempt int32
}

// notBegun reports whether the replay has no current step: before
// initialization, or abandoned or failed before it.
func (r *rebuilder) notBegun() bool {
	return r.state == v1.HookInitializing || r.attempt == 0
}

// lastTime is the time of the newest history entry.
func (r *rebuilder) lastTime() *metav1.Time {
	if n := len(r.st.History); n > 0 {
		t := r.st.History[n-1].Time
		return &t
	}
	return nil
}

func (r *rebuilder) setState() {
	st := r.st
	if st.State.OrInitializing() == r.state {
		return
	}
	st.State = r.state
	switch {
	case !r.state.IsTerminal():
		st.TerminalAt = nil
	case st.TerminalAt == nil:
		st.TerminalAt = r.lastTime()
	}
	if r.state != v1.HookRecovering && r.state != v1.HookAwaitingHuman {
		st.Recovery = nil
	}
}

func (r *rebuilder) currentStep() {
	st := r.st
	switch cs := st.CurrentStep; {
	case r.notBegun():
		st.CurrentStep = nil
	case cs == nil:
		st.CurrentStep = &v1.CurrentStep{Index: r.step, Name: r.stepName(int(r.step)), Attempt: r.attempt}
	default:
		if cs.Index != r.step {
			cs.Index, cs.Name = r.step, r.stepName(int(r.step))
		}
		cs.Attempt = r.attempt
	}
}

// stepName is the spec's name of step i, else its result's.
func (r *rebuilder) stepName(i int) string {
	if i >= 0 && i < len(r.hook.Spec.Steps) {
		return r.hook.Spec.Steps[i].Name
	}
	if i >= 0 && i < len(r.st.Steps) {
		return r.st.Steps[i].Name
	}
	return ""
}

func (r *rebuilder) steps() {
	for i := range r.st.Steps {
		res := &r.st.Steps[i]
		switch {
		case r.notBegun() || int32(i) > r.step:
			if res.Phase == v1.StepPassed || res.Phase == v1.StepFailed {
				*res = v1.StepResult{Name: res.Name, Phase: v1.StepPending}
			}
		case int32(i) < r.step:
			r.setPhase(res, v1.StepPassed)
		default:
			want, ok := phaseOf[r.state]
			if !ok && (res.Phase == v1.StepPassed || res.Phase == v1.StepFailed) {
				want, ok = r.phaseBefore(), true
			}
			if ok {
				r.setPhase(res, want)
			}
			if res.Phase == v1.StepRunning || res.Phase == v1.StepValidating {
				res.Attempts = r.attempt
			}
		}
	}
}

// setPhase moves res to phase p: a pass gets a completion time (the
// newest entry's) if it has none; a step no longer passed loses what only
// a pass records.
func (r *rebuilder) setPhase(res *v1.StepResult, p v1.StepPhase) {
	if res.Phase == p {
		return
	}
	if res.Phase == v1.StepPassed {
		res.CompletedAt, res.FilesTouched = nil, nil
	}
	res.Phase = p
	if p == v1.StepPassed && res.CompletedAt == nil {
		res.CompletedAt = r.lastTime()
	}
}

// phaseBefore is the phase the current step had when the Hook left the
// working states (for awaiting_human, recovering and abandoned, which keep
// it): the newest working state the history shows at the current step, as
// an entry's To or From; pending when the retained history does not say.
func (r *rebuilder) phaseBefore() v1.StepPhase {
	h := r.st.History
	for k := len(h) - 1; k >= 0; k-- {
		e := &h[k]
		if e.Step != r.step {
			break
		}
		for _, s := range []v1.HookState{e.To, e.From} {
			switch s {
			case v1.HookStepRunning:
				return v1.StepRunning
			case v1.HookStepValidating:
				return v1.StepValidating
			case v1.HookStepPending:
				return v1.StepPending
			}
		}
	}
	return v1.StepPending
}

// passedAttempts gives every passed step whose pass the history holds the
// attempt it passed in, as CheckHistory expects.
func (r *rebuilder) passedAttempts() {
	st := r.st
	for k := 1; k < len(st.History); k++ {
		e, before := &st.History[k], &st.History[k-1]
		if e.Event != string(Pass) {
			continue
		}
		if i := before.Step; i >= 0 && int(i) < len(st.Steps) && st.Steps[i].Phase == v1.StepPassed {
			st.Steps[i].Attempts = before.Attempt
		}
	}
}

// StatusError refuses a transition of a Hook whose status disagrees with
// its history while the history itself is sound: the transition would act
// on fields no transition wrote, and append an entry the replay of the
// history cannot follow. Rebuild (tether repair) puts the status right
// first.
type StatusError struct {
	// Hook is the Hook's name.
	Hook string
	// Namespace is the Hook's namespace, for the command the error names.
	Namespace string
	// Event is the refused event.
	Event Event
	// Disagreements are the fields that disagree with the history.
	Disagreements []Disagreement
}

// Error names the verb, the Hook, what disagrees and the way back.
func (e *StatusError) Error() string {
	line := "tether repair " + e.Hook
	if e.Namespace != "" && e.Namespace != "default" {
		line += " -n " + e.Namespace
	}
	return fmt.Sprintf("cannot %q hook %q: its status disagrees with its history (%s); a person checks the work and runs %q, which rebuilds the status from the history",
		e.Event.Verb(), e.Hook, Summary(e.Disagreements), line)
}

// Is makes errors.Is(err, ErrRejected) true.
func (e *StatusError) Is(target error) bool { return target == ErrRejected }

// Trust refuses event ev on hook with a *StatusError when the status
// disagrees with its history and Rebuild can rebuild it. It allows a
// heartbeat, which changes no state; a status that agrees; and a damaged
// history, which no rebuild can put right and which a person may still
// give up (fail, abandon), as before.
func Trust(hook *v1.Hook, ev Event) error {
	if ev == Heartbeat {
		return nil
	}
	_, ds, err := Rebuild(hook)
	if err != nil || len(ds) == 0 {
		return nil
	}
	return &StatusError{Hook: hook.Name, Namespace: hook.Namespace, Event: ev, Disagreements: ds}
}

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
	"fmt"
	"strings"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// Disagreement is one field of a Hook's status that its history does not
// explain.
type Disagreement struct {
	// Field is the status field's path, such as "status.state".
	Field string
	// Recorded is what the status says.
	Recorded string
	// Replayed is what the replay of the history says, or why there is no
	// replay.
	Replayed string
}

// String says, for example, `status.state is completed; history says step_running`.
func (d Disagreement) String() string {
	return fmt.Sprintf("%s is %s; history says %s", d.Field, d.Recorded, d.Replayed)
}

// Fields lists the fields of ds, in order, without repeats.
func Fields(ds []Disagreement) []string {
	var out []string
	for _, d := range ds {
		if len(out) == 0 || out[len(out)-1] != d.Field {
			out = append(out, d.Field)
		}
	}
	return out
}

// Summary is one line naming every disagreement.
func Summary(ds []Disagreement) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

// CheckHistory checks a Hook's state, current step, attempt and per-step
// results against the replay of its history (Fold) and returns the
// fields that disagree; none for a status that Apply wrote. A history
// that no transition explains is itself a disagreement.
//
// What the replay determines is checked, nothing more: the state, the
// current step's index and attempt, every step before the current one
// having passed, the current step's phase where the state implies it (and
// its attempt count while it runs or validates), no later step having
// passed or failed, the attempt count of each passed step whose pass is
// in the history, and status.historyDropped against where the history
// starts. Results are compared by position in status.steps.
//
// A history truncated to its newest entries (status.historyDropped > 0)
// still checks all of that except the attempt counts of steps that passed
// before its first entry; a history that lost entries without counting
// them is a disagreement of status.historyDropped.
func CheckHistory(hook *v1.Hook) (ds []Disagreement) {
	st := &hook.Status
	state, step, attempt, err := Fold(st.History)
	if err != nil {
		return []Disagreement{{Field: "status.history", Recorded: "not a sequence of transitions", Replayed: err.Error()}}
	}
	add := func(field, recorded, replayed string) {
		ds = append(ds, Disagreement{Field: field, Recorded: recorded, Replayed: replayed})
	}
	checkDropped(st, add)
	defer checkPassedAttempts(st, add)
	if got := st.State.OrInitializing(); got != state {
		add("status.state", string(got), string(state))
	}
	cs := st.CurrentStep
	switch {
	case state == v1.HookInitializing && cs != nil:
		add("status.currentStep", fmt.Sprintf("step %d, attempt %d", cs.Index+1, cs.Attempt), "not initialized")
	case state == v1.HookInitializing:
	case cs == nil && attempt == 0:
		// Abandoned or failed before initialization: there is no step.
		state = v1.HookInitializing
	case cs == nil:
		add("status.currentStep", "missing", fmt.Sprintf("step %d, attempt %d", step+1, attempt))
	default:
		if cs.Index != step {
			add("status.currentStep.index", fmt.Sprint(cs.Index), fmt.Sprint(step))
		}
		if cs.Attempt != attempt {
			add("status.currentStep.attempt", fmt.Sprint(cs.Attempt), fmt.Sprint(attempt))
		}
	}
	if state == v1.HookInitializing {
		for i := range st.Steps {
			if p := st.Steps[i].Phase; p == v1.StepPassed || p == v1.StepFailed {
				add(fmt.Sprintf("status.steps[%d].phase", i), string(p), "no step has begun")
			}
		}
		return ds
	}
	for i := range st.Steps {
		r := &st.Steps[i]
		field := fmt.Sprintf("status.steps[%d].phase", i)
		switch {
		case int32(i) < step:
			if r.Phase != v1.StepPassed {
				add(field, string(r.Phase), fmt.Sprintf("%s: the task went past step %d", v1.StepPassed, i+1))
			}
		case int32(i) > step:
			if r.Phase == v1.StepPassed || r.Phase == v1.StepFailed {
				add(field, string(r.Phase), fmt.Sprintf("not begun: the task is at step %d", step+1))
			}
		default:
			if want, ok := phaseOf[state]; ok && r.Phase != want {
				add(field, string(r.Phase), string(want)+" in "+string(state))
			}
			if open[state] && (r.Phase == v1.StepPassed || r.Phase == v1.StepFailed) {
				add(field, string(r.Phase), "unfinished in "+string(state))
			}
			if (r.Phase == v1.StepRunning || r.Phase == v1.StepValidating) && r.Attempts != attempt {
				add(fmt.Sprintf("status.steps[%d].attempts", i), fmt.Sprint(r.Attempts), fmt.Sprint(attempt))
			}
		}
	}
	return ds
}

// checkDropped checks status.historyDropped against the history: only
// truncation drops entries, and it drops the oldest, keeping exactly
// v1alpha1.HookHistoryLimit; so a history that starts at the first
// transition (from initializing) dropped none, and one that does not
// start there dropped some.
func checkDropped(st *v1.HookStatus, add func(field, recorded, replayed string)) {
	n, dropped := len(st.History), st.HistoryDropped
	switch {
	case n == 0 && dropped > 0:
		add("status.historyDropped", fmt.Sprint(dropped), "0: the history is empty")
	case n == 0:
	case dropped < 0:
		add("status.historyDropped", fmt.Sprint(dropped), "a count, never negative")
	case dropped > 0 && st.History[0].From.OrInitializing() == v1.HookInitializing:
		add("status.historyDropped", fmt.Sprint(dropped), "0: the history starts at the first transition")
	case dropped > 0 && n != v1.HookHistoryLimit:
		add("status.historyDropped", fmt.Sprint(dropped),
			fmt.Sprintf("0, or %d entries kept: truncation keeps the newest %d, and %d are left", v1.HookHistoryLimit, v1.HookHistoryLimit, n))
	case dropped == 0 && st.History[0].From.OrInitializing() != v1.HookInitializing:
		add("status.historyDropped", "0", fmt.Sprintf("more: the history starts at a later transition (%s from %s), so entries were removed", st.History[0].Event, st.History[0].From))
	}
}

// checkPassedAttempts checks the attempt count of every step whose pass
// the history holds: a passed step keeps the attempt it passed in, which
// is the attempt of the entry before the pass (step_validating).
func checkPassedAttempts(st *v1.HookStatus, add func(field, recorded, replayed string)) {
	for k := 1; k < len(st.History); k++ {
		e, before := &st.History[k], &st.History[k-1]
		if e.Event != string(Pass) {
			continue
		}
		i := before.Step
		if i < 0 || int(i) >= len(st.Steps) {
			continue
		}
		if r := &st.Steps[i]; r.Phase == v1.StepPassed && r.Attempts != before.Attempt {
			add(fmt.Sprintf("status.steps[%d].attempts", i), fmt.Sprint(r.Attempts), fmt.Sprintf("%d: the step passed in attempt %d (history[%d])", before.Attempt, before.Attempt, k))
		}
	}
}

// phaseOf is the current step's phase that a state implies. Awaiting,
// recovering and abandoned keep the phase they came from.
var phaseOf = map[v1.HookState]v1.StepPhase{
	v1.HookStepPending:    v1.StepPending,
	v1.HookStepRunning:    v1.StepRunning,
	v1.HookStepValidating: v1.StepValidating,
	v1.HookCompleted:      v1.StepPassed,
	v1.HookFailed:         v1.StepFailed,
}

// open lists the states whose current step cannot have finished.
var open = map[v1.HookState]bool{v1.HookAwaitingHuman: true, v1.HookRecovering: true, v1.HookAbandoned: true}

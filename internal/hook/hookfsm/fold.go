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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// Fold replays history, oldest entry first, and returns the state, step
// index and attempt it ends in. For a history Apply wrote, they equal
// status.state, status.currentStep.index and status.currentStep.attempt
// (0 and 0 before initialization). It returns an error naming the first
// entry that no transition explains: one whose From is not where the
// previous entry ended, whose event is not valid from its From, or whose
// To, step or attempt that event cannot produce.
//
// Each entry is replayed through Apply itself, so the transition table has
// one encoding. What Apply would read from the spec or from entries no
// longer in the history (is this the last step, are the attempts used up,
// which state did the interruption or the wait start in) is not known, so
// the replay tries each possibility and accepts the entry when one of them
// produces it.
//
// History keeps only its newest entries. The replay starts in the first
// retained entry's From state. When that is initializing, the step and
// attempt before it are known (0 and 0) and the entry is checked like any
// other; otherwise the first entry's step and attempt are taken as
// recorded, and only its To is checked.
func Fold(history []v1.HistoryEntry) (v1.HookState, int32, int32, error) {
	f := folder{state: v1.HookInitializing}
	for i := range history {
		if err := f.replay(i, &history[i]); err != nil {
			return "", 0, 0, err
		}
	}
	return f.state, f.step, f.attempt, nil
}

// folder is the replay's position and the context later entries need.
type folder struct {
	state         v1.HookState
	step, attempt int32
	// awaitedFrom and interruptedIn are the From of the newest await and
	// interrupt entries; empty when no retained entry says.
	awaitedFrom, interruptedIn v1.HookState

	// scratch and the fields after it are the Hook each replayed entry is
	// applied to, reused.
	scratch  v1.Hook
	results  [2]v1.StepResult
	current  v1.CurrentStep
	awaited  [1]v1.HistoryEntry
	recovery v1.RecoveryStatus
}

func (f *folder) replay(i int, e *v1.HistoryEntry) error {
	from, ev := e.From.OrInitializing(), Event(e.Event)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("history[%d] (%s from %s): %s", i, e.Event, from, fmt.Sprintf(format, args...))
	}
	if i > 0 && from != f.state {
		return fail("the previous entry ended in %s", f.state)
	}
	if !contains(recorded[ev], from) {
		return fail("not a transition")
	}
	adopt := i == 0 && from != v1.HookInitializing
	if adopt {
		f.state, f.step, f.attempt = from, e.Step, max(e.Attempt, 1)
	}
	matched := false
	in := replayInput(ev, e)
	for _, c := range f.choices(from, ev) {
		st, err := Apply(f.hookAt(from, c), in)
		if err != nil || len(st.History) == 0 {
			continue
		}
		got := st.History[len(st.History)-1]
		if got.To == e.To && (adopt || f.step+got.Step == e.Step && got.Attempt == e.Attempt) {
			matched = true
			break
		}
	}
	if !matched {
		return fail("cannot end in %s at step %d, attempt %d", e.To, e.Step, e.Attempt)
	}
	switch ev {
	case Await:
		f.awaitedFrom = from
	case Interrupt:
		f.interruptedIn = from
	}
	f.state, f.step, f.attempt = e.To, e.Step, e.Attempt
	return nil
}

// replayTime stands in for an entry's time when a hand edit removed it:
// Apply requires one, and no outcome depends on it.
var replayTime = metav1.Unix(1, 0)

// replayInput is the input that makes Apply record event ev as entry e did.
func replayInput(ev Event, e *v1.HistoryEntry) Input {
	in := Input{Event: ev, Now: e.Time, Actor: "replay", Message: "replay"}
	if in.Now.IsZero() {
		in.Now = replayTime
	}
	if ev == Interrupt {
		in.Crash = &Crash{Type: v1.CrashManual, RecommendedAction: "replay"}
	}
	return in
}

// choice is one way the unknown spec and dropped history could decide an
// event: whether the current step is the last, whether its attempts are used
// up, and where the wait or the interruption began.
type choice struct {
	lastStep, exhausted        bool
	awaitedFrom, interruptedIn v1.HookState
}

// choices lists the ways that matter for event ev from state from.
func (f *folder) choices(from v1.HookState, ev Event) []choice {
	lastStep := []bool{false}
	if ev == Pass {
		lastStep = append(lastStep, true)
	}
	exhausted := []bool{false}
	if ev == FailValidation || ev == Resume {
		exhausted = append(exhausted, true)
	}
	awaited := []v1.HookState{f.awaitedFrom}
	if from == v1.HookAwaitingHuman && f.awaitedFrom == "" {
		awaited = recorded[Await]
	}
	interrupted := []v1.HookState{f.interruptedIn}
	if f.interruptedIn == "" && (from == v1.HookRecovering || from == v1.HookAwaitingHuman) {
		interrupted = recorded[Interrupt]
	}
	var out []choice
	for _, last := range lastStep {
		for _, used := range exhausted {
			for _, a := range awaited {
				for _, in := range interrupted {
					out = append(out, choice{lastStep: last, exhausted: used, awaitedFrom: a, interruptedIn: in})
				}
			}
		}
	}
	return out
}

// hookAt sets f.scratch to a Hook whose status stands at the folder's
// attempt in state from, with the context Apply reads for c. No transition
// depends on the steps before the current one, so the current step is the
// Hook's first and Apply's step indexes are relative to the folder's. Apply
// never modifies its Hook, so one is reused.
func (f *folder) hookAt(from v1.HookState, c choice) *v1.Hook {
	steps := replaySteps[:2]
	if c.lastStep {
		steps = replaySteps[:1]
	}
	maxAttempts := f.attempt + 1
	if c.exhausted {
		maxAttempts = max(f.attempt, 1)
	}
	h := &f.scratch
	h.Spec.MaxAttempts, h.Spec.Steps = maxAttempts, steps
	h.Status = v1.HookStatus{State: from, Steps: f.results[:len(steps)]}
	for i, s := range steps {
		h.Status.Steps[i] = v1.StepResult{Name: s.Name, Phase: v1.StepPending}
	}
	if from == v1.HookInitializing {
		return h
	}
	f.current = v1.CurrentStep{Name: steps[0].Name, Attempt: max(f.attempt, 1)}
	h.Status.CurrentStep = &f.current
	if p, ok := phaseOf[from]; ok {
		h.Status.Steps[0].Phase = p
	}
	if c.awaitedFrom != "" {
		f.awaited[0] = v1.HistoryEntry{Event: string(Await), From: c.awaitedFrom, To: v1.HookAwaitingHuman}
		h.Status.History = f.awaited[:]
	}
	if c.interruptedIn != "" {
		f.recovery = v1.RecoveryStatus{LastState: c.interruptedIn}
		h.Status.Recovery = &f.recovery
	}
	return h
}

// replaySteps are the spec steps of the Hooks the replay builds: the
// current step and, unless it is the last, one after it.
var replaySteps = []v1.Step{{Name: "current"}, {Name: "next"}}

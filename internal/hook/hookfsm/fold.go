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
// History keeps only its newest entries. The replay starts in the first
// retained entry's From state. When that is initializing, the step and
// attempt before it are known (0 and 0) and the entry is checked like any
// other; otherwise the first entry's step and attempt are taken as
// recorded, and only its To is checked. Where a dropped entry held what a
// later one depends on (the state an interrupt happened in, for a resume
// from recovering), every outcome that state could have had is accepted.
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
}

type outcome struct {
	to            v1.HookState
	step, attempt int32
}

func (f *folder) replay(i int, e *v1.HistoryEntry) error {
	from, ev := stateOrInitializing(e.From), Event(e.Event)
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
	if i == 0 {
		f.state = from
	}
	matched := false
	for _, o := range f.outcomes(from, ev) {
		if o.to == e.To && (adopt || o.step == e.Step && o.attempt == e.Attempt) {
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

// outcomes lists what event ev can lead to from state from at the folder's
// step and attempt.
func (f *folder) outcomes(from v1.HookState, ev Event) []outcome {
	s, a := f.step, f.attempt
	same := func(to v1.HookState) outcome { return outcome{to, s, a} }
	switch ev {
	case Initialize:
		return []outcome{{v1.HookStepPending, 0, 1}}
	case Begin:
		return []outcome{same(v1.HookStepRunning)}
	case Validate:
		return []outcome{same(v1.HookStepValidating)}
	case Pass:
		return []outcome{{v1.HookStepPending, s + 1, 1}, same(v1.HookCompleted)}
	case FailValidation:
		return []outcome{{v1.HookStepRunning, s, a + 1}, same(v1.HookFailed)}
	case Await:
		return []outcome{same(v1.HookAwaitingHuman)}
	case Interrupt:
		return []outcome{same(v1.HookRecovering)}
	case Abandon:
		return []outcome{same(v1.HookAbandoned)}
	case Fail:
		return []outcome{same(v1.HookFailed)}
	}
	if from == v1.HookAwaitingHuman {
		if f.awaitedFrom != "" {
			return []outcome{same(f.awaitedFrom)}
		}
		return []outcome{same(v1.HookStepPending), same(v1.HookStepRunning), same(v1.HookStepValidating), same(v1.HookRecovering)}
	}
	afterRunning := []outcome{{v1.HookStepRunning, s, a + 1}, same(v1.HookFailed)}
	switch f.interruptedIn {
	case v1.HookStepRunning:
		return afterRunning
	case v1.HookStepValidating:
		return []outcome{same(v1.HookStepRunning)}
	case "":
		return append(afterRunning, same(v1.HookStepRunning), same(v1.HookStepPending))
	default:
		return []outcome{same(f.interruptedIn)}
	}
}

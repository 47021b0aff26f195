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

package hookfsm_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// weighted makes long runs likely: terminal events are rare, and await,
// resume, interrupt and heartbeat cycle without ending the task.
var weighted = []struct {
	event  hookfsm.Event
	weight int
}{
	{ini, 100}, {beg, 300}, {val, 250}, {pass, 100}, {fv, 100}, {aw, 200}, {res, 400}, {intr, 150}, {hb, 150}, {ab, 1}, {fl, 1},
}

// pick draws an event: one in four from all events, so that rejections are
// exercised too, the rest from those state s accepts.
func pick(r *rand.Rand, s v1.HookState) hookfsm.Event {
	any := r.IntN(4) == 0
	total := 0
	for _, w := range weighted {
		if any || hookfsm.Allowed(s, w.event) {
			total += w.weight
		}
	}
	n := r.IntN(total)
	for _, w := range weighted {
		if !any && !hookfsm.Allowed(s, w.event) {
			continue
		}
		if n < w.weight {
			return w.event
		}
		n -= w.weight
	}
	panic("unreachable")
}

// TestFoldReplaysRandomRuns is a property test: over random sequences of
// events, valid and invalid, Apply accepts exactly what Allowed says and
// rejects the rest with a TransitionError, keeps every transition counted,
// Fold of the (possibly truncated) history gives the status's state, step
// and attempt, and CheckHistory finds no disagreement.
func TestFoldReplaysRandomRuns(t *testing.T) {
	crashes := []v1.CrashType{v1.CrashStaleHeartbeat, v1.CrashValidationInterrupted, v1.CrashAssigneeLost, v1.CrashContextCompacted, v1.CrashManual}
	truncated := 0
	const runs = 120
	for seed := range runs {
		r := rand.New(rand.NewPCG(uint64(seed), 42))
		hook := newHook()
		hook.Spec.MaxAttempts = int32(1 + r.IntN(8))
		if r.IntN(2) == 0 {
			hook.Spec.MaxAttempts = 100
		}
		hook.Spec.Steps = nil
		for i := range 1 + r.IntN(20) {
			hook.Spec.Steps = append(hook.Spec.Steps, v1.Step{Name: fmt.Sprintf("s%d", i)})
		}
		transitions := 0
		for n := 0; n < 600 && !hook.Status.State.IsTerminal(); n++ {
			state := hook.Status.State.OrInitializing()
			in := input(pick(r, state), n)
			if in.Event == intr {
				in.Crash.Type = crashes[r.IntN(len(crashes))]
			}
			if r.IntN(2) == 0 {
				in.Message = fmt.Sprintf("note %d", n)
			}
			st, err := hookfsm.Apply(hook, in)
			var te *hookfsm.TransitionError
			if allowed := hookfsm.Allowed(state, in.Event); allowed != (err == nil) || err != nil && !errors.As(err, &te) {
				t.Fatalf("seed %d, event %d: %s in %s: Allowed %v, error %v", seed, n, in.Event, state, allowed, err)
			}
			if err != nil {
				continue
			}
			transitions += len(st.History) + int(st.HistoryDropped) - len(hook.Status.History) - int(hook.Status.HistoryDropped)
			hook.Status = *st
			if len(st.History) > v1.HookHistoryLimit || len(st.History)+int(st.HistoryDropped) != transitions {
				t.Fatalf("seed %d: %d entries kept, %d dropped, %d transitions", seed, len(st.History), st.HistoryDropped, transitions)
			}
			gotState, gotStep, gotAttempt, err := hookfsm.Fold(st.History)
			var step, attempt int32
			if cs := st.CurrentStep; cs != nil {
				step, attempt = cs.Index, cs.Attempt
			}
			if err != nil || gotState != st.State.OrInitializing() || gotStep != step || gotAttempt != attempt {
				t.Fatalf("seed %d after %s: Fold = %s %d %d %v, status %s %d %d", seed, in.Event, gotState, gotStep, gotAttempt, err, st.State, step, attempt)
			}
			if ds := hookfsm.CheckHistory(hook); len(ds) != 0 {
				t.Fatalf("seed %d after %s: CheckHistory of a status Apply wrote: %s", seed, in.Event, hookfsm.Summary(ds))
			}
		}
		if hook.Status.HistoryDropped > 0 {
			truncated++
		}
	}
	if truncated < runs/4 {
		t.Errorf("only %d of %d runs truncated their history; the property needs more", truncated, runs)
	}
}

type entry = v1.HistoryEntry

func TestFold(t *testing.T) {
	initialize := entry{Event: "initialize", From: v1.HookInitializing, To: v1.HookStepPending, Attempt: 1}
	begin := entry{Event: "begin", From: v1.HookStepPending, To: v1.HookStepRunning, Attempt: 1}
	recovering := []entry{
		{Event: "await", From: v1.HookRecovering, To: v1.HookAwaitingHuman, Step: 1, Attempt: 2},
		{Event: "resume", From: v1.HookAwaitingHuman, To: v1.HookRecovering, Step: 1, Attempt: 2},
	}
	afterDroppedInterrupt := func(e entry) []entry { return append(append([]entry{}, recovering...), e) }
	for _, tc := range []struct {
		name          string
		history       []entry
		state         v1.HookState
		step, attempt int32
		err           string
	}{
		{"empty", nil, v1.HookInitializing, 0, 0, ""},
		{"an empty From is initializing", []entry{{Event: "initialize", To: v1.HookStepPending, Attempt: 1}}, v1.HookStepPending, 0, 1, ""},
		{"begun", []entry{initialize, begin}, v1.HookStepRunning, 0, 1, ""},
		{"broken chain", []entry{initialize, {Event: "validate", From: v1.HookStepRunning, To: v1.HookStepValidating, Attempt: 1}}, "", 0, 0,
			"history[1] (validate from step_running): the previous entry ended in step_pending"},
		{"not a transition", []entry{{Event: "validate", From: v1.HookInitializing, To: v1.HookStepValidating}}, "", 0, 0,
			"history[0] (validate from initializing): not a transition"},
		{"unknown event", []entry{{Event: "jump", From: v1.HookInitializing, To: v1.HookStepPending}}, "", 0, 0, "not a transition"},
		{"heartbeats are never recorded", []entry{initialize, {Event: "heartbeat", From: v1.HookStepPending, To: v1.HookStepPending, Attempt: 1}}, "", 0, 0, "not a transition"},
		{"wrong step", []entry{{Event: "initialize", From: v1.HookInitializing, To: v1.HookStepPending, Step: 1, Attempt: 1}}, "", 0, 0,
			"cannot end in step_pending at step 1, attempt 1"},
		{"wrong target", []entry{initialize, {Event: "begin", From: v1.HookStepPending, To: v1.HookStepValidating, Attempt: 1}}, "", 0, 0, "cannot end in step_validating"},
		{"resume to where the await came from", []entry{initialize, begin,
			{Event: "await", From: v1.HookStepRunning, To: v1.HookAwaitingHuman, Attempt: 1},
			{Event: "resume", From: v1.HookAwaitingHuman, To: v1.HookStepPending, Attempt: 1}}, "", 0, 0, "cannot end in step_pending"},
		{"truncated: the first entry is taken as recorded", []entry{{Event: "begin", From: v1.HookStepPending, To: v1.HookStepRunning, Step: 4, Attempt: 2}},
			v1.HookStepRunning, 4, 2, ""},
		{"truncated: the first entry's target is still checked", []entry{{Event: "begin", From: v1.HookStepPending, To: v1.HookCompleted, Step: 4, Attempt: 2}},
			"", 0, 0, "cannot end in completed"},
		{"truncated before the await", []entry{{Event: "resume", From: v1.HookAwaitingHuman, To: v1.HookStepValidating, Step: 1, Attempt: 1}},
			v1.HookStepValidating, 1, 1, ""},
		{"truncated before the await, impossible target", []entry{{Event: "resume", From: v1.HookAwaitingHuman, To: v1.HookInitializing}},
			"", 0, 0, "cannot end in initializing"},
		{"interrupt dropped: a new attempt", afterDroppedInterrupt(entry{Event: "resume", From: v1.HookRecovering, To: v1.HookStepRunning, Step: 1, Attempt: 3}),
			v1.HookStepRunning, 1, 3, ""},
		{"interrupt dropped: a re-run validation", afterDroppedInterrupt(entry{Event: "resume", From: v1.HookRecovering, To: v1.HookStepRunning, Step: 1, Attempt: 2}),
			v1.HookStepRunning, 1, 2, ""},
		{"interrupt dropped: out of attempts", afterDroppedInterrupt(entry{Event: "resume", From: v1.HookRecovering, To: v1.HookFailed, Step: 1, Attempt: 2}),
			v1.HookFailed, 1, 2, ""},
		{"interrupt dropped: pending", afterDroppedInterrupt(entry{Event: "resume", From: v1.HookRecovering, To: v1.HookStepPending, Step: 1, Attempt: 2}),
			v1.HookStepPending, 1, 2, ""},
		{"interrupt dropped: never validating", afterDroppedInterrupt(entry{Event: "resume", From: v1.HookRecovering, To: v1.HookStepValidating, Step: 1, Attempt: 2}),
			"", 0, 0, "cannot end in step_validating"},
		{"an interrupted validation is not an attempt", []entry{initialize, begin,
			{Event: "validate", From: v1.HookStepRunning, To: v1.HookStepValidating, Attempt: 1},
			{Event: "interrupt", From: v1.HookStepValidating, To: v1.HookRecovering, Attempt: 1},
			{Event: "resume", From: v1.HookRecovering, To: v1.HookStepRunning, Attempt: 2}}, "", 0, 0, "cannot end in step_running at step 0, attempt 2"},
		{"an interrupted pending step stays pending", []entry{initialize,
			{Event: "interrupt", From: v1.HookStepPending, To: v1.HookRecovering, Attempt: 1},
			{Event: "resume", From: v1.HookRecovering, To: v1.HookStepPending, Attempt: 1}}, v1.HookStepPending, 0, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, step, attempt, err := hookfsm.Fold(tc.history)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || state != tc.state || step != tc.step || attempt != tc.attempt {
				t.Fatalf("Fold = %s %d %d %v, want %s %d %d", state, step, attempt, err, tc.state, tc.step, tc.attempt)
			}
		})
	}
}

// BenchmarkFold replays a full history (HookHistoryLimit entries of failed
// validations, the event with the most possibilities), as CheckHistory does
// on every reconcile of a long-running Hook.
func BenchmarkFold(b *testing.B) {
	hook := newHook()
	hook.Spec.MaxAttempts = 1000
	for n := 0; len(hook.Status.History) < v1.HookHistoryLimit; n++ {
		ev := []hookfsm.Event{hookfsm.Begin, hookfsm.Validate, hookfsm.FailValidation}[min(n, 2)]
		if n > 2 && n%2 == 1 {
			ev = hookfsm.Validate
		}
		st, err := hookfsm.Apply(hook, input(ev, n))
		if err != nil {
			b.Fatal(err)
		}
		hook.Status = *st
	}
	for b.Loop() {
		if _, _, _, err := hookfsm.Fold(hook.Status.History); err != nil {
			b.Fatal(err)
		}
	}
}

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
	"reflect"
	"strings"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// TestRebuild forges the status of Hooks that Apply drove, as a person
// editing the store file would, and rebuilds it: the result agrees with
// the history, is the status Apply wrote in every field the history
// determines, and rebuilding it again changes nothing. A damaged history
// is refused.
func TestRebuild(t *testing.T) {
	running := []hookfsm.Event{ini, beg, val, pass, beg}
	completed := []hookfsm.Event{ini, beg, val, pass, beg, val, pass, beg, val, pass}
	tests := []struct {
		name    string
		events  []hookfsm.Event
		edit    func(st *v1.HookStatus)
		fields  []string
		damaged string
	}{
		{name: "agrees", events: running, edit: func(*v1.HookStatus) {}},
		{name: "state completed on a running hook", events: running, edit: func(st *v1.HookStatus) { st.State = v1.HookCompleted },
			fields: []string{"status.state"}},
		{name: "completed with its steps passed and a terminal time", events: running, edit: func(st *v1.HookStatus) {
			st.State, st.TerminalAt = v1.HookCompleted, st.CurrentStep.StartedAt
			st.Steps[1].Phase, st.Steps[2].Phase, st.Steps[2].Attempts = v1.StepPassed, v1.StepPassed, 1
		}, fields: []string{"status.state", "status.steps[1].phase", "status.steps[2].phase"}},
		{name: "a completed hook made running", events: completed, edit: func(st *v1.HookStatus) {
			st.State, st.Steps[2].Phase = v1.HookStepRunning, v1.StepRunning
		}, fields: []string{"status.state", "status.steps[2].phase"}},
		{name: "a failed attempt forgiven", events: []hookfsm.Event{ini, beg, val, fv}, edit: func(st *v1.HookStatus) {
			st.CurrentStep.Attempt, st.Steps[0].Attempts = 1, 1
		}, fields: []string{"status.currentStep.attempt", "status.steps[0].attempts"}},
		{name: "a step skipped", events: running, edit: func(st *v1.HookStatus) {
			st.CurrentStep.Index, st.CurrentStep.Name = 2, "docs"
			st.Steps[1].Phase = v1.StepPassed
		}, fields: []string{"status.currentStep.index", "status.steps[1].phase"}},
		{name: "a passed step reset", events: running, edit: func(st *v1.HookStatus) { st.Steps[0].Phase = v1.StepPending },
			fields: []string{"status.steps[0].phase"}},
		{name: "a passed step's attempts", events: running, edit: func(st *v1.HookStatus) { st.Steps[0].Attempts = 3 },
			fields: []string{"status.steps[0].attempts"}},
		{name: "recovering step marked passed", events: []hookfsm.Event{ini, beg, val, intr}, edit: func(st *v1.HookStatus) {
			st.Steps[0].Phase = v1.StepPassed
		}, fields: []string{"status.steps[0].phase"}},
		{name: "awaiting step marked failed", events: []hookfsm.Event{ini, beg, aw}, edit: func(st *v1.HookStatus) {
			st.Steps[0].Phase = v1.StepFailed
		}, fields: []string{"status.steps[0].phase"}},
		{name: "current step removed", events: running, edit: func(st *v1.HookStatus) { st.CurrentStep = nil },
			fields: []string{"status.currentStep"}},
		{name: "a new hook said to be running", edit: func(st *v1.HookStatus) {
			st.State, st.CurrentStep = v1.HookStepRunning, &v1.CurrentStep{Attempt: 1}
		}, fields: []string{"status.state", "status.currentStep"}},
		{name: "recovering made running, recovery kept", events: []hookfsm.Event{ini, beg, intr}, edit: func(st *v1.HookStatus) { st.State = v1.HookStepRunning },
			fields: []string{"status.state"}},
		{name: "dropped entries counted on a history from the start", events: running, edit: func(st *v1.HookStatus) { st.HistoryDropped = 4 },
			fields: []string{"status.historyDropped"}},
		{name: "history rewritten", events: running, edit: func(st *v1.HookStatus) { st.History[1].To = v1.HookCompleted },
			damaged: "status.history: the history itself is damaged: history[1]"},
		{name: "oldest entries removed, uncounted", events: running, edit: func(st *v1.HookStatus) { st.History = st.History[2:] },
			damaged: "status.historyDropped"},
		{name: "history emptied", events: running, edit: func(st *v1.HookStatus) { st.History, st.HistoryDropped = nil, 5 },
			damaged: "status.historyDropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := drive(t, newHook(), tt.events...)
			h := want.DeepCopy()
			tt.edit(&h.Status)
			orig := h.DeepCopy()
			st, ds, err := hookfsm.Rebuild(h)
			if !reflect.DeepEqual(h, orig) {
				t.Fatal("Rebuild modified its Hook")
			}
			if tt.damaged != "" {
				var he *hookfsm.HistoryError
				if !errors.As(err, &he) || !errors.Is(err, hookfsm.ErrHistoryDamaged) || !strings.Contains(err.Error(), tt.damaged) {
					t.Fatalf("error %v, want a HistoryError naming %q", err, tt.damaged)
				}
				if hookfsm.Trust(h, hookfsm.Fail) != nil {
					t.Error("Trust refuses fail on a damaged history: nothing could then give the Hook up")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := hookfsm.Fields(ds); !reflect.DeepEqual(got, tt.fields) {
				t.Fatalf("corrected %q, want %q", got, tt.fields)
			}
			if st.State.OrInitializing() == want.Status.State.OrInitializing() {
				st.State = want.Status.State
			}
			if tt.name == "current step removed" {
				// Only the position can be rebuilt; what the agent recorded of its work is gone.
				st.CurrentStep = want.Status.CurrentStep
			}
			if !reflect.DeepEqual(*st, want.Status) {
				t.Errorf("rebuilt status differs from the one Apply wrote:\n got %+v\nwant %+v", *st, want.Status)
			}
			rebuilt := h.DeepCopy()
			rebuilt.Status = *st.DeepCopy()
			assertRebuilt(t, rebuilt)
			if err := hookfsm.Trust(h, hookfsm.Begin); len(tt.fields) > 0 != (err != nil) {
				t.Errorf("Trust(begin) = %v with %d disagreements", err, len(tt.fields))
			}
		})
	}
}

// assertRebuilt checks that h, a rebuilt Hook, agrees with its history,
// that rebuilding it again changes nothing, and that the state machine
// takes it.
func assertRebuilt(t *testing.T, h *v1.Hook) {
	t.Helper()
	if ds := hookfsm.CheckHistory(h); len(ds) > 0 {
		t.Fatalf("the rebuilt status still disagrees: %s", hookfsm.Summary(ds))
	}
	again, ds, err := hookfsm.Rebuild(h)
	if err != nil || len(ds) > 0 || !reflect.DeepEqual(*again, h.Status) {
		t.Fatalf("rebuilding again: %v, %d disagreements, changed %v", err, len(ds), !reflect.DeepEqual(*again, h.Status))
	}
	if err := hookfsm.Trust(h, hookfsm.Abandon); err != nil {
		t.Fatalf("Trust refuses a rebuilt status: %v", err)
	}
}

// TestRebuildRandomForgeries is a property test: random runs, each forged
// in one to three of the fields CheckHistory checks (state, current step
// and attempt, a step's phase or attempts). Rebuild never refuses them,
// its result agrees with the history and is idempotent, state, current
// step and attempt are the ones Apply wrote, and Trust refuses every
// event but a heartbeat until then.
func TestRebuildRandomForgeries(t *testing.T) {
	phases := []v1.StepPhase{v1.StepPending, v1.StepRunning, v1.StepValidating, v1.StepPassed, v1.StepFailed}
	forged := 0
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		hook := newHook()
		hook.Spec.MaxAttempts = int32(1 + r.IntN(4))
		hook.Spec.Steps = nil
		for i := range 1 + r.IntN(5) {
			hook.Spec.Steps = append(hook.Spec.Steps, v1.Step{Name: fmt.Sprintf("s%d", i)})
		}
		for n := range r.IntN(60) {
			if hook.Status.State.IsTerminal() {
				break
			}
			st, err := hookfsm.Apply(hook, input(pick(r, hook.Status.State.OrInitializing()), n))
			if err == nil {
				hook.Status = *st
			}
		}
		want := hook.Status.DeepCopy()
		st := &hook.Status
		for range 1 + r.IntN(3) {
			switch k := r.IntN(4); {
			case k == 0:
				st.State = hookfsm.States()[r.IntN(len(hookfsm.States()))]
			case k == 1 && st.CurrentStep != nil:
				st.CurrentStep.Index = int32(r.IntN(len(hook.Spec.Steps)))
				st.CurrentStep.Attempt = int32(1 + r.IntN(3))
			case len(st.Steps) > 0:
				res := &st.Steps[r.IntN(len(st.Steps))]
				res.Phase, res.Attempts = phases[r.IntN(len(phases))], int32(r.IntN(4))
			}
		}
		rebuilt, ds, err := hookfsm.Rebuild(hook)
		if err != nil {
			t.Fatalf("seed %d: Rebuild refused a forged status on a sound history: %v", seed, err)
		}
		if len(ds) == 0 {
			continue
		}
		forged++
		if err := hookfsm.Trust(hook, hookfsm.Heartbeat); err != nil {
			t.Errorf("seed %d: Trust refuses a heartbeat: %v", seed, err)
		}
		var se *hookfsm.StatusError
		if err := hookfsm.Trust(hook, hookfsm.Fail); !errors.As(err, &se) || !errors.Is(err, hookfsm.ErrRejected) {
			t.Errorf("seed %d: Trust(fail) = %v on a forged status, want a StatusError", seed, err)
		}
		h := hook.DeepCopy()
		h.Status = *rebuilt
		assertRebuilt(t, h)
		if rebuilt.State.OrInitializing() != want.State.OrInitializing() || !reflect.DeepEqual(position(rebuilt), position(want)) {
			t.Errorf("seed %d: rebuilt to %s at %v, Apply wrote %s at %v (%s)", seed, rebuilt.State, position(rebuilt), want.State, position(want), hookfsm.Summary(ds))
		}
	}
	if forged < 200 {
		t.Errorf("only %d of 300 runs were forged into a disagreement; the property needs more", forged)
	}
}

// position is the current step's index and attempt, or nil.
func position(st *v1.HookStatus) []int32 {
	if st.CurrentStep == nil {
		return nil
	}
	return []int32{st.CurrentStep.Index, st.CurrentStep.Attempt}
}

// TestStatusError names the verb, the fields and the way back.
func TestStatusError(t *testing.T) {
	h := drive(t, newHook(), ini, beg)
	h.Namespace = "team-a"
	h.Status.State = v1.HookCompleted
	err := hookfsm.Trust(h, hookfsm.Fail)
	want := `cannot "fail" hook "task": its status disagrees with its history (status.state is completed; history says step_running); a person checks the work and runs "tether repair task -n team-a", which rebuilds the status from the history`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
}

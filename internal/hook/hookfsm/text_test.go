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
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

func TestNextAction(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state v1.HookState
		edit  func(*v1.Hook)
		want  string
	}{
		{"initializing", v1.HookInitializing, nil, "run `tether step begin task` to start step \"api\" (1/3), attempt 1"},
		{"another namespace", v1.HookInitializing, func(h *v1.Hook) { h.Namespace = "team-a" },
			"run `tether step begin task -n team-a` to start step \"api\" (1/3), attempt 1"},
		{"step_pending", v1.HookStepPending, nil, "run `tether step begin task` to start step \"implement\" (2/3), attempt 1"},
		{"step_running", v1.HookStepRunning, nil, "work on step \"implement\" (2/3), attempt 1, then run `tether step done task` to validate it"},
		{"step_validating", v1.HookStepValidating, nil, "wait for `tether step done task` to finish validating step \"implement\" (2/3), attempt 1"},
		{"awaiting_human", v1.HookAwaitingHuman, nil, "wait for a person to answer \"which database?\", then run `tether resume task`"},
		{"awaiting_human without a reason", v1.HookAwaitingHuman, func(h *v1.Hook) { h.Status.History[len(h.Status.History)-1].Message = "" },
			"wait for a person, then run `tether resume task`"},
		{"recovering", v1.HookRecovering, nil,
			"run `tether resume task` and continue step \"implement\" (2/3) as attempt 2: the interrupted attempt 1 counts"},
		{"recovering with a custom action", v1.HookRecovering, func(h *v1.Hook) { h.Status.Recovery.RecommendedAction = "read NOTES.md" }, "read NOTES.md"},
		{"recovering without recovery data", v1.HookRecovering, func(h *v1.Hook) { h.Status.Recovery = nil },
			"run `tether resume task` and continue step \"implement\" (2/3) as attempt 2: the interrupted attempt 1 counts"},
		{"recovering with a step out of range", v1.HookRecovering, func(h *v1.Hook) {
			h.Status.Recovery = nil
			h.Status.CurrentStep.Index, h.Status.CurrentStep.Name = 5, "gone"
		}, "stop and ask a person: the status disagrees with its history (status.currentStep.index is 5; history says 1), so tether refuses every step of this task until a person checks the work and runs `tether repair task`, which rebuilds the status from the history (it says: recovering at step \"implement\" (2/3), attempt 1); until then do not begin, repeat or skip any step"},
		{"recovering without a current step", v1.HookRecovering, func(h *v1.Hook) {
			h.Status.Recovery, h.Status.CurrentStep = nil, nil
		}, "stop and ask a person: the status disagrees with its history (status.currentStep is missing; history says step 2, attempt 1), so tether refuses every step of this task until a person checks the work and runs `tether repair task`, which rebuilds the status from the history (it says: recovering at step \"implement\" (2/3), attempt 1); until then do not begin, repeat or skip any step"},
		{"completed", v1.HookCompleted, nil, "nothing: every step passed; do not repeat any of them"},
		{"failed", v1.HookFailed, nil, "nothing: the task failed (which database?); a person decides what happens next"},
		{"failed without a reason", v1.HookFailed, func(h *v1.Hook) { h.Status.History[len(h.Status.History)-1].Message = "" }, "nothing: the task failed; a person decides what happens next"},
		{"abandoned", v1.HookAbandoned, nil, "nothing: the task was abandoned"},
		{"unknown state", v1.HookAbandoned, func(h *v1.Hook) { h.Status.State = "sleeping" },
			"stop and ask a person: the status disagrees with its history (status.state is sleeping; history says abandoned), so tether refuses every step of this task until a person checks the work and runs `tether repair task`, which rebuilds the status from the history (it says: abandoned at step \"implement\" (2/3), attempt 1); until then do not begin, repeat or skip any step"},
		{"completed by a hand edit", v1.HookStepRunning, func(h *v1.Hook) { h.Status.State = v1.HookCompleted },
			"stop and ask a person: the status disagrees with its history (status.state is completed; history says step_running), so tether refuses every step of this task until a person checks the work and runs `tether repair task`, which rebuilds the status from the history (it says: step \"implement\" (2/3) running, attempt 1); until then do not begin, repeat or skip any step"},
		{"completed by a hand edit of a damaged history", v1.HookStepRunning, func(h *v1.Hook) {
			h.Status.State, h.Status.History[1].To = v1.HookCompleted, v1.HookFailed
		}, "stop and ask a person: the status disagrees with its history (status.history is not a sequence of transitions; history says history[1] (begin from step_pending): cannot end in failed at step 0, attempt 1), and the history itself is damaged, so neither says where the task stands; a person checks the work and decides what happens next"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := inState(t, tc.state)
			if tc.edit != nil {
				tc.edit(hook)
			}
			if got := hookfsm.NextAction(hook); got != tc.want {
				t.Errorf("NextAction =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRecommendedAction(t *testing.T) {
	lastAttempt := drive(t, newHook(), ini, beg, val, fv, val, fv)
	for _, tc := range []struct {
		name      string
		hook      *v1.Hook
		lastState v1.HookState
		want      string
	}{
		{"an interrupted attempt", inState(t, v1.HookStepRunning), v1.HookStepRunning,
			"run `tether resume task` and continue step \"implement\" (2/3) as attempt 2: the interrupted attempt 1 counts"},
		{"an interrupted last attempt", lastAttempt, v1.HookStepRunning,
			"step \"api\" (1/3) has used all 3 of its attempts, so `tether resume task` fails the task; a person may raise spec.maxAttempts first"},
		{"an interrupted validation", inState(t, v1.HookStepValidating), v1.HookStepValidating,
			"re-run validation: run `tether resume task`, then `tether step done task` to re-run the validations of step \"implement\" (2/3); the interrupted run does not count as an attempt"},
		{"a pending step", inState(t, v1.HookStepPending), v1.HookStepPending,
			"run `tether step begin task` to start step \"implement\" (2/3), attempt 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hookfsm.RecommendedAction(tc.hook, tc.lastState); got != tc.want {
				t.Errorf("RecommendedAction =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state v1.HookState
		edit  func(*v1.Hook)
		want  string
	}{
		{"initializing", v1.HookInitializing, nil, "initializing"},
		{"step_pending", v1.HookStepPending, nil, `step "implement" (2/3) pending, attempt 1`},
		{"step_running", v1.HookStepRunning, nil, `step "implement" (2/3) running, attempt 1`},
		{"step_validating", v1.HookStepValidating, nil, `step "implement" (2/3) validating, attempt 1`},
		{"awaiting_human", v1.HookAwaitingHuman, nil, `awaiting a human at step "implement" (2/3), attempt 1`},
		{"recovering", v1.HookRecovering, nil, `recovering at step "implement" (2/3), attempt 1`},
		{"completed", v1.HookCompleted, nil, "completed"},
		{"failed", v1.HookFailed, nil, `failed at step "implement" (2/3), attempt 1`},
		{"abandoned", v1.HookAbandoned, nil, `abandoned at step "implement" (2/3), attempt 1`},
		{"failed before initialization", v1.HookInitializing, func(h *v1.Hook) { h.Status.State = v1.HookFailed }, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := inState(t, tc.state)
			if tc.edit != nil {
				tc.edit(hook)
			}
			if got := hookfsm.Describe(hook); got != tc.want {
				t.Errorf("Describe = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		state v1.HookState
		in    hookfsm.Input
		want  string
	}{
		{v1.HookStepPending, input(val, 9), `cannot "step done" hook "task": state is step_pending, expected step_running`},
		{v1.HookStepRunning, input(res, 9), `cannot "resume" hook "task": state is step_running, expected awaiting_human or recovering`},
		{v1.HookStepRunning, input(beg, 9), `cannot "step begin" hook "task": state is step_running, expected initializing, step_pending or recovering`},
		{v1.HookCompleted, input(hb, 9), `cannot "heartbeat" hook "task": state is completed, which is terminal`},
		{v1.HookStepRunning, hookfsm.Input{Event: fl, Now: input(fl, 9).Now}, `hook "task": message: a reason is required to fail`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := hookfsm.Apply(inState(t, tc.state), tc.in)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %s", err, tc.want)
			}
		})
	}
}

func TestMaxAttempts(t *testing.T) {
	for _, tc := range []struct {
		spec int32
		want int32
	}{{0, hookfsm.DefaultMaxAttempts}, {1, 1}, {100, 100}} {
		if got := hookfsm.MaxAttempts(&v1.HookSpec{MaxAttempts: tc.spec}); got != tc.want {
			t.Errorf("MaxAttempts(%d) = %d, want %d", tc.spec, got, tc.want)
		}
	}
}

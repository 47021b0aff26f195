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
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// apply applies in to hook, failing the test on error, and returns the
// Hook with the new status.
func apply(t *testing.T, hook *v1.Hook, in hookfsm.Input) *v1.Hook {
	t.Helper()
	st, err := hookfsm.Apply(hook, in)
	if err != nil {
		t.Fatal(err)
	}
	out := hook.DeepCopy()
	out.Status = *st
	return out
}

func events(st *v1.HookStatus, from int) []string {
	var out []string
	for _, e := range st.History[from:] {
		out = append(out, e.Event+":"+string(e.To))
	}
	return out
}

func TestInitializeFillsSteps(t *testing.T) {
	hook := newHook()
	hook.Status.Steps = []v1.StepResult{{Name: "stale", Phase: v1.StepPassed}}
	got := apply(t, hook, input(ini, 0)).Status
	want := []v1.StepResult{{Name: "api", Phase: v1.StepPending}, {Name: "implement", Phase: v1.StepPending}, {Name: "docs", Phase: v1.StepPending}}
	if !reflect.DeepEqual(got.Steps, want) {
		t.Errorf("steps = %+v", got.Steps)
	}
	if cs := got.CurrentStep; cs == nil || !reflect.DeepEqual(*cs, v1.CurrentStep{Index: 0, Name: "api", Attempt: 1}) {
		t.Errorf("currentStep = %+v", got.CurrentStep)
	}
}

func TestBeginRecordsTheWork(t *testing.T) {
	for _, tc := range []struct {
		name   string
		from   *v1.Hook
		events []string
	}{
		{"initializing", newHook(), []string{"initialize:step_pending", "begin:step_running"}},
		{"step_pending", inState(t, v1.HookStepPending), []string{"begin:step_running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := input(beg, 100)
			in.WorkingOn, in.Files, in.Message = "cursor encoding", []string{"a.go", "b.go"}, "starting"
			got := apply(t, tc.from, in).Status
			if e := events(&got, len(tc.from.Status.History)); !reflect.DeepEqual(e, tc.events) {
				t.Errorf("history %v, want %v", e, tc.events)
			}
			if last := got.History[len(got.History)-1]; last.Message != "starting" {
				t.Errorf("the caller's message is not on the last entry: %+v", got.History)
			}
			cs := got.CurrentStep
			if cs.WorkingOn != "cursor encoding" || !reflect.DeepEqual(cs.FilesTouched, in.Files) || !cs.StartedAt.Equal(&in.Now) {
				t.Errorf("currentStep = %+v", cs)
			}
			if r := got.Steps[cs.Index]; r.Phase != v1.StepRunning || r.Attempts != 1 {
				t.Errorf("step result = %+v", r)
			}
			in.Files[0] = "changed.go"
			if cs.FilesTouched[0] != "a.go" {
				t.Error("the status shares the input's files slice")
			}
		})
	}
}

func TestValidationOutcomes(t *testing.T) {
	receipt := v1.Receipt{Command: []string{"go", "test"}, ExitCode: 1, Attempt: 1}
	for _, tc := range []struct {
		name           string
		path           []hookfsm.Event
		maxAttempts    int32
		event          hookfsm.Event
		state          v1.HookState
		step, attempt  int32
		phase          v1.StepPhase
		terminal, done bool
	}{
		{"pass moves to the next step", []hookfsm.Event{beg, val}, 3, pass, v1.HookStepPending, 1, 1, v1.StepPassed, false, true},
		{"pass of the last step completes", []hookfsm.Event{beg, val, pass, beg, val, pass, beg, val}, 3, pass, v1.HookCompleted, 2, 1, v1.StepPassed, true, true},
		{"a failed validation starts the next attempt", []hookfsm.Event{beg, val}, 3, fv, v1.HookStepRunning, 0, 2, v1.StepRunning, false, false},
		{"the last attempt's failure fails the task", []hookfsm.Event{beg, val, fv, val, fv, val}, 3, fv, v1.HookFailed, 0, 3, v1.StepFailed, true, false},
		{"unset maxAttempts means three", []hookfsm.Event{beg, val, fv, val, fv, val}, 0, fv, v1.HookFailed, 0, 3, v1.StepFailed, true, false},
		{"one attempt", []hookfsm.Event{beg, val}, 1, fv, v1.HookFailed, 0, 1, v1.StepFailed, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := newHook()
			hook.Spec.MaxAttempts = tc.maxAttempts
			hook = drive(t, hook, tc.path...)
			index := hook.Status.CurrentStep.Index
			in := input(tc.event, 500)
			in.Receipts = []v1.Receipt{receipt}
			got := apply(t, hook, in).Status
			if got.State != tc.state || got.CurrentStep.Index != tc.step || got.CurrentStep.Attempt != tc.attempt {
				t.Fatalf("got %s step %d attempt %d", got.State, got.CurrentStep.Index, got.CurrentStep.Attempt)
			}
			r := got.Steps[index]
			if r.Phase != tc.phase || !reflect.DeepEqual(r.Receipts, in.Receipts) || (r.CompletedAt != nil) != tc.done {
				t.Errorf("step result %+v", r)
			}
			if tc.state == v1.HookStepRunning && (r.Attempts != tc.attempt || !got.CurrentStep.StartedAt.Equal(&in.Now)) {
				t.Errorf("a new attempt was not recorded: %+v, %+v", r, got.CurrentStep)
			}
			if (got.TerminalAt != nil) != tc.terminal {
				t.Errorf("terminalAt = %v", got.TerminalAt)
			}
		})
	}
}

func TestResumeFromRecovering(t *testing.T) {
	for _, tc := range []struct {
		name        string
		path        []hookfsm.Event
		edit        func(*v1.HookStatus)
		maxAttempts int32
		event       hookfsm.Event
		events      []string
		attempt     int32
		phase       v1.StepPhase
		message     string
	}{
		{"an interrupted attempt counts", []hookfsm.Event{beg, intr}, nil, 3, res,
			[]string{"resume:step_running"}, 2, v1.StepRunning, "attempt 1 was interrupted; it counts as an attempt"},
		{"an interrupted last attempt fails", []hookfsm.Event{beg, val, fv, val, fv, intr}, nil, 3, res,
			[]string{"resume:failed"}, 3, v1.StepFailed, "attempt 3 was interrupted; it counts as an attempt"},
		{"an interrupted validation re-runs", []hookfsm.Event{beg, val, intr}, nil, 3, res,
			[]string{"resume:step_running"}, 1, v1.StepRunning, "re-run validation: the interrupted validation does not count as an attempt"},
		{"a pending step stays pending", []hookfsm.Event{intr}, nil, 3, res,
			[]string{"resume:step_pending"}, 1, v1.StepPending, ""},
		{"begin on a pending step resumes and begins", []hookfsm.Event{intr}, nil, 3, beg,
			[]string{"resume:step_pending", "begin:step_running"}, 1, v1.StepRunning, ""},
		{"begin on an interrupted attempt resumes it", []hookfsm.Event{beg, intr}, nil, 3, beg,
			[]string{"resume:step_running"}, 2, v1.StepRunning, "attempt 1 was interrupted; it counts as an attempt"},
		{"begin on an interrupted last attempt fails", []hookfsm.Event{beg, intr}, nil, 1, beg,
			[]string{"resume:failed"}, 1, v1.StepFailed, "attempt 1 was interrupted; it counts as an attempt"},
		{"without recovery data the phase decides", []hookfsm.Event{beg, val, intr}, func(st *v1.HookStatus) { st.Recovery = nil }, 3, res,
			[]string{"resume:step_running"}, 1, v1.StepRunning, "re-run validation: the interrupted validation does not count as an attempt"},
		{"without recovery data a pending step stays pending", []hookfsm.Event{intr}, func(st *v1.HookStatus) { st.Recovery = nil }, 3, res,
			[]string{"resume:step_pending"}, 1, v1.StepPending, ""},
		{"an impossible lastState: the phase decides", []hookfsm.Event{beg, intr}, func(st *v1.HookStatus) { st.Recovery.LastState = v1.HookCompleted }, 3, res,
			[]string{"resume:step_running"}, 2, v1.StepRunning, "attempt 1 was interrupted; it counts as an attempt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := newHook()
			hook.Spec.MaxAttempts = tc.maxAttempts
			hook = drive(t, hook, append([]hookfsm.Event{ini}, tc.path...)...)
			if tc.edit != nil {
				tc.edit(&hook.Status)
			}
			in := input(tc.event, 500)
			in.WorkingOn = "retrying"
			got := apply(t, hook, in).Status
			if e := events(&got, len(hook.Status.History)); !reflect.DeepEqual(e, tc.events) {
				t.Errorf("history %v, want %v", e, tc.events)
			}
			if got.Recovery != nil {
				t.Errorf("recovery was not cleared: %+v", got.Recovery)
			}
			if got.CurrentStep.Attempt != tc.attempt || got.Steps[0].Phase != tc.phase {
				t.Errorf("attempt %d, phase %s", got.CurrentStep.Attempt, got.Steps[0].Phase)
			}
			if msg := got.History[len(hook.Status.History)].Message; msg != tc.message {
				t.Errorf("message %q, want %q", msg, tc.message)
			}
			if tc.event == beg && got.State == v1.HookStepRunning && got.CurrentStep.WorkingOn != "retrying" {
				t.Errorf("begin did not record workingOn: %+v", got.CurrentStep)
			}
		})
	}
}

func TestInterruptBeforeInitialization(t *testing.T) {
	hook := drive(t, newHook(), intr)
	if e := events(&hook.Status, 0); !reflect.DeepEqual(e, []string{"initialize:step_pending", "interrupt:recovering"}) {
		t.Fatalf("interrupt: history %v", e)
	}
	if hook.Status.Recovery.LastState != v1.HookStepPending {
		t.Errorf("lastState = %s", hook.Status.Recovery.LastState)
	}
	got := apply(t, hook, input(res, 10)).Status
	if got.State != v1.HookStepPending || got.CurrentStep.Attempt != 1 {
		t.Errorf("resume: %s %+v", got.State, got.CurrentStep)
	}
}

func TestBeginAfterResumeRecordsWorkWhenGiven(t *testing.T) {
	for _, tc := range []struct {
		name      string
		workingOn string
		files     []string
		want      v1.CurrentStep
	}{
		{"nothing given keeps the old", "", nil, v1.CurrentStep{WorkingOn: "first", FilesTouched: []string{"a.go"}}},
		{"a new description", "second", nil, v1.CurrentStep{WorkingOn: "second", FilesTouched: []string{"a.go"}}},
		{"new files", "", []string{"b.go"}, v1.CurrentStep{WorkingOn: "first", FilesTouched: []string{"b.go"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := drive(t, newHook(), ini)
			in := input(beg, 10)
			in.WorkingOn, in.Files = "first", []string{"a.go"}
			hook = drive(t, apply(t, hook, in), intr)
			in = input(beg, 20)
			in.WorkingOn, in.Files = tc.workingOn, tc.files
			cs := apply(t, hook, in).Status.CurrentStep
			if cs.WorkingOn != tc.want.WorkingOn || !reflect.DeepEqual(cs.FilesTouched, tc.want.FilesTouched) {
				t.Errorf("currentStep %+v, want %+v", cs, tc.want)
			}
		})
	}
}

func TestResumeFromAwaiting(t *testing.T) {
	for _, tc := range []struct {
		name string
		path []hookfsm.Event
		edit func(*v1.HookStatus)
		want v1.HookState
	}{
		{"from step_pending", []hookfsm.Event{ini, aw}, nil, v1.HookStepPending},
		{"from initializing, which initialized", []hookfsm.Event{aw}, nil, v1.HookStepPending},
		{"from step_running", []hookfsm.Event{beg, aw}, nil, v1.HookStepRunning},
		{"from step_validating", []hookfsm.Event{beg, val, aw}, nil, v1.HookStepValidating},
		{"from recovering", []hookfsm.Event{beg, intr, aw}, nil, v1.HookRecovering},
		{"no history: the phase decides", []hookfsm.Event{beg, val, aw}, func(st *v1.HookStatus) { st.History = nil }, v1.HookStepValidating},
		{"no history while recovering", []hookfsm.Event{beg, intr, aw}, func(st *v1.HookStatus) { st.History = nil }, v1.HookRecovering},
		{"an impossible From: the phase decides", []hookfsm.Event{beg, aw}, func(st *v1.HookStatus) {
			st.History[len(st.History)-1].From = v1.HookCompleted
		}, v1.HookStepRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := drive(t, newHook(), tc.path...)
			if tc.edit != nil {
				tc.edit(&hook.Status)
			}
			got := apply(t, hook, input(res, 100)).Status
			if got.State != tc.want {
				t.Errorf("resumed to %s, want %s", got.State, tc.want)
			}
			if tc.want == v1.HookRecovering && got.Recovery == nil {
				t.Error("resuming to recovering lost the recovery data")
			}
		})
	}
}

func TestInterrupt(t *testing.T) {
	hook := drive(t, newHook(), ini, beg)
	in := input(intr, 50)
	in.Message = "no heartbeat for 5m"
	in.Crash = &hookfsm.Crash{Type: v1.CrashAssigneeLost, LastCheckpoint: "cp-1", FilesChangedSinceCheckpoint: []string{"x.go"}}
	once := apply(t, hook, in)
	rec := once.Status.Recovery
	if rec == nil || rec.CrashType != v1.CrashAssigneeLost || !rec.DetectedAt.Equal(&in.Now) || rec.LastState != v1.HookStepRunning ||
		rec.LastCheckpoint != "cp-1" || !reflect.DeepEqual(rec.FilesChangedSinceCheckpoint, []string{"x.go"}) ||
		rec.RecommendedAction != hookfsm.RecommendedAction(hook, v1.HookStepRunning) {
		t.Fatalf("recovery = %+v", rec)
	}
	if last := once.Status.History[len(once.Status.History)-1]; last.Message != in.Message {
		t.Errorf("the detail is not in the history: %+v", last)
	}
	if !reflect.DeepEqual(once.Status.LastHeartbeat, hook.Status.LastHeartbeat) {
		t.Error("an interrupt moved the agent's last heartbeat")
	}

	again := input(intr, 90)
	again.Crash = &hookfsm.Crash{Type: v1.CrashManual, RecommendedAction: "ask"}
	twice := apply(t, once, again)
	if !reflect.DeepEqual(twice.Status, once.Status) {
		t.Error("interrupting twice differs from interrupting once")
	}

	in.Crash.RecommendedAction = "read NOTES.md first"
	if got := apply(t, hook, in).Status.Recovery.RecommendedAction; got != "read NOTES.md first" {
		t.Errorf("recommendedAction = %q, want the caller's", got)
	}
}

func TestTerminalEventsClearRecovery(t *testing.T) {
	hook := drive(t, newHook(), ini, beg, intr)
	for _, e := range []hookfsm.Event{ab, fl} {
		got := apply(t, hook, input(e, 100)).Status
		if got.Recovery != nil || got.TerminalAt == nil {
			t.Errorf("%s: recovery %+v, terminalAt %v", e, got.Recovery, got.TerminalAt)
		}
		if want := map[hookfsm.Event]v1.StepPhase{ab: v1.StepRunning, fl: v1.StepFailed}[e]; got.Steps[0].Phase != want {
			t.Errorf("%s: step phase %s, want %s", e, got.Steps[0].Phase, want)
		}
	}
}

func TestStepsFollowSpecEdits(t *testing.T) {
	hook := drive(t, newHook(), ini, beg, val, pass)
	hook.Spec.Steps = []v1.Step{{Name: "design"}, {Name: "api"}, {Name: "implement", Description: "now longer"}, {Name: "docs"}}
	hook.Status.CurrentStep.Index = 2
	got := apply(t, hook, input(beg, 100)).Status
	names := []string{}
	for _, r := range got.Steps {
		names = append(names, r.Name+"="+string(r.Phase))
	}
	if want := []string{"design=Pending", "api=Passed", "implement=Running", "docs=Pending"}; !reflect.DeepEqual(names, want) {
		t.Errorf("steps %v, want %v", names, want)
	}
}

func TestHistoryIsBounded(t *testing.T) {
	hook := drive(t, newHook(), ini)
	for len(hook.Status.History) < v1.HookHistoryLimit-1 {
		hook = drive(t, hook, aw, res)
	}
	if len(hook.Status.History) != v1.HookHistoryLimit-1 || hook.Status.HistoryDropped != 0 {
		t.Fatalf("setup: %d entries, %d dropped", len(hook.Status.History), hook.Status.HistoryDropped)
	}
	hook = drive(t, hook, aw, res, aw)
	st := hook.Status
	if len(st.History) != v1.HookHistoryLimit || st.HistoryDropped != 2 {
		t.Fatalf("%d entries, %d dropped; want %d and 2", len(st.History), st.HistoryDropped, v1.HookHistoryLimit)
	}
	if st.History[0].Event != string(res) || st.History[len(st.History)-1].Event != string(aw) {
		t.Errorf("kept the wrong entries: first %+v, last %+v", st.History[0], st.History[len(st.History)-1])
	}
	if s, step, attempt, err := hookfsm.Fold(st.History); err != nil || s != st.State || step != 0 || attempt != 1 {
		t.Errorf("Fold of the truncated history = %s %d %d %v", s, step, attempt, err)
	}
}

func TestInvalidInputChangesNothing(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name  string
		hook  func(*v1.Hook)
		in    func(*hookfsm.Input)
		field string
	}{
		{"unknown event", nil, func(in *hookfsm.Input) { in.Event = "jump" }, "event"},
		{"no time", nil, func(in *hookfsm.Input) { in.Now = metav1.Time{} }, "now"},
		{"long actor", nil, func(in *hookfsm.Input) { in.Actor = long(254) }, "actor"},
		{"long message", nil, func(in *hookfsm.Input) { in.Message = long(1025) }, "message"},
		{"long workingOn", nil, func(in *hookfsm.Input) { in.WorkingOn = long(2049) }, "workingOn"},
		{"too many files", nil, func(in *hookfsm.Input) { in.Files = make([]string, 257) }, "files"},
		{"too many receipts", nil, func(in *hookfsm.Input) { in.Receipts = make([]v1.Receipt, 17) }, "receipts"},
		{"fail without a reason", nil, func(in *hookfsm.Input) { in.Event, in.Message = fl, " " }, "message"},
		{"await without a reason", nil, func(in *hookfsm.Input) { in.Event, in.Message = aw, "" }, "message"},
		{"no steps", func(h *v1.Hook) { h.Spec.Steps = nil }, nil, "spec.steps"},
		{"interrupt without a crash", nil, func(in *hookfsm.Input) { in.Event, in.Crash = intr, nil }, "crash"},
		{"unknown crash type", nil, func(in *hookfsm.Input) { in.Event, in.Crash = intr, &hookfsm.Crash{Type: "meteor"} }, "crash.type"},
		{"long recommended action", nil, func(in *hookfsm.Input) {
			in.Event, in.Crash = intr, &hookfsm.Crash{Type: v1.CrashManual, RecommendedAction: long(2049)}
		}, "crash.recommendedAction"},
		{"too many changed files", nil, func(in *hookfsm.Input) {
			in.Event, in.Crash = intr, &hookfsm.Crash{Type: v1.CrashManual, FilesChangedSinceCheckpoint: make([]string, 257)}
		}, "crash.filesChangedSinceCheckpoint"},
		{"unknown state", func(h *v1.Hook) { h.Status.State = "sleeping" }, nil, "status.state"},
		{"no current step", func(h *v1.Hook) { h.Status.CurrentStep = nil }, nil, "status.currentStep"},
		{"current step out of range", func(h *v1.Hook) { h.Status.CurrentStep.Index = 3 }, nil, "status.currentStep.index"},
		{"negative current step", func(h *v1.Hook) { h.Status.CurrentStep.Index = -1 }, nil, "status.currentStep.index"},
		{"attempt zero", func(h *v1.Hook) { h.Status.CurrentStep.Attempt = 0 }, nil, "status.currentStep.attempt"},
		{"initializing with a bad current step", func(h *v1.Hook) {
			h.Status = v1.HookStatus{CurrentStep: &v1.CurrentStep{Index: 7, Attempt: 1}}
		}, nil, "status.currentStep.index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := drive(t, newHook(), ini)
			if tc.hook != nil {
				tc.hook(hook)
			}
			before := hook.DeepCopy()
			in := input(hb, 10)
			if tc.in != nil {
				tc.in(&in)
			}
			st, err := hookfsm.Apply(hook, in)
			var ie *hookfsm.InvalidError
			if !errors.As(err, &ie) || ie.Field != tc.field || ie.Hook != "task" || st != nil {
				t.Fatalf("got %v, %v; want an InvalidError naming %s", st, err, tc.field)
			}
			if !errors.Is(err, hookfsm.ErrRejected) {
				t.Fatalf("an InvalidError is not ErrRejected: %v", err)
			}
			if !strings.Contains(err.Error(), tc.field+": ") {
				t.Errorf("message %q does not name %s", err, tc.field)
			}
			if !reflect.DeepEqual(hook, before) {
				t.Error("invalid input changed the hook")
			}
		})
	}
}

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
	"reflect"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// TestCheckHistory edits the status of Hooks that Apply drove, as a person
// editing the store file would, and checks which fields CheckHistory names.
func TestCheckHistory(t *testing.T) {
	running := []hookfsm.Event{ini, beg, val, pass, beg}
	tests := []struct {
		name   string
		events []hookfsm.Event
		edit   func(st *v1.HookStatus)
		fields []string
	}{
		{"untouched, new", nil, func(*v1.HookStatus) {}, nil},
		{"untouched, running", running, func(*v1.HookStatus) {}, nil},
		{"untouched, completed", []hookfsm.Event{ini, beg, val, pass, beg, val, pass, beg, val, pass}, func(*v1.HookStatus) {}, nil},
		{"untouched, failed on the last attempt", []hookfsm.Event{ini, beg, val, fv, val, fv, val, fv}, func(*v1.HookStatus) {}, nil},
		{"untouched, abandoned before initialization", []hookfsm.Event{ab}, func(*v1.HookStatus) {}, nil},
		{"untouched, recovering from a validation", []hookfsm.Event{ini, beg, val, intr}, func(*v1.HookStatus) {}, nil},
		{"untouched, awaiting", []hookfsm.Event{ini, beg, aw}, func(*v1.HookStatus) {}, nil},
		{"state completed on a running hook", running, func(st *v1.HookStatus) { st.State = v1.HookCompleted },
			[]string{"status.state"}},
		{"state and step set to completed", running, func(st *v1.HookStatus) {
			st.State = v1.HookCompleted
			st.Steps[1].Phase = v1.StepPassed
		}, []string{"status.state", "status.steps[1].phase"}},
		{"a failed attempt forgiven", []hookfsm.Event{ini, beg, val, fv}, func(st *v1.HookStatus) {
			st.CurrentStep.Attempt = 1
			st.Steps[0].Attempts = 1
		}, []string{"status.currentStep.attempt", "status.steps[0].attempts"}},
		{"attempt count of the running step", running, func(st *v1.HookStatus) { st.Steps[1].Attempts = 3 },
			[]string{"status.steps[1].attempts"}},
		{"a step skipped", running, func(st *v1.HookStatus) { st.CurrentStep.Index = 2 },
			[]string{"status.currentStep.index"}},
		{"a passed step reset", running, func(st *v1.HookStatus) { st.Steps[0].Phase = v1.StepPending },
			[]string{"status.steps[0].phase"}},
		{"a later step marked passed", running, func(st *v1.HookStatus) { st.Steps[2].Phase = v1.StepPassed },
			[]string{"status.steps[2].phase"}},
		{"recovering step marked passed", []hookfsm.Event{ini, beg, val, intr}, func(st *v1.HookStatus) { st.Steps[0].Phase = v1.StepPassed },
			[]string{"status.steps[0].phase"}},
		{"current step removed", running, func(st *v1.HookStatus) { st.CurrentStep = nil },
			[]string{"status.currentStep"}},
		{"history rewritten", running, func(st *v1.HookStatus) { st.History[1].To = v1.HookCompleted },
			[]string{"status.history"}},
		{"a passed step's attempt count", running, func(st *v1.HookStatus) { st.Steps[0].Attempts = 3 },
			[]string{"status.steps[0].attempts"}},
		{"oldest entries removed, uncounted", running, func(st *v1.HookStatus) { st.History = st.History[2:] },
			[]string{"status.historyDropped"}},
		{"dropped entries counted on a full history", running, func(st *v1.HookStatus) { st.HistoryDropped = 4 },
			[]string{"status.historyDropped"}},
		{"dropped count on a history shorter than the limit", running, func(st *v1.HookStatus) {
			st.History, st.HistoryDropped = st.History[2:], 2
		}, []string{"status.historyDropped"}},
		{"history emptied", running, func(st *v1.HookStatus) { st.History, st.HistoryDropped = nil, 5 },
			[]string{"status.historyDropped", "status.state", "status.currentStep", "status.steps[0].phase"}},
		{"initialized without history", nil, func(st *v1.HookStatus) {
			st.State = v1.HookStepRunning
			st.CurrentStep = &v1.CurrentStep{Attempt: 1}
		}, []string{"status.state", "status.currentStep"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := drive(t, newHook(), tt.events...)
			tt.edit(&h.Status)
			ds := hookfsm.CheckHistory(h)
			if got := hookfsm.Fields(ds); !reflect.DeepEqual(got, tt.fields) {
				t.Fatalf("fields %q, want %q (%s)", got, tt.fields, hookfsm.Summary(ds))
			}
			for _, d := range ds {
				if d.Recorded == "" || d.Replayed == "" {
					t.Errorf("disagreement %+v lacks what was recorded or replayed", d)
				}
			}
		})
	}
}

func TestDisagreementString(t *testing.T) {
	d := hookfsm.Disagreement{Field: "status.state", Recorded: "completed", Replayed: "step_running"}
	if got, want := d.String(), "status.state is completed; history says step_running"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if got := hookfsm.Summary([]hookfsm.Disagreement{d, d}); got != d.String()+"; "+d.String() {
		t.Fatalf("Summary = %q", got)
	}
}

// TestCheckHistoryTruncated drives a Hook past the history limit: the
// truncated history still checks the state, the current step and the
// dropped count, but no longer the attempt count of a step whose pass was
// dropped.
func TestCheckHistoryTruncated(t *testing.T) {
	events := []hookfsm.Event{ini, beg, val, pass, beg}
	for range v1.HookHistoryLimit / 2 {
		events = append(events, aw, res)
	}
	h := drive(t, newHook(), events...)
	if h.Status.HistoryDropped == 0 || len(h.Status.History) != v1.HookHistoryLimit {
		t.Fatalf("history %d entries, %d dropped: want it truncated", len(h.Status.History), h.Status.HistoryDropped)
	}
	tests := []struct {
		name   string
		edit   func(st *v1.HookStatus)
		fields []string
	}{
		{"untouched", func(*v1.HookStatus) {}, nil},
		{"state", func(st *v1.HookStatus) { st.State = v1.HookCompleted }, []string{"status.state"}},
		{"current attempt", func(st *v1.HookStatus) { st.CurrentStep.Attempt = 2 }, []string{"status.currentStep.attempt"}},
		{"dropped count reset", func(st *v1.HookStatus) { st.HistoryDropped = 0 }, []string{"status.historyDropped"}},
		{"an entry removed", func(st *v1.HookStatus) { st.History = st.History[1:] }, []string{"status.historyDropped"}},
		// The pass of step 1 was dropped: its attempt count cannot be checked.
		{"attempts of a step passed before the first entry", func(st *v1.HookStatus) { st.Steps[0].Attempts = 3 }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := h.DeepCopy()
			tt.edit(&c.Status)
			ds := hookfsm.CheckHistory(c)
			if got := hookfsm.Fields(ds); !reflect.DeepEqual(got, tt.fields) {
				t.Fatalf("fields %q, want %q (%s)", got, tt.fields, hookfsm.Summary(ds))
			}
		})
	}
}

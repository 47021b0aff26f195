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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// newHook is a fresh three-step Hook, as a user creates it.
func newHook() *v1.Hook {
	return &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"},
		Spec: v1.HookSpec{
			Goal:        "add pagination",
			MaxAttempts: 3,
			Steps:       []v1.Step{{Name: "api"}, {Name: "implement"}, {Name: "docs"}},
		},
	}
}

// input is a valid input for e at the n-th second.
func input(e hookfsm.Event, n int) hookfsm.Input {
	in := hookfsm.Input{Event: e, Now: metav1.NewTime(t0.Add(time.Duration(n) * time.Second)), Actor: "agent-1"}
	switch e {
	case hookfsm.Await, hookfsm.Fail:
		in.Message = "which database?"
	case hookfsm.Interrupt:
		in.Crash = &hookfsm.Crash{Type: v1.CrashStaleHeartbeat}
	}
	return in
}

// drive applies events to hook in order and fails the test on any error.
func drive(t *testing.T, hook *v1.Hook, events ...hookfsm.Event) *v1.Hook {
	t.Helper()
	for _, e := range events {
		st, err := hookfsm.Apply(hook, input(e, len(hook.Status.History)+int(hook.Status.HistoryDropped)))
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		hook = hook.DeepCopy()
		hook.Status = *st
	}
	return hook
}

const (
	ini  = hookfsm.Initialize
	beg  = hookfsm.Begin
	val  = hookfsm.Validate
	pass = hookfsm.Pass
	fv   = hookfsm.FailValidation
	aw   = hookfsm.Await
	res  = hookfsm.Resume
	intr = hookfsm.Interrupt
	ab   = hookfsm.Abandon
	fl   = hookfsm.Fail
	hb   = hookfsm.Heartbeat
)

// inState returns a Hook in state s. The working states are on the second
// step (index 1), attempt 1; awaiting_human and recovering were entered
// from step_running there.
func inState(t *testing.T, s v1.HookState) *v1.Hook {
	t.Helper()
	toSecond := []hookfsm.Event{ini, beg, val, pass}
	paths := map[v1.HookState][]hookfsm.Event{
		v1.HookInitializing:   nil,
		v1.HookStepPending:    toSecond,
		v1.HookStepRunning:    append(toSecond, beg),
		v1.HookStepValidating: append(toSecond, beg, val),
		v1.HookAwaitingHuman:  append(toSecond, beg, aw),
		v1.HookRecovering:     append(toSecond, beg, intr),
		v1.HookCompleted:      append(toSecond, beg, val, pass, beg, val, pass),
		v1.HookFailed:         append(toSecond, fl),
		v1.HookAbandoned:      append(toSecond, ab),
	}
	hook := drive(t, newHook(), paths[s]...)
	if got := hook.Status.State.OrInitializing(); got != s {
		t.Fatalf("fixture for %s is in %s", s, got)
	}
	return hook
}

// TestEveryStateEventPair applies every event in every state and checks
// the outcome against the transition table of docs/lifecycle.md.
func TestEveryStateEventPair(t *testing.T) {
	type want struct {
		state         v1.HookState // empty: the event is rejected
		step, attempt int32
		entries       int
	}
	none := want{}
	at := func(s v1.HookState, step, attempt int32, entries int) want { return want{s, step, attempt, entries} }
	terminal := map[hookfsm.Event]want{ini: none, beg: none, val: none, pass: none, fv: none, aw: none, res: none, intr: none, ab: none, fl: none, hb: none}
	table := map[v1.HookState]map[hookfsm.Event]want{
		v1.HookInitializing: {
			ini: at(v1.HookStepPending, 0, 1, 1), beg: at(v1.HookStepRunning, 0, 1, 2), val: none, pass: none, fv: none,
			aw: at(v1.HookAwaitingHuman, 0, 1, 2), res: none, intr: at(v1.HookRecovering, 0, 1, 2),
			ab: at(v1.HookAbandoned, 0, 0, 1), fl: at(v1.HookFailed, 0, 0, 1), hb: at(v1.HookInitializing, 0, 0, 0),
		},
		v1.HookStepPending: {
			ini: none, beg: at(v1.HookStepRunning, 1, 1, 1), val: none, pass: none, fv: none,
			aw: at(v1.HookAwaitingHuman, 1, 1, 1), res: none, intr: at(v1.HookRecovering, 1, 1, 1),
			ab: at(v1.HookAbandoned, 1, 1, 1), fl: at(v1.HookFailed, 1, 1, 1), hb: at(v1.HookStepPending, 1, 1, 0),
		},
		v1.HookStepRunning: {
			ini: none, beg: none, val: at(v1.HookStepValidating, 1, 1, 1), pass: none, fv: none,
			aw: at(v1.HookAwaitingHuman, 1, 1, 1), res: none, intr: at(v1.HookRecovering, 1, 1, 1),
			ab: at(v1.HookAbandoned, 1, 1, 1), fl: at(v1.HookFailed, 1, 1, 1), hb: at(v1.HookStepRunning, 1, 1, 0),
		},
		v1.HookStepValidating: {
			ini: none, beg: none, val: none, pass: at(v1.HookStepPending, 2, 1, 1), fv: at(v1.HookStepRunning, 1, 2, 1),
			aw: at(v1.HookAwaitingHuman, 1, 1, 1), res: none, intr: at(v1.HookRecovering, 1, 1, 1),
			ab: at(v1.HookAbandoned, 1, 1, 1), fl: at(v1.HookFailed, 1, 1, 1), hb: at(v1.HookStepValidating, 1, 1, 0),
		},
		v1.HookAwaitingHuman: {
			ini: none, beg: none, val: none, pass: none, fv: none,
			aw: none, res: at(v1.HookStepRunning, 1, 1, 1), intr: none,
			ab: at(v1.HookAbandoned, 1, 1, 1), fl: at(v1.HookFailed, 1, 1, 1), hb: at(v1.HookAwaitingHuman, 1, 1, 0),
		},
		v1.HookRecovering: {
			ini: none, beg: at(v1.HookStepRunning, 1, 2, 1), val: none, pass: none, fv: none,
			aw: at(v1.HookAwaitingHuman, 1, 1, 1), res: at(v1.HookStepRunning, 1, 2, 1), intr: at(v1.HookRecovering, 1, 1, 0),
			ab: at(v1.HookAbandoned, 1, 1, 1), fl: at(v1.HookFailed, 1, 1, 1), hb: at(v1.HookRecovering, 1, 1, 0),
		},
		v1.HookCompleted: terminal,
		v1.HookFailed:    terminal,
		v1.HookAbandoned: terminal,
	}
	for _, s := range hookfsm.States() {
		for _, e := range hookfsm.Events() {
			w, ok := table[s][e]
			if !ok {
				t.Fatalf("the table lacks (%s, %s)", s, e)
			}
			t.Run(string(s)+"/"+string(e), func(t *testing.T) {
				hook := inState(t, s)
				before := hook.DeepCopy()
				in := input(e, 1000)
				got, err := hookfsm.Apply(hook, in)
				if !reflect.DeepEqual(hook, before) {
					t.Fatal("Apply modified its argument")
				}
				if hookfsm.Allowed(s, e) != (w.state != "") {
					t.Errorf("Allowed(%s, %s) disagrees with the table", s, e)
				}
				if w.state == "" {
					var te *hookfsm.TransitionError
					if !errors.As(err, &te) || te.State != s || te.Event != e || te.Hook != "task" {
						t.Fatalf("want a TransitionError for %s in %s, got %v", e, s, err)
					}
					if !errors.Is(err, hookfsm.ErrRejected) {
						t.Fatalf("a TransitionError is not ErrRejected: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				step, attempt := int32(0), int32(0)
				if got.CurrentStep != nil {
					step, attempt = got.CurrentStep.Index, got.CurrentStep.Attempt
				}
				entries := len(got.History) - len(before.Status.History)
				if got.State.OrInitializing() != w.state || step != w.step || attempt != w.attempt || entries != w.entries {
					t.Fatalf("got %s step %d attempt %d with %d new entries, want %+v", got.State, step, attempt, entries, w)
				}
				noop := e == intr && s == v1.HookRecovering
				if noop && !reflect.DeepEqual(got, &before.Status) {
					t.Fatal("interrupting a recovering hook changed its status")
				}
				refreshed := e != intr && !noop
				if refreshed != (got.LastHeartbeat != nil && got.LastHeartbeat.Time.Equal(in.Now.Time)) {
					t.Errorf("lastHeartbeat = %v, refreshed should be %v", got.LastHeartbeat, refreshed)
				}
				if w.state.IsTerminal() != (got.TerminalAt != nil) {
					t.Errorf("terminalAt = %v in %s", got.TerminalAt, got.State)
				}
				if entries > 0 {
					last := got.History[len(got.History)-1]
					if last.To != w.state || last.Actor != "agent-1" || !last.Time.Equal(&in.Now) || last.Step != step || last.Attempt != attempt {
						t.Errorf("last history entry %+v", last)
					}
				}
				fs, fstep, fattempt, err := hookfsm.Fold(got.History)
				if err != nil || fs != w.state || fstep != step || fattempt != attempt {
					t.Errorf("Fold = %s %d %d %v", fs, fstep, fattempt, err)
				}
			})
		}
	}
}

// TestPassKeepsTheFilesTouched checks what a passed step keeps of its
// files: those the pass detected since the step's base tree, else those its
// last begin recorded; and that the first begin's base tree survives a
// failed validation, a crash and a resume, and is not carried to the next
// step.
func TestPassKeepsTheFilesTouched(t *testing.T) {
	const base, later = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	with := func(e hookfsm.Event, files []string, tree string) func(h *v1.Hook) hookfsm.Input {
		return func(h *v1.Hook) hookfsm.Input {
			in := input(e, len(h.Status.History))
			in.Files, in.BaseTree = files, tree
			return in
		}
	}
	cases := []struct {
		name      string
		inputs    []func(h *v1.Hook) hookfsm.Input
		wantBase  string
		wantFiles []string
	}{
		{"files recorded at begin", []func(*v1.Hook) hookfsm.Input{with(beg, []string{"a.go", "dir/b.go"}, base), with(val, nil, ""), with(pass, nil, "")},
			base, []string{"a.go", "dir/b.go"}},
		{"no files", []func(*v1.Hook) hookfsm.Input{with(beg, nil, ""), with(val, nil, ""), with(pass, nil, "")}, "", nil},
		{"the pass's files replace the begin's", []func(*v1.Hook) hookfsm.Input{with(beg, []string{"settings.json"}, base), with(val, nil, ""), with(pass, []string{"new.go"}, "")},
			base, []string{"new.go"}},
		{"a pass that detected nothing changed", []func(*v1.Hook) hookfsm.Input{with(beg, []string{"a.go"}, base), with(val, nil, ""), with(pass, []string{}, "")},
			base, []string{}},
		{"the first base survives a failed validation and a crash", []func(*v1.Hook) hookfsm.Input{
			with(beg, nil, base), with(val, nil, ""), with(fv, nil, ""), with(intr, nil, ""), with(beg, []string{"a.go"}, later), with(val, nil, ""), with(pass, nil, "")},
			base, []string{"a.go"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hook := drive(t, newHook(), ini)
			for _, in := range tc.inputs {
				if in(hook).Event == pass && hook.Status.CurrentStep.BaseTree != tc.wantBase {
					t.Errorf("before the pass, baseTree = %q, want %q", hook.Status.CurrentStep.BaseTree, tc.wantBase)
				}
				st, err := hookfsm.Apply(hook, in(hook))
				if err != nil {
					t.Fatalf("%s: %v", in(hook).Event, err)
				}
				hook = hook.DeepCopy()
				hook.Status = *st
			}
			if got := hook.Status.Steps[0].FilesTouched; !reflect.DeepEqual(got, tc.wantFiles) && (len(got) != 0 || len(tc.wantFiles) != 0) {
				t.Errorf("passed step's filesTouched = %q, want %q", got, tc.wantFiles)
			}
			if cs := hook.Status.CurrentStep; cs.Index != 1 || len(cs.FilesTouched) != 0 || cs.BaseTree != "" {
				t.Errorf("the next step starts with %+v", cs)
			}
		})
	}
}

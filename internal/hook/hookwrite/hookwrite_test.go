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

package hookwrite_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
)

// TestApplyEvents drives a two-step Hook and checks the Events each
// transition reports: one per history entry it appends, each with its type,
// reason, action and a note naming the actor. It covers every reason of
// docs/lifecycle.md's Event table that hookwrite records, and the inputs
// that append more than one entry (a begin, await or interrupt on a Hook no
// reconciler initialized yet, a begin from recovering).
func TestApplyEvents(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	opts := hookwrite.Options{Actor: "agent-3", Now: func() time.Time { return now }}
	type want struct{ typ, reason, action string }
	normal := func(reason, action string) want { return want{corev1.EventTypeNormal, reason, action} }
	warning := func(reason, action string) want { return want{corev1.EventTypeWarning, reason, action} }
	initialized := normal(hookwrite.ReasonInitialized, "Initialize")
	begun := []hookfsm.Input{{Event: hookfsm.Initialize}, {Event: hookfsm.Begin}}
	tests := []struct {
		name   string
		before []hookfsm.Input
		in     hookfsm.Input
		want   []want
	}{
		{"initialize", nil, hookfsm.Input{Event: hookfsm.Initialize}, []want{initialized}},
		{"begin on an initialized Hook", []hookfsm.Input{{Event: hookfsm.Initialize}}, hookfsm.Input{Event: hookfsm.Begin},
			[]want{normal(hookwrite.ReasonStepBegun, "Begin")}},
		{"begin before any initialization", nil, hookfsm.Input{Event: hookfsm.Begin},
			[]want{initialized, normal(hookwrite.ReasonStepBegun, "Begin")}},
		{"validate", begun, hookfsm.Input{Event: hookfsm.Validate}, []want{normal(hookwrite.ReasonValidationStarted, "Validate")}},
		{"pass of a step before the last", append(begun, hookfsm.Input{Event: hookfsm.Validate}), hookfsm.Input{Event: hookfsm.Pass},
			[]want{normal(hookwrite.ReasonValidationPassed, "Pass")}},
		{"pass of the last step", append(begun, hookfsm.Input{Event: hookfsm.Validate}, hookfsm.Input{Event: hookfsm.Pass}, hookfsm.Input{Event: hookfsm.Begin}, hookfsm.Input{Event: hookfsm.Validate}),
			hookfsm.Input{Event: hookfsm.Pass}, []want{normal(hookwrite.ReasonCompleted, "Pass")}},
		{"await", begun, hookfsm.Input{Event: hookfsm.Await, Message: "which database?"}, []want{normal(hookwrite.ReasonAwaitingHuman, "Await")}},
		{"await before any initialization", nil, hookfsm.Input{Event: hookfsm.Await, Message: "which database?"},
			[]want{initialized, normal(hookwrite.ReasonAwaitingHuman, "Await")}},
		{"resume after awaiting", append(begun, hookfsm.Input{Event: hookfsm.Await, Message: "which database?"}), hookfsm.Input{Event: hookfsm.Resume},
			[]want{normal(hookwrite.ReasonResumed, "Resume")}},
		{"begin from recovering", append(begun, hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashManual}}), hookfsm.Input{Event: hookfsm.Begin},
			[]want{normal(hookwrite.ReasonResumed, "Resume")}},
		{"abandon", begun, hookfsm.Input{Event: hookfsm.Abandon}, []want{warning(hookwrite.ReasonAbandoned, "Abandon")}},
		{"failed validation", append(begun, hookfsm.Input{Event: hookfsm.Validate}), hookfsm.Input{Event: hookfsm.FailValidation},
			[]want{warning(hookwrite.ReasonValidationFailed, "FailValidation")}},
		{"interrupt", begun, hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashAssigneeLost}},
			[]want{warning(v1.ReasonAssigneeLost, "Interrupt")}},
		{"interrupt before any initialization", nil, hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashStaleHeartbeat}},
			[]want{initialized, warning(v1.ReasonHeartbeatExpired, "Interrupt")}},
		{"fail", nil, hookfsm.Input{Event: hookfsm.Fail, Message: "wrong repo"}, []want{warning(hookwrite.ReasonFailed, "Fail")}},
		{"heartbeat records no event", begun, hookfsm.Input{Event: hookfsm.Heartbeat}, nil},
		{"a repeated interrupt records no event", append(begun, hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashManual}}),
			hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashManual}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"}}
			h.Spec.Steps = []v1.Step{{Name: "build"}, {Name: "test"}}
			for _, in := range tt.before {
				if _, err := hookwrite.Apply(h, in, opts); err != nil {
					t.Fatal(err)
				}
			}
			n := len(h.Status.History)
			res, err := hookwrite.Apply(h, tt.in, opts)
			if err != nil {
				t.Fatal(err)
			}
			if added := len(h.Status.History) - n; added != len(res.Events) {
				t.Fatalf("%d history entries appended, %d Events: %+v", added, len(res.Events), res.Events)
			}
			if len(res.Events) != len(tt.want) {
				t.Fatalf("events %+v, want %d", res.Events, len(tt.want))
			}
			for i, e := range res.Events {
				w, entry := tt.want[i], h.Status.History[n+i]
				head := fmt.Sprintf("%s by agent-3: %s → %s", entry.Event, entry.From.OrInitializing(), entry.To)
				if e.Type != w.typ || e.Reason != w.reason || e.Action != w.action || !strings.HasPrefix(e.Note, head) {
					t.Errorf("event %d: %+v; want %s %s %s with a note starting %q", i, e, w.typ, w.reason, w.action, head)
				}
				if last := i == len(res.Events)-1; last != strings.Contains(e.Note, "; now ") {
					t.Errorf("event %d of %d: note %q; only the last says where the Hook is now", i+1, len(res.Events), e.Note)
				}
				if tt.in.Message != "" && i == len(res.Events)-1 && !strings.HasSuffix(e.Note, ": "+tt.in.Message) {
					t.Errorf("note %q lacks the message %q", e.Note, tt.in.Message)
				}
			}
			if tt.want != nil && (!res.Changed || res.To != h.Status.State) {
				t.Errorf("result %+v, state %s", res, h.Status.State)
			}
		})
	}
}

// TestApplyRejectedLeavesTheHook checks that a rejected event changes nothing.
func TestApplyRejectedLeavesTheHook(t *testing.T) {
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task"}}
	h.Spec.Steps = []v1.Step{{Name: "build"}}
	before := h.DeepCopy()
	if _, err := hookwrite.Apply(h, hookfsm.Input{Event: hookfsm.Pass}, hookwrite.Options{Actor: "x"}); err == nil {
		t.Fatal("pass on a new Hook was accepted")
	}
	if h.Status.State != before.Status.State || len(h.Status.History) != 0 {
		t.Fatalf("status changed: %+v", h.Status)
	}
}

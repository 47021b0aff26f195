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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
)

// TestApplyEvents drives a two-step Hook and checks the Event each
// transition reports: type, reason, action, and a note naming the actor. It
// covers every reason of docs/lifecycle.md's Event table that hookwrite
// records.
func TestApplyEvents(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	opts := hookwrite.Options{Actor: "agent-3", Now: func() time.Time { return now }}
	tests := []struct {
		name    string
		before  []hookfsm.Input
		in      hookfsm.Input
		typ     string
		reason  string
		action  string
		noEvent bool
	}{
		{"initialize", nil, hookfsm.Input{Event: hookfsm.Initialize}, corev1.EventTypeNormal, hookwrite.ReasonInitialized, "Initialize", false},
		{"begin", nil, hookfsm.Input{Event: hookfsm.Begin}, corev1.EventTypeNormal, hookwrite.ReasonStepBegun, "Begin", false},
		{"validate", []hookfsm.Input{{Event: hookfsm.Begin}}, hookfsm.Input{Event: hookfsm.Validate},
			corev1.EventTypeNormal, hookwrite.ReasonValidationStarted, "Validate", false},
		{"pass of a step before the last", []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Validate}}, hookfsm.Input{Event: hookfsm.Pass},
			corev1.EventTypeNormal, hookwrite.ReasonValidationPassed, "Pass", false},
		{"pass of the last step", []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Validate}, {Event: hookfsm.Pass}, {Event: hookfsm.Begin}, {Event: hookfsm.Validate}},
			hookfsm.Input{Event: hookfsm.Pass}, corev1.EventTypeNormal, hookwrite.ReasonCompleted, "Pass", false},
		{"await", []hookfsm.Input{{Event: hookfsm.Begin}}, hookfsm.Input{Event: hookfsm.Await, Message: "which database?"},
			corev1.EventTypeNormal, hookwrite.ReasonAwaitingHuman, "Await", false},
		{"resume after awaiting", []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Await, Message: "which database?"}}, hookfsm.Input{Event: hookfsm.Resume},
			corev1.EventTypeNormal, hookwrite.ReasonResumed, "Resume", false},
		{"begin from recovering", []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashManual}}}, hookfsm.Input{Event: hookfsm.Begin},
			corev1.EventTypeNormal, hookwrite.ReasonResumed, "Begin", false},
		{"abandon", []hookfsm.Input{{Event: hookfsm.Begin}}, hookfsm.Input{Event: hookfsm.Abandon},
			corev1.EventTypeWarning, hookwrite.ReasonAbandoned, "Abandon", false},
		{"failed validation", []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Validate}}, hookfsm.Input{Event: hookfsm.FailValidation},
			corev1.EventTypeWarning, hookwrite.ReasonValidationFailed, "FailValidation", false},
		{"interrupt", []hookfsm.Input{{Event: hookfsm.Begin}}, hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashAssigneeLost}},
			corev1.EventTypeWarning, v1.ReasonAssigneeLost, "Interrupt", false},
		{"fail", nil, hookfsm.Input{Event: hookfsm.Fail, Message: "wrong repo"}, corev1.EventTypeWarning, hookwrite.ReasonFailed, "Fail", false},
		{"heartbeat records no event", []hookfsm.Input{{Event: hookfsm.Begin}}, hookfsm.Input{Event: hookfsm.Heartbeat}, "", "", "", true},
		{"a repeated interrupt records no event", []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashManual}}},
			hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashManual}}, "", "", "", true},
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
			res, err := hookwrite.Apply(h, tt.in, opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.noEvent {
				if res.Event != nil {
					t.Fatalf("event %+v, want none", res.Event)
				}
				return
			}
			e := res.Event
			if e == nil || e.Type != tt.typ || e.Reason != tt.reason || e.Action != tt.action || !strings.Contains(e.Note, "by agent-3") {
				t.Fatalf("event %+v; want %s %s %s naming agent-3", e, tt.typ, tt.reason, tt.action)
			}
			if !res.Changed || res.To != h.Status.State {
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

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

package claim

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestClaimable(t *testing.T) {
	deleting := metav1.Now()
	tests := []struct {
		name string
		hook v1.Hook
		want bool
	}{
		{"new", v1.Hook{}, true},
		{"initializing", v1.Hook{Status: v1.HookStatus{State: v1.HookInitializing}}, true},
		{"step pending", v1.Hook{Status: v1.HookStatus{State: v1.HookStepPending}}, true},
		{"recovering", v1.Hook{Status: v1.HookStatus{State: v1.HookRecovering}}, true},
		{"running", v1.Hook{Status: v1.HookStatus{State: v1.HookStepRunning}}, false},
		{"awaiting a person", v1.Hook{Status: v1.HookStatus{State: v1.HookAwaitingHuman}}, false},
		{"completed", v1.Hook{Status: v1.HookStatus{State: v1.HookCompleted}}, false},
		{"assigned", v1.Hook{Spec: v1.HookSpec{Assignee: "w"}}, false},
		{"suspended", v1.Hook{Spec: v1.HookSpec{Suspend: true}}, false},
		{"being deleted", v1.Hook{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting}}, false},
		{"status at odds with its history", v1.Hook{Status: v1.HookStatus{State: v1.HookStepPending,
			Conditions: []metav1.Condition{{Type: v1.ConditionHistoryConsistent, Status: metav1.ConditionFalse}}}}, false},
		{"status that agrees with its history", v1.Hook{Status: v1.HookStatus{State: v1.HookStepPending,
			Conditions: []metav1.Condition{{Type: v1.ConditionHistoryConsistent, Status: metav1.ConditionTrue}}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Claimable(&tt.hook); got != tt.want {
				t.Errorf("Claimable = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hook := func(name string, state v1.HookState, age time.Duration) v1.Hook {
		return v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))}, Status: v1.HookStatus{State: state}}
	}
	hooks := []v1.Hook{
		hook("new-b", "", time.Hour),
		hook("new-a", v1.HookInitializing, time.Hour),
		hook("pending-young", v1.HookStepPending, time.Minute),
		hook("recovering", v1.HookRecovering, 0),
		hook("new-old", "", 2*time.Hour),
		hook("pending-old", v1.HookStepPending, time.Hour),
	}
	Order(hooks)
	want := []string{"recovering", "pending-old", "pending-young", "new-old", "new-a", "new-b"}
	for i, h := range hooks {
		if h.Name != want[i] {
			t.Fatalf("position %d: %s, want %s (want order %v)", i, h.Name, want[i], want)
		}
	}
}

func TestAlive(t *testing.T) {
	deleting := metav1.Now()
	worker := func(phase v1.WorkerPhase) *v1.Worker {
		return &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Status: v1.WorkerStatus{Phase: phase}}
	}
	tests := []struct {
		name   string
		worker *v1.Worker
		refuse string
	}{
		{"new", worker(""), ""},
		{"pending", worker(v1.WorkerPending), ""},
		{"running", worker(v1.WorkerRunning), ""},
		{"restarting", worker(v1.WorkerRestarting), ""},
		{"crashed", worker(v1.WorkerCrashed), "is Crashed"},
		{"crash loop", worker(v1.WorkerCrashLoop), "is CrashLoop"},
		{"stopped", worker(v1.WorkerStopped), "is Stopped"},
		{"lost", worker(v1.WorkerLost), "is Lost"},
		{"being deleted", &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "w", DeletionTimestamp: &deleting}}, "being deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Alive(tt.worker)
			switch {
			case tt.refuse == "" && err != nil:
				t.Fatalf("Alive = %v, want nil", err)
			case tt.refuse != "" && (err == nil || !strings.Contains(err.Error(), tt.refuse) || !strings.Contains(err.Error(), "--worker w")):
				t.Fatalf("Alive = %v, want an error naming the worker and %q", err, tt.refuse)
			}
		})
	}
}

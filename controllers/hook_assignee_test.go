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

package controllers

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestAssigneeLost(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Generation: 3}, Spec: v1.HookSpec{Assignee: "agent"}}
	signal := func(held ...v1.HeldHook) v1.CrashRecord {
		return v1.CrashRecord{Time: now, PID: 42, Reason: "Signaled", Signal: ptr.To[int32](9), Held: held}
	}
	worker := func(phase v1.WorkerPhase, crashes ...v1.CrashRecord) *v1.Worker {
		return &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent"}, Status: v1.WorkerStatus{Phase: phase, Crashes: crashes}}
	}
	deleting := worker(v1.WorkerRunning)
	deleting.DeletionTimestamp = &now
	keeps := worker(v1.WorkerCrashed, signal())
	keeps.Spec.ClearAssigneeOnCrash = ptr.To(false)
	tests := []struct {
		name   string
		hook   *v1.Hook
		worker *v1.Worker
		lost   bool
		why    string
	}{
		{"running, never crashed", hook, worker(v1.WorkerRunning), false, ""},
		{"pending", hook, worker(v1.WorkerPending), false, ""},
		{"restarting on request", hook, worker(v1.WorkerRestarting), false, ""},
		{"no such worker", hook, nil, false, ""},
		{"another worker", hook, &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Status: v1.WorkerStatus{Phase: v1.WorkerCrashed}}, false, ""},
		{"unassigned", &v1.Hook{ObjectMeta: hook.ObjectMeta}, worker(v1.WorkerCrashed), false, ""},
		{"crashed", hook, worker(v1.WorkerCrashed, signal()), true, "Crashed: pid 42 killed by signal 9"},
		{"crash loop", hook, worker(v1.WorkerCrashLoop, signal()), true, "CrashLoop"},
		{"stopped", hook, worker(v1.WorkerStopped), true, "Stopped"},
		{"lost", hook, worker(v1.WorkerLost), true, "Lost"},
		{"being deleted", hook, deleting, true, "deleted"},
		{"clearAssigneeOnCrash false", hook, keeps, false, ""},
		{"restarted, held at this generation", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "task", Generation: 3})), true, "restarted"},
		{"restarted, held in an older record", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "task", Generation: 3}), signal()), true, "restarted"},
		{"restarted, claimed again since", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "task", Generation: 2})), false, ""},
		{"restarted, held another hook", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "other", Generation: 3})), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lost, why := assigneeLost(tt.hook, tt.worker)
			if lost != tt.lost || !strings.Contains(why, tt.why) {
				t.Fatalf("assigneeLost = %v %q, want %v and a reason containing %q", lost, why, tt.lost, tt.why)
			}
		})
	}
}

func TestWorkerMayFree(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name   string
		worker v1.Worker
		want   bool
	}{
		{"running", v1.Worker{Status: v1.WorkerStatus{Phase: v1.WorkerRunning}}, false},
		{"running after a crash that held nothing", v1.Worker{Status: v1.WorkerStatus{Phase: v1.WorkerRunning, Crashes: []v1.CrashRecord{{}}}}, false},
		{"running after a crash that held a hook", v1.Worker{Status: v1.WorkerStatus{Phase: v1.WorkerRunning, Crashes: []v1.CrashRecord{{Held: []v1.HeldHook{{Name: "a"}}}}}}, true},
		{"crashed", v1.Worker{Status: v1.WorkerStatus{Phase: v1.WorkerCrashed}}, true},
		{"being deleted", v1.Worker{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workerMayFree(&tt.worker); got != tt.want {
				t.Fatalf("workerMayFree = %v, want %v", got, tt.want)
			}
		})
	}
}

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

package workerfsm_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// TestAssigneeLost covers every case of the rule, as the Hook reconciler,
// the Worker's finalizer and a claim (a crash record listing the Hook, a
// Worker that keeps its Hooks) each judged it.
func TestAssigneeLost(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Generation: 3}, Spec: v1.HookSpec{Assignee: "agent"}}
	signal := func(held ...v1.HeldHook) v1.CrashRecord {
		return v1.CrashRecord{Time: now, PID: 42, Reason: "Signaled", Signal: ptr.To[int32](9), Held: held}
	}
	exited := v1.CrashRecord{Time: now, PID: 43, Reason: "Exited", ExitCode: ptr.To[int32](2), Held: []v1.HeldHook{{Name: "task", Generation: 3}}}
	worker := func(phase v1.WorkerPhase, crashes ...v1.CrashRecord) *v1.Worker {
		return &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent"}, Status: v1.WorkerStatus{Phase: phase, Crashes: crashes}}
	}
	clears := func(w *v1.Worker, clear bool) *v1.Worker {
		w.Spec.ClearAssigneeOnCrash = ptr.To(clear)
		return w
	}
	deleting := worker(v1.WorkerRunning)
	deleting.DeletionTimestamp = &now
	deletingKeeps := clears(worker(v1.WorkerRunning), false)
	deletingKeeps.DeletionTimestamp = &now
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
		{"crashed", hook, worker(v1.WorkerCrashed, signal()), true, "Crashed: pid 42 killed by signal 9 at 12:00:00"},
		{"crashed with no record", hook, worker(v1.WorkerCrashed), true, "the worker is Crashed"},
		{"crash loop", hook, worker(v1.WorkerCrashLoop, signal()), true, "CrashLoop"},
		{"stopped", hook, worker(v1.WorkerStopped), true, "Stopped"},
		{"lost", hook, worker(v1.WorkerLost), true, "Lost"},
		{"being deleted", hook, deleting, true, "deleted"},
		{"being deleted, clearAssigneeOnCrash false", hook, deletingKeeps, false, ""},
		{"clearAssigneeOnCrash false", hook, clears(worker(v1.WorkerCrashed, signal()), false), false, ""},
		{"clearAssigneeOnCrash false, restarted holding it", hook, clears(worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "task", Generation: 3})), false), false, ""},
		{"clearAssigneeOnCrash true", hook, clears(worker(v1.WorkerStopped), true), true, "Stopped"},
		{"restarted, held at this generation", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "task", Generation: 3})), true, "pid 42 killed by signal 9 at 12:00:00; it was restarted"},
		{"restarted after an exit, held at this generation", hook, worker(v1.WorkerRunning, exited), true, "pid 43 exited with code 2 at 12:00:00; it was restarted"},
		{"restarted, held in an older record", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "task", Generation: 3}), signal()), true, "restarted"},
		{"restarted, claimed again since", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "task", Generation: 2})), false, ""},
		{"restarted, held another hook", hook, worker(v1.WorkerRunning, signal(v1.HeldHook{Name: "other", Generation: 3})), false, ""},
		{"pending after a crash that held it", hook, worker(v1.WorkerPending, signal(v1.HeldHook{Name: "task", Generation: 3})), true, "restarted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lost, why := workerfsm.AssigneeLost(tt.hook, tt.worker)
			if lost != tt.lost || !strings.Contains(why, tt.why) {
				t.Fatalf("AssigneeLost = %v %q, want %v and a reason containing %q", lost, why, tt.lost, tt.why)
			}
		})
	}
}

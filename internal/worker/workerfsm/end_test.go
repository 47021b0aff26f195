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
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// TestExit follows every kind of end, of a process and of a Pod, to the
// whole status after it, and an end the phase admits to its error.
func TestExit(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-time.Hour))
	auto := v1.WorkerSpec{Command: []string{"agent"}, Restart: v1.RestartPolicy{Auto: true}}
	manual := v1.WorkerSpec{Command: []string{"agent"}}
	pod := v1.WorkerSpec{Template: &corev1.PodTemplateSpec{}, Restart: v1.RestartPolicy{Auto: true}}
	proc := func(phase v1.WorkerPhase, crashes int) v1.WorkerStatus {
		st := v1.WorkerStatus{Phase: phase, PID: 10, ProcessStartTicks: 7, BootID: "b", Host: "h", LogFile: "l", StartedAt: &started, Restarts: 2}
		for i := range crashes {
			st.Crashes = append(st.Crashes, v1.CrashRecord{Time: metav1.NewTime(now.Add(-time.Duration(i+1) * time.Second)), PID: 1})
		}
		return st
	}
	podStatus := v1.WorkerStatus{Phase: running, PodName: "w-2", NodeName: "n", StartedAt: &started, Restarts: 2}
	crash := v1.CrashRecord{Time: metav1.NewTime(now), PID: 10, Reason: "Signaled", Hook: "h1"}
	next := &workerfsm.Successor{Process: &workerfsm.Process{PID: 11, StartTicks: 8, BootID: "b", Host: "h", LogFile: "l", StartedAt: metav1.NewTime(now)}}
	restarted := func(r v1.CrashRecord) v1.CrashRecord { r.Restarted = true; return r }
	cleared := func(st v1.WorkerStatus, phase v1.WorkerPhase, crashes ...v1.CrashRecord) v1.WorkerStatus {
		st.Phase, st.PID, st.ProcessStartTicks, st.BootID, st.StartedAt, st.PodName, st.NodeName = phase, 0, 0, "", nil, "", ""
		st.Crashes = append(append([]v1.CrashRecord(nil), st.Crashes...), crashes...)
		return st
	}
	recorded := func(st v1.WorkerStatus) v1.WorkerStatus {
		st.PID, st.ProcessStartTicks, st.StartedAt, st.Restarts = 11, 8, &next.Process.StartedAt, st.Restarts+1
		st.BootID = "b"
		return st
	}
	tests := []struct {
		name       string
		spec       v1.WorkerSpec
		st         v1.WorkerStatus
		end        workerfsm.End
		next       *workerfsm.Successor
		plan       workerfsm.Action
		want       v1.WorkerStatus
		wantAction workerfsm.Action
		invalid    bool
	}{
		{name: "a clean exit stops, no crash", spec: auto, st: proc(running, 0), end: workerfsm.End{Record: crash, Clean: true},
			plan: workerfsm.ActionNone, want: cleared(proc(running, 0), stopped), wantAction: workerfsm.ActionNone},
		{name: "a crash restarted as a process", spec: auto, st: proc(running, 0), end: workerfsm.End{Record: crash}, next: next,
			plan: workerfsm.ActionRestart, want: recorded(cleared(proc(running, 0), running, restarted(crash))), wantAction: workerfsm.ActionRestart},
		{name: "a crash restarted as a Pod", spec: pod, st: podStatus, end: workerfsm.End{Record: v1.CrashRecord{Time: metav1.NewTime(now), Reason: "OOMKilled"}},
			next: &workerfsm.Successor{Pod: "w-3"}, plan: workerfsm.ActionRestart,
			want: func() v1.WorkerStatus {
				st := cleared(podStatus, pending, v1.CrashRecord{Time: metav1.NewTime(now), Reason: "OOMKilled", Restarted: true})
				st.PodName, st.Restarts = "w-3", 3
				return st
			}(), wantAction: workerfsm.ActionRestart},
		{name: "the budget's last crash loops", spec: auto, st: proc(running, 2), end: workerfsm.End{Record: crash},
			plan: workerfsm.ActionNotifyOnly, want: cleared(proc(running, 2), loop, crash), wantAction: workerfsm.ActionNotifyOnly},
		{name: "without restart.auto a crash is Crashed", spec: manual, st: proc(running, 0), end: workerfsm.End{Record: crash},
			plan: workerfsm.ActionNone, want: cleared(proc(running, 0), crashed, crash), wantAction: workerfsm.ActionNone},
		{name: "a restart that could not start is Crashed", spec: auto, st: proc(running, 0), end: workerfsm.End{Record: crash},
			plan: workerfsm.ActionRestart, want: cleared(proc(running, 0), crashed, crash), wantAction: workerfsm.ActionNone},
		{name: "a successor found is recorded whatever the budget", spec: auto, st: proc(running, 2), end: workerfsm.End{Record: crash}, next: next,
			plan: workerfsm.ActionNotifyOnly, want: recorded(cleared(proc(running, 2), running, restarted(crash))), wantAction: workerfsm.ActionRestart},
		{name: "a requested stop is Stopped, no crash", spec: auto, st: proc(running, 0), end: workerfsm.End{Record: crash, Requested: true},
			plan: workerfsm.ActionNone, want: cleared(proc(running, 0), stopped), wantAction: workerfsm.ActionNone},
		{name: "a requested stop of a restart keeps Restarting", spec: auto, st: proc(restart, 0), end: workerfsm.End{Record: crash, Requested: true},
			plan: workerfsm.ActionNone, want: cleared(proc(restart, 0), restart), wantAction: workerfsm.ActionNone},
		{name: "a crash of a Lost worker", spec: manual, st: proc(lost, 0), end: workerfsm.End{Record: crash},
			plan: workerfsm.ActionNone, want: cleared(proc(lost, 0), crashed, crash), wantAction: workerfsm.ActionNone},
		{name: "a crash in a phase set to Crashed by hand", spec: auto, st: proc(crashed, 0), end: workerfsm.End{Record: crash}, next: next,
			plan: workerfsm.ActionNone, want: cleared(proc(crashed, 0), crashed, crash), wantAction: workerfsm.ActionNone, invalid: true},
		{name: "a clean exit in a phase set to Stopped by hand", spec: auto, st: proc(stopped, 0), end: workerfsm.End{Record: crash, Clean: true},
			plan: workerfsm.ActionNone, want: cleared(proc(stopped, 0), stopped), wantAction: workerfsm.ActionNone, invalid: true},
		{name: "a crash before any phase", spec: auto, st: proc(none, 0), end: workerfsm.End{Record: crash},
			plan: workerfsm.ActionNone, want: cleared(proc(none, 0), none, crash), wantAction: workerfsm.ActionNone, invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.st.DeepCopy()
			plan, planErr := workerfsm.Plan(&tt.spec, &tt.st, tt.end, now)
			out, err := workerfsm.Exit(&tt.spec, &tt.st, tt.end, tt.next, now)
			var te *workerfsm.TransitionError
			if tt.invalid != errors.As(err, &te) || tt.invalid != errors.As(planErr, &te) {
				t.Fatalf("Exit error %v, Plan error %v; want a TransitionError: %v", err, planErr, tt.invalid)
			}
			if !tt.invalid && (err != nil || planErr != nil) {
				t.Fatalf("Exit error %v, Plan error %v", err, planErr)
			}
			if plan != tt.plan {
				t.Errorf("Plan = %s, want %s", plan, tt.plan)
			}
			if out.Action != tt.wantAction {
				t.Errorf("Action = %s, want %s", out.Action, tt.wantAction)
			}
			if !equality.Semantic.DeepEqual(*out.Status, tt.want) {
				t.Errorf("status\n got %+v\nwant %+v", *out.Status, tt.want)
			}
			if !equality.Semantic.DeepEqual(&tt.st, before) {
				t.Errorf("Exit changed its input: %+v", tt.st)
			}
		})
	}
}

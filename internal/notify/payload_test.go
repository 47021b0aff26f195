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

package notify_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/notify"
)

func TestDescribeWorkerPicksTheCrashTheEventReports(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	crash := func(pid int32, at time.Time) v1.CrashRecord {
		return v1.CrashRecord{Time: metav1.NewTime(at), PID: pid, Reason: "Exited", Hook: "a,b"}
	}
	// Crashes 3, 4 and 5 fall in one second, as automatic restarts of a
	// process that fails at once do.
	burst := t0.Add(2 * time.Minute)
	w := &v1.Worker{Status: v1.WorkerStatus{Crashes: []v1.CrashRecord{crash(1, t0), crash(2, t0.Add(time.Minute)), crash(3, burst), crash(4, burst), crash(5, burst)}}}
	cases := []struct {
		name    string
		message string
		eventAt time.Time
		series  *time.Time
		pid     int32 // 0: none
	}{
		{name: "the first of three crashes in one second, by its process", message: "pid 3 (start 88) exited with code 3; it held hook a",
			eventAt: burst.Add(100 * time.Millisecond), pid: 3},
		{name: "the second of three crashes in one second", message: "pid 4 (start 90) killed by signal 9 (SIGKILL); restarted as pid 5 (start 91)",
			eventAt: burst.Add(500 * time.Millisecond), pid: 4},
		{name: "an older crash reported late, by its process", message: "pid 1 (start 1) exited with code 3",
			eventAt: burst.Add(time.Second), pid: 1},
		{name: "a process no record names: by time", message: "pid 99 (start 1) exited with code 3",
			eventAt: t0.Add(time.Minute + time.Second), pid: 2},
		{name: "a message naming no process (a Pod's end): by time", message: "pod w-3 failed: OOMKilled",
			eventAt: t0.Add(time.Minute + time.Second), pid: 2},
		{name: "the event just after the first crash", eventAt: t0.Add(300 * time.Millisecond), pid: 1},
		{name: "the event in the second of the second crash", eventAt: t0.Add(time.Minute + 999*time.Millisecond), pid: 2},
		{name: "a series observed at the last", eventAt: t0, series: ptr(burst.Add(time.Second)), pid: 5},
		{name: "an event before any crash", eventAt: t0.Add(-time.Second)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := &corev1.Event{EventTime: metav1.NewMicroTime(c.eventAt), Reason: "WorkerCrashed", Message: c.message,
				InvolvedObject: corev1.ObjectReference{Kind: "Worker", Name: "w", Namespace: "ns"}}
			if c.series != nil {
				ev.Series = &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(*c.series)}
			}
			p := notify.Describe(ev, config.NotifyWorkerCrashed, w, nil)
			switch {
			case c.pid == 0 && p.Worker.Crash != nil:
				t.Errorf("crash %+v, want none", p.Worker.Crash)
			case c.pid != 0 && (p.Worker.Crash == nil || p.Worker.Crash.PID != c.pid):
				t.Errorf("crash %+v, want pid %d", p.Worker.Crash, c.pid)
			case c.pid != 0 && len(p.Worker.Hooks) != 2:
				t.Errorf("hooks %v, want a and b from the comma-separated list", p.Worker.Hooks)
			}
			if c.series != nil && (p.Count != 4 || !p.Time.Equal(*c.series)) {
				t.Errorf("a series: count %d time %s", p.Count, p.Time)
			}
		})
	}
}

func TestDescribeHookNumbersStepsFromOne(t *testing.T) {
	h := &v1.Hook{Spec: v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "a"}, {Name: "b"}}}}
	h.Status.State = v1.HookStepRunning
	h.Status.CurrentStep = &v1.CurrentStep{Index: 1, Name: "b", Attempt: 2}
	p := notify.Describe(&corev1.Event{Reason: "AwaitingHuman"}, config.NotifyAwaitingHuman, nil, h)
	if s := p.Hook.Step; s == nil || s.Number != 2 || s.Of != 2 || s.Name != "b" || s.Attempt != 2 || p.Hook.State != v1.HookStepRunning {
		t.Errorf("hook %+v step %+v", p.Hook, p.Hook.Step)
	}
	if p := notify.Describe(&corev1.Event{}, config.NotifyCompleted, nil, &v1.Hook{}); p.Hook.State != v1.HookInitializing {
		t.Errorf("an unreconciled Hook's state is %q, want initializing", p.Hook.State)
	}
}

func ptr[T any](v T) *T { return &v }

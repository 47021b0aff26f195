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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

const (
	none    = v1.WorkerPhase("")
	pending = v1.WorkerPending
	running = v1.WorkerRunning
	restart = v1.WorkerRestarting
	crashed = v1.WorkerCrashed
	loop    = v1.WorkerCrashLoop
	stopped = v1.WorkerStopped
	lost    = v1.WorkerLost
)

// TestNextEveryPair checks every (phase, event) pair: the valid ones lead
// where the row says, every other pair is a *TransitionError that leaves
// the phase unchanged.
func TestNextEveryPair(t *testing.T) {
	type pair struct {
		from v1.WorkerPhase
		e    workerfsm.Event
	}
	valid := map[pair]v1.WorkerPhase{}
	row := func(from v1.WorkerPhase, cells map[workerfsm.Event]v1.WorkerPhase) {
		for e, to := range cells {
			valid[pair{from, e}] = to
		}
	}
	// Events every phase accepts, and where they lead.
	for _, p := range workerfsm.Phases() {
		row(p, map[workerfsm.Event]v1.WorkerPhase{
			workerfsm.Alive: running, workerfsm.Stopped: stopped, workerfsm.RestartRequested: restart,
			workerfsm.HeartbeatExpired: lost, workerfsm.AwaitingHeartbeat: p, workerfsm.Unsupported: pending,
		})
	}
	row(none, map[workerfsm.Event]v1.WorkerPhase{workerfsm.AwaitingHeartbeat: pending, workerfsm.Heartbeat: running,
		workerfsm.Started: running, workerfsm.StartFailed: crashed})
	// A Pod created for a Worker: from every phase that may start one.
	for _, p := range []v1.WorkerPhase{none, pending, running, restart, lost} {
		row(p, map[workerfsm.Event]v1.WorkerPhase{workerfsm.PodCreated: pending})
	}
	row(pending, map[workerfsm.Event]v1.WorkerPhase{workerfsm.Heartbeat: running, workerfsm.Started: running, workerfsm.StartFailed: crashed,
		workerfsm.Exited: stopped, workerfsm.CrashRestarted: running, workerfsm.CrashLooped: loop, workerfsm.Crashed: crashed})
	row(running, map[workerfsm.Event]v1.WorkerPhase{workerfsm.Heartbeat: running, workerfsm.Started: running, workerfsm.StartFailed: crashed,
		workerfsm.Exited: stopped, workerfsm.CrashRestarted: running, workerfsm.CrashLooped: loop, workerfsm.Crashed: crashed})
	row(restart, map[workerfsm.Event]v1.WorkerPhase{workerfsm.Heartbeat: restart, workerfsm.Started: running, workerfsm.StartFailed: crashed,
		workerfsm.Exited: stopped, workerfsm.CrashRestarted: running, workerfsm.CrashLooped: loop, workerfsm.Crashed: crashed,
		workerfsm.Alive: restart, workerfsm.RestartRequested: restart})
	row(lost, map[workerfsm.Event]v1.WorkerPhase{workerfsm.Heartbeat: running, workerfsm.Exited: stopped,
		workerfsm.CrashRestarted: running, workerfsm.CrashLooped: loop, workerfsm.Crashed: crashed})
	for _, p := range []v1.WorkerPhase{crashed, loop, stopped} {
		row(p, map[workerfsm.Event]v1.WorkerPhase{workerfsm.Heartbeat: p})
	}

	pairs := 0
	for _, from := range workerfsm.Phases() {
		for _, e := range workerfsm.Events() {
			pairs++
			name := fmt.Sprintf("%q/%s", from, e)
			t.Run(name, func(t *testing.T) {
				got, err := workerfsm.Next(from, e)
				want, ok := valid[pair{from, e}]
				if workerfsm.Allowed(from, e) != ok {
					t.Errorf("Allowed = %v, want %v", !ok, ok)
				}
				if !ok {
					var te *workerfsm.TransitionError
					if !errors.As(err, &te) || te.Phase != from || te.Event != e || got != from {
						t.Fatalf("Next = %q, %v; want a TransitionError and the phase unchanged", got, err)
					}
					st := &v1.WorkerStatus{Phase: from}
					if err := workerfsm.Apply(st, e); err == nil || st.Phase != from {
						t.Fatalf("Apply = %v, phase %q; want an error and no change", err, st.Phase)
					}
					return
				}
				if err != nil || got != want {
					t.Fatalf("Next = %q, %v; want %q", got, err, want)
				}
				st := &v1.WorkerStatus{Phase: from}
				if err := workerfsm.Apply(st, e); err != nil || st.Phase != want {
					t.Fatalf("Apply = %v, phase %q; want %q", err, st.Phase, want)
				}
			})
		}
	}
	if pairs != 8*14 {
		t.Fatalf("checked %d pairs; the table has 8 phases and 13 events", pairs)
	}
}

func TestCrashEvent(t *testing.T) {
	tests := []struct {
		action workerfsm.Action
		want   workerfsm.Event
	}{
		{workerfsm.ActionRestart, workerfsm.CrashRestarted},
		{workerfsm.ActionNotifyOnly, workerfsm.CrashLooped},
		{workerfsm.ActionNone, workerfsm.Crashed},
	}
	for _, tt := range tests {
		if got := workerfsm.CrashEvent(tt.action); got != tt.want {
			t.Errorf("CrashEvent(%s) = %s, want %s", tt.action, got, tt.want)
		}
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) v1.CrashRecord { return v1.CrashRecord{Time: metav1.NewTime(now.Add(-d))} }
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	crashes := func(ds ...time.Duration) []v1.CrashRecord {
		var out []v1.CrashRecord
		for _, d := range ds {
			out = append(out, ago(d))
		}
		return out
	}
	forgiven := func(recs []v1.CrashRecord) []v1.CrashRecord {
		for i := range recs {
			recs[i].Forgiven = true
		}
		return recs
	}
	auto := v1.WorkerSpec{Command: []string{"agent"}, Restart: v1.RestartPolicy{Auto: true}}
	tests := []struct {
		name     string
		spec     v1.WorkerSpec
		status   v1.WorkerStatus
		want     workerfsm.Action
		inWindow int
		budget   string
	}{
		{"crash 1 restarts", auto, v1.WorkerStatus{}, workerfsm.ActionRestart, 0, "0 of 3 crashes in 10m0s"},
		{"crash 2 restarts", auto, v1.WorkerStatus{Crashes: crashes(time.Minute)}, workerfsm.ActionRestart, 1, "1 of 3 crashes in 10m0s"},
		{"crash 3 loops", auto, v1.WorkerStatus{Crashes: crashes(time.Minute, 2*time.Minute)}, workerfsm.ActionNotifyOnly, 2, "2 of 3 crashes in 10m0s"},
		{"old crashes fall out of the window", auto, v1.WorkerStatus{Crashes: crashes(11*time.Minute, 20*time.Minute, time.Minute)}, workerfsm.ActionRestart, 1, "1 of 3 crashes in 10m0s"},
		{"a manual restart forgives earlier crashes", auto, v1.WorkerStatus{WindowStart: at(30 * time.Second), Crashes: crashes(time.Minute, 2*time.Minute, 3*time.Minute, 10*time.Second)}, workerfsm.ActionRestart, 1, "1 of 3 crashes in 10m0s"},
		{"the crashes a manual restart marked are forgiven", auto, v1.WorkerStatus{WindowStart: at(time.Minute), Crashes: forgiven(crashes(time.Minute, time.Minute, time.Minute))}, workerfsm.ActionRestart, 0, "0 of 3 crashes in 10m0s"},
		{"crashes in the second of the manual restart, after it, count", auto, v1.WorkerStatus{WindowStart: at(time.Minute), Crashes: append(forgiven(crashes(time.Minute)), crashes(time.Minute, time.Minute)...)}, workerfsm.ActionNotifyOnly, 2, "2 of 3 crashes in 10m0s"},
		{"a mark forgives within the window, whatever windowStart", auto, v1.WorkerStatus{Crashes: append(forgiven(crashes(2*time.Minute, time.Minute)), crashes(10*time.Second)...)}, workerfsm.ActionRestart, 1, "1 of 3 crashes in 10m0s"},
		{"maxCrashes 1 never restarts", v1.WorkerSpec{Command: []string{"a"}, Restart: v1.RestartPolicy{Auto: true, MaxCrashes: 1}}, v1.WorkerStatus{}, workerfsm.ActionNotifyOnly, 0, "0 of 1 crashes in 10m0s"},
		{"maxCrashes 2: crash 2 loops", v1.WorkerSpec{Command: []string{"a"}, Restart: v1.RestartPolicy{Auto: true, MaxCrashes: 2}}, v1.WorkerStatus{Crashes: crashes(time.Minute)}, workerfsm.ActionNotifyOnly, 1, "1 of 2 crashes in 10m0s"},
		{"a wider window", v1.WorkerSpec{Command: []string{"a"}, Restart: v1.RestartPolicy{Auto: true, Window: &metav1.Duration{Duration: time.Hour}}}, v1.WorkerStatus{Crashes: crashes(50*time.Minute, 40*time.Minute, 30*time.Minute)}, workerfsm.ActionNotifyOnly, 3, "3 crashes in 1h0m0s"},
		{"restart is opt-in", v1.WorkerSpec{Command: []string{"a"}}, v1.WorkerStatus{}, workerfsm.ActionNone, 0, "0 of 3 crashes in 10m0s"},
		{"a Pod template is restarted as a new Pod", v1.WorkerSpec{Template: &corev1.PodTemplateSpec{}, Restart: v1.RestartPolicy{Auto: true}}, v1.WorkerStatus{}, workerfsm.ActionRestart, 0, "0 of 3 crashes in 10m0s"},
		{"an adopted process cannot be restarted", v1.WorkerSpec{Adopt: &v1.AdoptSpec{PID: 9}, Restart: v1.RestartPolicy{Auto: true}}, v1.WorkerStatus{}, workerfsm.ActionNone, 0, "0 of 3 crashes in 10m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workerfsm.CrashesInWindow(&tt.spec, &tt.status, now); got != tt.inWindow {
				t.Errorf("CrashesInWindow = %d, want %d", got, tt.inWindow)
			}
			if got := workerfsm.Decide(&tt.spec, &tt.status, now); got != tt.want {
				t.Errorf("Decide = %s, want %s", got, tt.want)
			}
			if got := workerfsm.Budget(&tt.spec, &tt.status, now); got != tt.budget {
				t.Errorf("Budget = %q, want %q", got, tt.budget)
			}
		})
	}
}

// TestCrashLoopCountsThree follows a Worker with the default policy
// through its crashes: the condition and Event text after the third is
// "3 crashes in 10m0s".
func TestCrashLoopCountsThree(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	spec := v1.WorkerSpec{Command: []string{"agent"}, Restart: v1.RestartPolicy{Auto: true}}
	st := &v1.WorkerStatus{Phase: running}
	var actions []workerfsm.Action
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Second)
		a := workerfsm.Decide(&spec, st, at)
		actions = append(actions, a)
		workerfsm.AppendCrash(st, v1.CrashRecord{Time: metav1.NewTime(at)})
		if err := workerfsm.Apply(st, workerfsm.CrashEvent(a)); err != nil {
			t.Fatal(err)
		}
	}
	want := []workerfsm.Action{workerfsm.ActionRestart, workerfsm.ActionRestart, workerfsm.ActionNotifyOnly}
	if fmt.Sprint(actions) != fmt.Sprint(want) || st.Phase != loop {
		t.Fatalf("actions %v, phase %s; want %v and CrashLoop", actions, st.Phase, want)
	}
	if got := workerfsm.Budget(&spec, st, now.Add(3*time.Second)); got != "3 crashes in 10m0s" {
		t.Fatalf("Budget = %q, want %q", got, "3 crashes in 10m0s")
	}
}

func TestHeartbeatEvent(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	beat := func(d time.Duration) *metav1.MicroTime { t := metav1.NewMicroTime(now.Add(-d)); return &t }
	minute := v1.WorkerSpec{HeartbeatTimeout: &metav1.Duration{Duration: time.Minute}}
	tests := []struct {
		name string
		spec v1.WorkerSpec
		st   v1.WorkerStatus
		want workerfsm.Event
		due  time.Time
	}{
		{"never sent", v1.WorkerSpec{}, v1.WorkerStatus{}, workerfsm.AwaitingHeartbeat, time.Time{}},
		{"fresh, default timeout", v1.WorkerSpec{}, v1.WorkerStatus{LastHeartbeat: beat(time.Minute)}, workerfsm.Heartbeat, now.Add(time.Minute + time.Second)},
		{"within the one-second slack", minute, v1.WorkerStatus{LastHeartbeat: beat(time.Minute)}, workerfsm.Heartbeat, now.Add(time.Second)},
		{"expired", minute, v1.WorkerStatus{LastHeartbeat: beat(time.Minute + time.Second)}, workerfsm.HeartbeatExpired, now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workerfsm.HeartbeatEvent(&tt.spec, &tt.st, now); got != tt.want {
				t.Errorf("HeartbeatEvent = %s, want %s", got, tt.want)
			}
			if got := workerfsm.HeartbeatDue(&tt.spec, &tt.st); !got.Equal(tt.due) {
				t.Errorf("HeartbeatDue = %s, want %s", got, tt.due)
			}
		})
	}
}

func TestAppendCrashIsBounded(t *testing.T) {
	st := &v1.WorkerStatus{}
	for i := range v1.WorkerCrashLimit + 5 {
		workerfsm.AppendCrash(st, v1.CrashRecord{PID: int32(i)})
	}
	if len(st.Crashes) != v1.WorkerCrashLimit || st.Crashes[0].PID != 5 || st.Crashes[len(st.Crashes)-1].PID != v1.WorkerCrashLimit+4 {
		t.Fatalf("crashes kept: %d, first pid %d", len(st.Crashes), st.Crashes[0].PID)
	}
}

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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) v1.CrashRecord { return v1.CrashRecord{Time: metav1.NewTime(now.Add(-d))} }
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	auto := v1.WorkerSpec{Command: []string{"agent"}, Restart: v1.RestartPolicy{Auto: true}}
	tests := []struct {
		name     string
		spec     v1.WorkerSpec
		status   v1.WorkerStatus
		want     Action
		inWindow int
	}{
		{"first crash restarts", auto, v1.WorkerStatus{}, ActionRestart, 0},
		{"third crash restarts", auto, v1.WorkerStatus{Crashes: []v1.CrashRecord{ago(time.Minute), ago(2 * time.Minute)}}, ActionRestart, 2},
		{"fourth crash loops", auto, v1.WorkerStatus{Crashes: []v1.CrashRecord{ago(time.Minute), ago(2 * time.Minute), ago(3 * time.Minute)}}, ActionNotifyOnly, 3},
		{"old crashes fall out of the window", auto, v1.WorkerStatus{Crashes: []v1.CrashRecord{ago(11 * time.Minute), ago(20 * time.Minute), ago(time.Minute)}}, ActionRestart, 1},
		{"a manual restart forgives earlier crashes", auto, v1.WorkerStatus{WindowStart: at(30 * time.Second), Crashes: []v1.CrashRecord{ago(time.Minute), ago(2 * time.Minute), ago(3 * time.Minute), ago(10 * time.Second)}}, ActionRestart, 1},
		{"a crash in the second of the manual restart is forgiven", auto, v1.WorkerStatus{WindowStart: at(time.Minute), Crashes: []v1.CrashRecord{ago(time.Minute), ago(time.Minute), ago(time.Minute)}}, ActionRestart, 0},
		{"maxCrashes 1", v1.WorkerSpec{Command: []string{"a"}, Restart: v1.RestartPolicy{Auto: true, MaxCrashes: 1}}, v1.WorkerStatus{Crashes: []v1.CrashRecord{ago(time.Minute)}}, ActionNotifyOnly, 1},
		{"a wider window", v1.WorkerSpec{Command: []string{"a"}, Restart: v1.RestartPolicy{Auto: true, Window: &metav1.Duration{Duration: time.Hour}}}, v1.WorkerStatus{Crashes: []v1.CrashRecord{ago(50 * time.Minute), ago(40 * time.Minute), ago(30 * time.Minute)}}, ActionNotifyOnly, 3},
		{"restart is opt-in", v1.WorkerSpec{Command: []string{"a"}}, v1.WorkerStatus{}, ActionNone, 0},
		{"an adopted process cannot be restarted", v1.WorkerSpec{Adopt: &v1.AdoptSpec{PID: 9}, Restart: v1.RestartPolicy{Auto: true}}, v1.WorkerStatus{}, ActionNone, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CrashesInWindow(&tt.spec, &tt.status, now); got != tt.inWindow {
				t.Errorf("CrashesInWindow = %d, want %d", got, tt.inWindow)
			}
			if got := Decide(&tt.spec, &tt.status, now); got != tt.want {
				t.Errorf("Decide = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAppendCrashIsBounded(t *testing.T) {
	st := &v1.WorkerStatus{}
	for i := range v1.WorkerCrashLimit + 5 {
		appendCrash(st, v1.CrashRecord{PID: int32(i)})
	}
	if len(st.Crashes) != v1.WorkerCrashLimit || st.Crashes[0].PID != 5 || st.Crashes[len(st.Crashes)-1].PID != v1.WorkerCrashLimit+4 {
		t.Fatalf("crashes kept: %d, first pid %d", len(st.Crashes), st.Crashes[0].PID)
	}
}

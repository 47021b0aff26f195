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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

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

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

package top

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestAlertsOnlyAboutTether(t *testing.T) {
	tests := []struct {
		apiVersion, kind string
		want             bool
	}{
		{"agents.tether.dev/v1alpha1", "Worker", true},
		{"v1", "Store", true},
		{"v1", "Service", false},
		{"apps/v1", "Deployment", false},
	}
	for _, tt := range tests {
		e := &corev1.Event{InvolvedObject: corev1.ObjectReference{APIVersion: tt.apiVersion, Kind: tt.kind}}
		if got := aboutTether(e); got != tt.want {
			t.Errorf("aboutTether(%s %s) = %v, want %v", tt.apiVersion, tt.kind, got, tt.want)
		}
	}
}

// TestAlertsOfDeletedObjectsEnd: a Warning about a Hook or Worker that is
// gone, or that exists anew with another UID, is no alert any more; one
// about a live object, or about a kind top does not watch, stays.
func TestAlertsOfDeletedObjectsEnd(t *testing.T) {
	live := map[string]types.UID{"Worker/default/agent": "u1", "Hook/default/task": "h1"}
	tests := []struct {
		name      string
		kind, obj string
		uid       types.UID
		want      bool
	}{
		{"a live Worker", "Worker", "agent", "u1", false},
		{"a live Worker, no UID in the Event", "Worker", "agent", "", false},
		{"a deleted Worker", "Worker", "gone", "u9", true},
		{"a Worker deleted and created anew", "Worker", "agent", "u0", true},
		{"a deleted Hook", "Hook", "old", "", true},
		{"a live Hook", "Hook", "task", "h1", false},
		{"a Checkpoint (not watched)", "Checkpoint", "task-1", "c1", false},
		{"the store", "Store", "store", "", false},
	}
	for _, tt := range tests {
		e := &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: tt.kind, Namespace: "default", Name: tt.obj, UID: tt.uid}}
		if got := aboutDeleted(e, live); got != tt.want {
			t.Errorf("%s: aboutDeleted = %v, want %v", tt.name, got, tt.want)
		}
	}
}

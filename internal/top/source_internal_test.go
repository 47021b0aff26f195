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

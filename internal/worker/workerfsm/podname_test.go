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

package workerfsm

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestPodName(t *testing.T) {
	cases := []struct {
		worker   string
		restarts int32
		want     string
	}{
		{"agent", 0, "agent-0"},
		{"agent", 1, "agent-1"},
		{"agent-2", 12, "agent-2-12"},
	}
	for _, tc := range cases {
		w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: tc.worker}}
		if got := PodName(w, tc.restarts); got != tc.want {
			t.Errorf("PodName(%s, %d) = %q, want %q", tc.worker, tc.restarts, got, tc.want)
		}
	}
}

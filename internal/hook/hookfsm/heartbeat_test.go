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

package hookfsm_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

func TestHeartbeatExpected(t *testing.T) {
	beat := metav1.NowMicro()
	initialized := []v1.HistoryEntry{{Event: string(hookfsm.Initialize), To: v1.HookStepPending}}
	passed := []v1.HistoryEntry{initialized[0], {Event: string(hookfsm.Pass), To: v1.HookStepPending}}
	for _, tc := range []struct {
		name      string
		state     v1.HookState
		heartbeat *metav1.MicroTime
		assignee  string
		history   []v1.HistoryEntry
		want      bool
	}{
		{"running", v1.HookStepRunning, &beat, "", initialized, true},
		{"validating", v1.HookStepValidating, &beat, "", initialized, true},
		{"running without a heartbeat", v1.HookStepRunning, nil, "", initialized, false},
		{"pending fresh from initialization", v1.HookStepPending, &beat, "", initialized, false},
		{"pending and assigned", v1.HookStepPending, &beat, "agent-1", initialized, true},
		{"pending after a passed step", v1.HookStepPending, &beat, "", passed, true},
		{"awaiting a human", v1.HookAwaitingHuman, &beat, "agent-1", passed, false},
		{"recovering", v1.HookRecovering, &beat, "", passed, false},
		{"completed", v1.HookCompleted, &beat, "agent-1", passed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &v1.Hook{}
			h.Spec.Assignee = tc.assignee
			h.Status.State, h.Status.LastHeartbeat, h.Status.History = tc.state, tc.heartbeat, tc.history
			if got := hookfsm.HeartbeatExpected(h); got != tc.want {
				t.Errorf("HeartbeatExpected = %v, want %v", got, tc.want)
			}
		})
	}
}

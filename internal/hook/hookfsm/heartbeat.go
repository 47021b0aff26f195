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

package hookfsm

import v1 "github.com/tether-dev/tether/api/v1alpha1"

// HeartbeatExpected reports whether an agent is expected to heartbeat on
// hook, so that a heartbeat older than staleAfter makes it stale: while a
// step runs or validates, and while a step is pending once an agent has
// moved the Hook there (a Hook fresh from initialization waits for one).
// A Hook that never had a heartbeat has none to expire.
func HeartbeatExpected(hook *v1.Hook) bool {
	st := &hook.Status
	if st.LastHeartbeat == nil {
		return false
	}
	switch st.State {
	case v1.HookStepRunning, v1.HookStepValidating:
		return true
	case v1.HookStepPending:
		n := len(st.History)
		return hook.Spec.Assignee != "" || (n > 0 && st.History[n-1].Event != string(Initialize))
	}
	return false
}

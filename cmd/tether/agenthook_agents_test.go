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

package main_test

import (
	"strings"
	"testing"
)

// TestAgentHookAgentFlag: --agent claude is the default's protocol, the
// session records the agent (and the version Claude Code puts in
// AI_AGENT), describe shows it, and an unknown agent is a warning and no
// answer, never a failure of the agent.
func TestAgentHookAgentFlag(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("task", 3, 0, step("build", 0, "true"))
	event := `{"hook_event_name":"SessionStart","source":"startup","session_id":"s","cwd":"` + e.workspace + `"}`

	cmd := e.command("agent", "hook", "--agent", "claude")
	cmd.Env = append(cmd.Env, "TETHER_HOOK=task", "AI_AGENT=claude-code_2-1-197_harness")
	cmd.Stdin = strings.NewReader(event)
	if out, stderr, code := runCommand(t, cmd); code != 0 || !strings.Contains(out, `"hookEventName":"SessionStart"`) {
		t.Fatalf("--agent claude: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	desc := e.ok("describe", "hook", "task")
	if !strings.Contains(desc, "Agent:") || !strings.Contains(desc, "claude 2.1.197") {
		t.Errorf("describe does not show the agent:\n%s", desc)
	}

	cmd = e.command("agent", "hook", "--agent", "nope")
	cmd.Env = append(cmd.Env, "TETHER_HOOK=task")
	cmd.Stdin = strings.NewReader(event)
	if out, stderr, code := runCommand(t, cmd); out != "" || code != 0 || !strings.Contains(stderr, `unknown agent "nope"`) {
		t.Errorf("unknown agent: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

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

package claudehook_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudehook"
)

// The inputs in testdata/claude-code-VERSION were sent by the real client
// (captured by cmd/tether's TestRealClaudeCodeAcceptance with
// TETHER_CAPTURE_FIXTURES=DIR): what the stand-in was never told.
func TestCapturedEvents(t *testing.T) {
	cases := []struct {
		file  string
		check func(t *testing.T, ev claudehook.Event)
	}{
		{"SessionStart-startup.json", func(t *testing.T, ev claudehook.Event) { want(t, ev.Source, "startup") }},
		// --continue resumes the same session: source resume, same id.
		{"SessionStart-resume.json", func(t *testing.T, ev claudehook.Event) { want(t, ev.Source, "resume") }},
		{"SessionStart-compact.json", func(t *testing.T, ev claudehook.Event) { want(t, ev.Source, "compact") }},
		{"UserPromptSubmit.json", func(t *testing.T, ev claudehook.Event) { want(t, ev.Prompt, "work on the task") }},
		// custom_instructions is null and permission_mode absent.
		{"PreCompact.json", func(t *testing.T, ev claudehook.Event) {
			want(t, ev.Trigger, "manual")
			want(t, ev.CustomInstructions, "")
		}},
		{"Stop.json", func(t *testing.T, ev claudehook.Event) {
			if ev.StopHookActive {
				t.Error("stop_hook_active on the first Stop")
			}
		}},
		{"SessionEnd.json", func(t *testing.T, ev claudehook.Event) { want(t, ev.Reason, "other") }},
		{"PostToolUse-Bash.json", func(t *testing.T, ev claudehook.Event) { want(t, ev.ToolName, "Bash") }},
		// A command that failed after its commit still committed.
		{"PostToolUseFailure-Bash.json", func(t *testing.T, ev claudehook.Event) {
			want(t, ev.Error, "Exit code 1")
			if len(ev.ToolResponse) != 0 {
				t.Errorf("tool_response %s", ev.ToolResponse)
			}
			if d := claudehook.DetectPostToolUse(ev); !slices.Equal(d.Triggers, []claudehook.Trigger{claudehook.TriggerGitCommit}) {
				t.Errorf("detected %v, want git_commit", d.Triggers)
			}
		}},
	}
	dirs, _ := filepath.Glob("testdata/claude-code-*")
	if len(dirs) == 0 {
		t.Fatal("no captured inputs in testdata/claude-code-*")
	}
	for _, dir := range dirs {
		for _, tc := range cases {
			t.Run(filepath.Base(dir)+"/"+tc.file, func(t *testing.T) {
				f, err := os.Open(filepath.Join(dir, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = f.Close() }()
				ev, err := claudehook.DecodeEvent(f)
				if err != nil {
					t.Fatal(err)
				}
				if ev.SessionID == "" || ev.CWD == "" || ev.TranscriptPath == "" {
					t.Errorf("session_id, cwd or transcript_path missing: %+v", ev)
				}
				tc.check(t, ev)
			})
		}
	}
}

func want(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

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

package codexhook_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/codexhook"
)

// noEnv is a hook environment without Codex's launcher variables.
func noEnv(string) string { return "" }

// The inputs in testdata/codex-VERSION were sent by the real client
// (captured by cmd/tether's TestRealCodexAcceptance with
// TETHER_CAPTURE_FIXTURES=DIR).
func TestCapturedEvents(t *testing.T) {
	cases := []struct {
		file string
		want agentevent.Event
	}{
		{"SessionStart-startup.json", agentevent.Event{Kind: agentevent.SessionStart, Native: "SessionStart", Source: "startup"}},
		// exec resume --last resumes the same session: source resume.
		{"SessionStart-resume.json", agentevent.Event{Kind: agentevent.SessionStart, Native: "SessionStart", Source: "resume"}},
		// After PostCompact, Codex starts the session again with source compact.
		{"SessionStart-compact.json", agentevent.Event{Kind: agentevent.SessionStart, Native: "SessionStart", Source: "compact"}},
		{"UserPromptSubmit.json", agentevent.Event{Kind: agentevent.Prompt, Native: "UserPromptSubmit", Prompt: "work on the task"}},
		{"PreCompact.json", agentevent.Event{Kind: agentevent.PreCompact, Native: "PreCompact", Trigger: "auto"}},
		{"Stop.json", agentevent.Event{Kind: agentevent.TurnEnd, Native: "Stop"}},
		{"SessionEnd.json", agentevent.Event{Kind: agentevent.SessionEnd, Native: "SessionEnd", Reason: "other"}},
		// Bash's tool_response is the command's output, a string.
		{"PostToolUse-Bash.json", agentevent.Event{Kind: agentevent.ToolDone, Native: "PostToolUse", Tool: "Bash",
			Shell:       "tether step begin task --working-on 'the first file'",
			ShellOutput: "hook.agents.tether.dev/task step \"one\" (1/3) running, attempt 1\nnext: work on step \"one\" (1/3), attempt 1, then run `tether step done task` to validate it\n"}},
	}
	dirs, _ := filepath.Glob("testdata/codex-*")
	if len(dirs) == 0 {
		t.Fatal("no captured inputs in testdata/codex-*")
	}
	for _, dir := range dirs {
		for _, tc := range cases {
			t.Run(filepath.Base(dir)+"/"+tc.file, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join(dir, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				got, err := codexhook.Adapter{}.Decode(data, noEnv)
				if err != nil {
					t.Fatal(err)
				}
				if got.SessionID == "" || got.CWD == "" || got.TranscriptPath == "" {
					t.Errorf("session_id, cwd or transcript_path missing: %+v", got)
				}
				got.SessionID, got.CWD, got.TranscriptPath = "", "", ""
				tc.want.Agent = "codex"
				if got != tc.want {
					t.Errorf("got  %+v\nwant %+v", got, tc.want)
				}
			})
		}
	}
}

func TestDecode(t *testing.T) {
	pkg := func(body string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if p != "/opt/codex/package.json" {
				return nil, errors.New("no such file")
			}
			return []byte(body), nil
		}
	}
	env := func(k string) string {
		if k == "CODEX_MANAGED_PACKAGE_ROOT" {
			return "/opt/codex"
		}
		return ""
	}
	tests := []struct {
		name     string
		in       string
		readFile func(string) ([]byte, error)
		want     agentevent.Event
		wantErr  bool
	}{
		{name: "version from the launcher's package", in: `{"hook_event_name":"Stop","stop_hook_active":true}`,
			readFile: pkg(`{"name":"@openai/codex","version":"0.171.0"}`),
			want:     agentevent.Event{Kind: agentevent.TurnEnd, Native: "Stop", Agent: "codex", AgentVersion: "0.171.0", Continued: true}},
		{name: "another package's version is not the agent's", in: `{"hook_event_name":"Stop"}`,
			readFile: pkg(`{"name":"left-pad","version":"1.0.0"}`),
			want:     agentevent.Event{Kind: agentevent.TurnEnd, Native: "Stop", Agent: "codex"}},
		{name: "no package.json", in: `{"hook_event_name":"Stop"}`, readFile: pkg("x"),
			want: agentevent.Event{Kind: agentevent.TurnEnd, Native: "Stop", Agent: "codex"}},
		// A command that failed after its commit comes as PostToolUse, its
		// output empty; the commit is in the command.
		{name: "a failed command with a commit", in: `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git commit -qm x && false"},"tool_response":""}`,
			want: agentevent.Event{Kind: agentevent.ToolDone, Native: "PostToolUse", Agent: "codex", Tool: "Bash", Shell: "git commit -qm x && false"}},
		{name: "apply_patch", in: `{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch"}}`,
			want: agentevent.Event{Kind: agentevent.ToolDone, Native: "PostToolUse", Agent: "codex", Tool: "apply_patch"}},
		// Its answer cannot carry context; SessionStart compact follows.
		{name: "PostCompact is not acted on", in: `{"hook_event_name":"PostCompact","trigger":"auto"}`,
			want: agentevent.Event{Native: "PostCompact", Agent: "codex", Trigger: ""}},
		{name: "not an object", in: `[1]`, wantErr: true},
		{name: "no event name", in: `{"session_id":"s"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codexhook.Adapter{ReadFile: tt.readFile}.Decode([]byte(tt.in), env)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v", err)
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name   string
		native string
		ans    agentevent.Answer
		want   string
	}{
		{"context at SessionStart", "SessionStart", agentevent.Answer{Context: "c"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"c"}}` + "\n"},
		{"context at UserPromptSubmit", "UserPromptSubmit", agentevent.Answer{Context: "c"}, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"c"}}` + "\n"},
		{"continue at Stop", "Stop", agentevent.Answer{Continue: true, Reason: "go on"}, `{"decision":"block","reason":"go on"}` + "\n"},
		{"let stop", "Stop", agentevent.Answer{}, ""},
		{"nothing at PreCompact", "PreCompact", agentevent.Answer{Context: "c"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := codexhook.Adapter{}.Render(agentevent.Event{Native: tt.native}, tt.ans)
			if string(out.Stdout) != tt.want || out.ExitCode != 0 {
				t.Errorf("got %q exit %d, want %q", out.Stdout, out.ExitCode, tt.want)
			}
		})
	}
}

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

package geminihook

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/tether-dev/tether/internal/agent/agentevent"
)

// The inputs in testdata/gemini-cli-VERSION were sent by the real client
// (cmd/tether's TestRealGeminiCLIAcceptance writes them with
// TETHER_CAPTURE_FIXTURES=DIR; /compress and a commit in a failing command
// were captured from the same client by hand).
func TestCapturedEvents(t *testing.T) {
	cases := []struct {
		file string
		want agentevent.Event // Native, SessionID, CWD and TranscriptPath are checked apart
	}{
		{"SessionStart-startup.json", agentevent.Event{Kind: agentevent.SessionStart, Source: "startup"}},
		// --resume keeps the session id and says resume.
		{"SessionStart-resume.json", agentevent.Event{Kind: agentevent.SessionStart, Source: "resume"}},
		{"BeforeAgent.json", agentevent.Event{Kind: agentevent.Prompt, Prompt: "do the thing"}},
		// A command that failed after its commit: Exit Code 1, still a commit.
		{"AfterTool-run_shell_command.json", agentevent.Event{Kind: agentevent.ToolDone, Tool: ShellTool, ToolFailed: true,
			Shell: "echo hello > out.txt && git add out.txt && git commit -qm one && false"}},
		// Before every model call: nothing to do.
		{"PreCompress-auto.json", agentevent.Event{Trigger: "auto"}},
		{"PreCompress-manual.json", agentevent.Event{Kind: agentevent.PreCompact, Trigger: "manual", Compacts: true}},
		{"AfterAgent.json", agentevent.Event{Kind: agentevent.TurnEnd, Continued: true}},
		{"SessionEnd.json", agentevent.Event{Kind: agentevent.SessionEnd, Reason: "exit"}},
		{"BeforeTool-run_shell_command.json", agentevent.Event{}},
	}
	dirs, _ := filepath.Glob("testdata/gemini-cli-*")
	if len(dirs) == 0 {
		t.Fatal("no captured inputs in testdata/gemini-cli-*")
	}
	for _, dir := range dirs {
		for _, tc := range cases {
			t.Run(filepath.Base(dir)+"/"+tc.file, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join(dir, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				ev, err := Adapter{}.Decode(data, os.Getenv)
				if err != nil {
					t.Fatal(err)
				}
				if ev.SessionID == "" || ev.CWD == "" || ev.TranscriptPath == "" || ev.Native == "" || ev.Agent != Agent {
					t.Errorf("session_id, cwd, transcript_path, event or agent missing: %+v", ev)
				}
				ev.SessionID, ev.CWD, ev.TranscriptPath, ev.Native, ev.Agent = "", "", "", "", ""
				if ev != tc.want {
					t.Errorf("got  %+v\nwant %+v", ev, tc.want)
				}
			})
		}
	}
	data, _ := os.ReadFile(filepath.Join(dirs[0], "AfterTool-run_shell_command.json"))
	ev, _ := Adapter{}.Decode(data, os.Getenv)
	if d := agentevent.Detect(ev.Shell, ev.ShellOutput); !slices.Equal(d.Triggers, []agentevent.Trigger{agentevent.TriggerGitCommit}) {
		t.Errorf("detected %v, want git_commit", d.Triggers)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, in := range []string{"", "[]", "null", `{"session_id":"x"}`, `{"hook_event_name":`} {
		if _, err := DecodeEvent([]byte(in)); err == nil {
			t.Errorf("DecodeEvent(%q): no error", in)
		}
	}
	// Fields of another type are left zero, not fatal.
	ev, err := DecodeEvent([]byte(`{"hook_event_name":"AfterTool","tool_name":7,"tool_input":"x","stop_hook_active":"yes"}`))
	if err != nil || ev.ToolName != "" || ev.ToolInput != nil {
		t.Errorf("lenient decode: %+v %v", ev, err)
	}
}

func TestContinuationPrompt(t *testing.T) {
	for prompt, want := range map[string]bool{
		"tether: hook fix-login is not finished (step_pending). Next: run tether step begin": true,
		"tether: the status of hook x disagrees with its history. Next: stop":                true,
		"work on the task": false,
		"":                 false,
	} {
		ev := Neutral(Event{HookEventName: BeforeAgent, Prompt: prompt})
		if ev.Kind != agentevent.Prompt || ev.Continued != want {
			t.Errorf("BeforeAgent %q: kind %q continued %v, want %v", prompt, ev.Kind, ev.Continued, want)
		}
	}
}

func TestToolOutput(t *testing.T) {
	tests := []struct {
		resp, out string
		failed    bool
	}{
		{`{"llmContent":"<untrusted_context>\nOutput: https://github.com/o/r/pull/7\nProcess Group PGID: 1\n</untrusted_context>","returnDisplay":"x"}`, "https://github.com/o/r/pull/7", false},
		{`{"llmContent":"Output: a\nb\nExit Code: 2\nProcess Group PGID: 1"}`, "a\nb", true},
		{`{"llmContent":"Output: (empty)\nExit Code: 0"}`, "", false},
		{`{"llmContent":"x","error":{"message":"invalid params","type":"invalid_tool_params"}}`, "", true},
		{`{"llmContent":["not","text"]}`, "", false},
		{`"text"`, "", false},
	}
	for _, tt := range tests {
		out, failed := toolOutput([]byte(tt.resp))
		if out != tt.out || failed != tt.failed {
			t.Errorf("toolOutput(%s) = %q, %v; want %q, %v", tt.resp, out, failed, tt.out, tt.failed)
		}
	}
}

func TestRenderAnswer(t *testing.T) {
	tests := []struct {
		native string
		ans    agentevent.Answer
		want   string
	}{
		{AfterAgent, agentevent.Answer{Continue: true, Reason: "tether: go on <now> & then"}, `{"decision":"deny","reason":"tether: go on <now> & then"}`},
		{SessionStart, agentevent.Answer{Context: "ctx"}, `{"hookSpecificOutput":{"additionalContext":"ctx","hookEventName":"SessionStart"}}`},
		{BeforeAgent, agentevent.Answer{Context: "ctx"}, `{"hookSpecificOutput":{"additionalContext":"ctx","hookEventName":"BeforeAgent"}}`},
		// Gemini CLI reads stderr when stdout is empty: always an object.
		{AfterAgent, agentevent.Answer{}, `{}`},
		// Appended to the tool's result: the anchor after a compression.
		{AfterTool, agentevent.Answer{Context: "ctx"}, `{"hookSpecificOutput":{"additionalContext":"ctx","hookEventName":"AfterTool"}}`},
		{AfterTool, agentevent.Answer{}, `{}`},
		{PreCompress, agentevent.Answer{Context: "ctx"}, `{}`},
		{SessionEnd, agentevent.Answer{Continue: true, Reason: "x"}, `{}`},
	}
	for _, tt := range tests {
		out := Adapter{}.Render(agentevent.Event{Native: tt.native}, tt.ans)
		if string(out.Stdout) != tt.want+"\n" || out.ExitCode != 0 {
			t.Errorf("%s %+v: %q exit %d, want %s", tt.native, tt.ans, out.Stdout, out.ExitCode, tt.want)
		}
	}
}

// TestCapabilities: no event follows Gemini CLI's compaction, so its anchor
// waits for an event whose answer reaches the model, and every kind the
// capabilities name is one RenderAnswer gives context to.
func TestCapabilities(t *testing.T) {
	c := agentevent.CapabilitiesOf(Adapter{})
	if !c.NoCompactStart {
		t.Fatal("NoCompactStart is false")
	}
	natives := map[agentevent.Kind]string{}
	for _, n := range []string{SessionStart, BeforeAgent, AfterTool, PreCompress, AfterAgent, SessionEnd} {
		k := Neutral(Event{HookEventName: n, Trigger: "manual"}).Kind
		natives[k] = n
	}
	for _, k := range []agentevent.Kind{agentevent.SessionStart, agentevent.Prompt, agentevent.ToolDone, agentevent.PreCompact, agentevent.TurnEnd, agentevent.SessionEnd} {
		rendered := string(RenderAnswer(natives[k], agentevent.Answer{Context: "ctx"})) != "{}\n"
		if rendered != c.CarriesContext(k) {
			t.Errorf("%s (%s): context rendered %v, capabilities say %v", k, natives[k], rendered, c.CarriesContext(k))
		}
	}
}

func TestCompressionDue(t *testing.T) {
	answer := func(model string, input int) string {
		return `{"id":"a","type":"gemini","content":"","tokens":{"input":` + strconv.Itoa(input) + `,"output":10,"total":1},"model":"` + model + `"}`
	}
	tests := []struct {
		name      string
		tail      string
		threshold float64
		want      bool
	}{
		{"past half the window", answer("gemini-3.8-flash", 600000) + "\n" + `{"$set":{"lastUpdated":"x"}}` + "\n", 0.5, true},
		{"below it", answer("gemini-3.8-flash", 500000), 0.5, false},
		{"the last answer counts", answer("gemini-3.8-flash", 900000) + "\n" + answer("gemini-3.8-flash", 100), 0.5, false},
		{"a lower threshold", answer("gemini-3.8-flash", 300000), 0.2, true},
		{"Gemma's smaller window", answer("gemma-4-31b-it", 130000), 0.5, true},
		{"a user message with tokens in its text", `{"type":"user","content":[{"text":"\"tokens\""}]}`, 0.5, false},
		{"no answer", `{"sessionId":"s"}`, 0.5, false},
		{"a cut line", `input":900000}}`, 0.5, false},
	}
	for _, tt := range tests {
		if got := CompressionDue([]byte(tt.tail), tt.threshold); got != tt.want {
			t.Errorf("%s: CompressionDue = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRefine: PreCompress auto is PreCompact only when the transcript says
// the compression follows, with the threshold of the project's settings
// (comments allowed) before the user's.
func TestRefine(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	transcript := filepath.Join(dir, "session.jsonl")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(transcript, `{"sessionId":"s"}`+"\n"+`{"type":"gemini","tokens":{"input":300000},"model":"gemini-3.8-flash"}`+"\n")
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	refined := func(trigger string) agentevent.Kind {
		ev := Neutral(Event{HookEventName: PreCompress, Trigger: trigger, TranscriptPath: transcript, CWD: dir})
		Adapter{}.Refine(&ev, getenv)
		return ev.Kind
	}
	if k := refined("auto"); k != "" {
		t.Errorf("300,000 tokens at the default threshold: %q", k)
	}
	write(filepath.Join(home, ".gemini", "settings.json"), `{"model": {"compressionThreshold": 0.25}}`)
	if k := refined("auto"); k != agentevent.PreCompact {
		t.Errorf("user threshold 0.25: %q", k)
	}
	write(filepath.Join(dir, ".gemini", "settings.json"), "{\n  // later\n  \"model\": {\"compressionThreshold\": 0.5}\n}\n")
	if k := refined("auto"); k != "" {
		t.Errorf("project threshold 0.5 wins: %q", k)
	}
	if k := refined("manual"); k != agentevent.PreCompact {
		t.Errorf("manual: %q", k)
	}
	ev := Neutral(Event{HookEventName: PreCompress, Trigger: "auto", TranscriptPath: filepath.Join(dir, "missing"), CWD: dir})
	Adapter{}.Refine(&ev, getenv)
	if ev.Kind != "" {
		t.Errorf("missing transcript: %q", ev.Kind)
	}
}

func TestPackageVersion(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@google", "gemini-cli")
	if err := os.MkdirAll(filepath.Join(pkg, "bundle"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@google/gemini-cli","version":"0.61.0"}`), 0o644)
	_ = os.WriteFile(filepath.Join(pkg, "bundle", "gemini.js"), nil, 0o755)
	bin := filepath.Join(dir, "node_modules", ".bin")
	_ = os.MkdirAll(bin, 0o755)
	if err := os.Symlink("../@google/gemini-cli/bundle/gemini.js", filepath.Join(bin, "gemini")); err != nil {
		t.Fatal(err)
	}
	for script, want := range map[string]string{
		filepath.Join(bin, "gemini"):               "0.61.0",
		filepath.Join(pkg, "bundle", "gemini.js"):  "0.61.0",
		filepath.Join(pkg, "package.json"):         "",
		"/usr/bin/node":                            "",
		filepath.Join(dir, "missing", "gemini.js"): "",
	} {
		if got := packageVersion(script); got != want {
			t.Errorf("packageVersion(%s) = %q, want %q", script, got, want)
		}
	}
	if v := clientVersion(os.Getpid()); v != "" {
		t.Errorf("a test process has no Gemini CLI ancestor: %q", v)
	}
}

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

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// harness is one simulated project.
type harness struct {
	t       *testing.T
	dir     string
	hookLog string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir()}
	h.hookLog = filepath.Join(h.dir, "hook.log")
	t.Setenv("FAKEHOOK_LOG", h.hookLog)
	return h
}

func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fake is a hook command running testdata/fakehook.sh.
func fake(exit int, stdout, stderr string, sleep ...string) string {
	abs, err := filepath.Abs("testdata/fakehook.sh")
	if err != nil {
		panic(err)
	}
	cmd := fmt.Sprintf("sh %s %d %s %s", q(abs), exit, q(stdout), q(stderr))
	if len(sleep) > 0 {
		cmd += " " + sleep[0]
	}
	return cmd
}

type group struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookCommand `json:"hooks"`
}

func cmdHook(command string, timeout ...float64) hookCommand {
	h := hookCommand{Type: "command", Command: command}
	if len(timeout) > 0 {
		h.Timeout = timeout[0]
	}
	return h
}

func (h *harness) settings(file string, hooks map[string][]group) {
	h.t.Helper()
	data, err := json.Marshal(map[string]any{"hooks": hooks})
	if err != nil {
		h.t.Fatal(err)
	}
	p := filepath.Join(h.dir, ".claude", file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// play runs the script (YAML) and returns the exit code and the transcript.
func (h *harness) play(script string, extra ...string) (int, []Entry) {
	h.t.Helper()
	sp := filepath.Join(h.dir, "script.yaml")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		h.t.Fatal(err)
	}
	tr := filepath.Join(h.dir, "transcript.jsonl")
	_ = os.Remove(tr)
	var stderr strings.Builder
	code := run(append([]string{"-project", h.dir, "-script", sp, "-transcript", tr, "-session", "s1"}, extra...), &stderr)
	f, err := os.Open(tr)
	if err != nil {
		h.t.Fatalf("no transcript (exit %d, %s): %v", code, stderr.String(), err)
	}
	defer func() { _ = f.Close() }()
	var entries []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			h.t.Fatalf("transcript line %q: %v", sc.Text(), err)
		}
		entries = append(entries, e)
	}
	return code, entries
}

// hookInputs returns the events the fake hook received, in order.
func (h *harness) hookInputs() []map[string]any {
	h.t.Helper()
	data, err := os.ReadFile(h.hookLog)
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.Split(line, "\t")
		var m map[string]any
		if err := json.Unmarshal([]byte(parts[0]), &m); err != nil {
			h.t.Fatalf("hook stdin %q: %v", parts[0], err)
		}
		m["_pwd"], m["_project"] = parts[1], parts[2]
		out = append(out, m)
	}
	return out
}

func kinds(entries []Entry, kind string) []Entry {
	var out []Entry
	for _, e := range entries {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func outcome(t *testing.T, entries []Entry, event string) Entry {
	t.Helper()
	for _, e := range entries {
		if e.Kind == "outcome" && e.Event == event {
			return e
		}
	}
	t.Fatalf("no outcome for %s", event)
	return Entry{}
}

func texts(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Text)
	}
	return out
}

func TestEventInputAndEnvironment(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{
		"SessionStart": {{Hooks: []hookCommand{cmdHook(fake(0, "", ""))}}},
		"SessionEnd":   {{Hooks: []hookCommand{cmdHook(fake(0, "", ""))}}},
	})
	code, _ := h.play("actions: []\n")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	in := h.hookInputs()
	if len(in) != 2 {
		t.Fatalf("hook ran %d times", len(in))
	}
	start := in[0]
	for k, want := range map[string]any{
		"session_id": "s1", "cwd": h.dir, "hook_event_name": "SessionStart", "source": "startup",
		"transcript_path": filepath.Join(h.dir, "transcript.jsonl"), "_pwd": h.dir, "_project": h.dir,
	} {
		if start[k] != want {
			t.Errorf("SessionStart %s = %v, want %v", k, start[k], want)
		}
	}
	if in[1]["hook_event_name"] != "SessionEnd" || in[1]["reason"] != "other" {
		t.Errorf("SessionEnd input %v", in[1])
	}
}

func TestContextAnswers(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		command string
		script  string
		want    []string
	}{
		{name: "session start json", event: "SessionStart", command: fake(0, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"DO NOT REPEAT step 1"}}`, ""), script: "actions: []", want: []string{"DO NOT REPEAT step 1"}},
		{name: "session start plain stdout", event: "SessionStart", command: fake(0, "plain context\n", ""), script: "actions: []", want: []string{"plain context"}},
		{name: "session start wrong hookEventName", event: "SessionStart", command: fake(0, `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"x"}}`, ""), script: "actions: []", want: nil},
		{name: "session start exit 2 is not context", event: "SessionStart", command: fake(2, "out", "err"), script: "actions: []", want: nil},
		{name: "session start exit 1", event: "SessionStart", command: fake(1, "out", "err"), script: "actions: []", want: nil},
		{name: "prompt plain stdout", event: "UserPromptSubmit", command: fake(0, "prompt context", ""), script: "actions: [{prompt: hi}]", want: []string{"prompt context"}},
		{name: "prompt json", event: "UserPromptSubmit", command: fake(0, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"c"}}`, ""), script: "actions: [{prompt: hi}]", want: []string{"c"}},
		{name: "post tool use plain stdout is not context", event: "PostToolUse", command: fake(0, "noise", ""), script: "actions: [{run: 'true'}]", want: nil},
		{name: "post tool use json context", event: "PostToolUse", command: fake(0, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"c"}}`, ""), script: "actions: [{run: 'true'}]", want: []string{"c"}},
		{name: "pre compact stdout is discarded", event: "PreCompact", command: fake(0, "anchor", ""), script: "actions: [{compact: {}}]", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.settings("settings.json", map[string][]group{tt.event: {{Hooks: []hookCommand{cmdHook(tt.command)}}}})
			_, entries := h.play(tt.script)
			if got := texts(kinds(entries, "context")); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("context %q, want %q", got, tt.want)
			}
			o := outcome(t, entries, tt.event)
			if o.Blocked {
				t.Fatalf("%s blocked", tt.event)
			}
			if strings.Contains(tt.name, "exit") || strings.Contains(tt.name, "wrong") {
				if len(o.Messages) == 0 {
					t.Fatalf("an error must be shown to the user: %+v", o)
				}
			}
		})
	}
}

func TestMatchers(t *testing.T) {
	tests := []struct {
		matcher string
		want    []string // tool names the hook saw
	}{
		{matcher: "", want: []string{"Bash", "Write"}},
		{matcher: "*", want: []string{"Bash", "Write"}},
		{matcher: "Write", want: []string{"Write"}},
		{matcher: "Bash|Write", want: []string{"Bash", "Write"}},
		{matcher: "Wri.*", want: []string{"Write"}},
		{matcher: "Bas", want: nil},
		{matcher: "(", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.matcher, func(t *testing.T) {
			h := newHarness(t)
			h.settings("settings.json", map[string][]group{"PostToolUse": {{Matcher: tt.matcher, Hooks: []hookCommand{cmdHook(fake(0, "", ""))}}}})
			h.play("actions:\n- run: echo hi\n- write: {path: a/b.txt, content: x}\n")
			var got []string
			for _, in := range h.hookInputs() {
				got = append(got, in["tool_name"].(string))
				if in["tool_name"] == "Bash" {
					resp := in["tool_response"].(map[string]any)
					if resp["stdout"] != "hi\n" || in["tool_input"].(map[string]any)["command"] != "echo hi" {
						t.Errorf("Bash event %v", in)
					}
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("hook saw %v, want %v", got, tt.want)
			}
			if b, err := os.ReadFile(filepath.Join(h.dir, "a/b.txt")); err != nil || string(b) != "x" {
				t.Fatalf("write action: %q %v", b, err)
			}
		})
	}
}

func TestSessionStartMatcherOnSource(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{"SessionStart": {
		{Matcher: "compact", Hooks: []hookCommand{cmdHook(fake(0, "after compaction", ""))}},
		{Matcher: "startup|resume", Hooks: []hookCommand{cmdHook(fake(0, "at start", ""))}},
	}})
	_, entries := h.play("actions: [{compact: {trigger: auto}}]\n", "-source", "resume")
	if got := texts(kinds(entries, "context")); !reflect.DeepEqual(got, []string{"at start", "after compaction"}) {
		t.Fatalf("context %q", got)
	}
}

func TestFailedBashFiresPostToolUseFailure(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{"PostToolUse": {{Hooks: []hookCommand{cmdHook(fake(0, "", ""))}}}})
	_, entries := h.play("actions: [{run: 'exit 3'}]\n")
	if len(h.hookInputs()) != 0 {
		t.Fatal("PostToolUse fired for a failed command")
	}
	o := outcome(t, entries, "PostToolUseFailure")
	if o.Blocked {
		t.Fatal("blocked")
	}
}

func TestStop(t *testing.T) {
	tests := []struct {
		name        string
		command     string
		max         int
		wantPrompts []string
		wantActive  []bool // stop_hook_active of each Stop event
		wantCap     bool
	}{
		{name: "allow", command: fake(0, "", ""), max: 3, wantActive: []bool{false}},
		{name: "json block", command: fake(0, `{"decision":"block","reason":"do step 2"}`, ""), max: 2,
			wantPrompts: []string{"do step 2", "do step 2"}, wantActive: []bool{false, true}},
		{name: "exit 2 feeds stderr, ignores json", command: fake(2, `{"decision":"block","reason":"lost"}`, "from stderr"), max: 1,
			wantPrompts: []string{"from stderr"}, wantActive: []bool{false}},
		{name: "block without reason is not honoured", command: fake(0, `{"decision":"block"}`, ""), max: 2, wantActive: []bool{false}},
		{name: "continue false wins", command: fake(0, `{"decision":"block","reason":"x","continue":false,"stopReason":"paused"}`, ""), max: 2, wantActive: []bool{false}},
		{name: "exit 1 does not block", command: fake(1, `{"decision":"block","reason":"x"}`, "oops"), max: 2, wantActive: []bool{false}},
		// The real client has no cap of its own: 30 blocks in a row go through.
		{name: "no client cap on consecutive blocks", command: fake(0, `{"decision":"block","reason":"again"}`, ""), max: 30,
			wantPrompts: slices.Repeat([]string{"again"}, 30),
			wantActive:  append([]bool{false}, slices.Repeat([]bool{true}, 29)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.settings("settings.json", map[string][]group{"Stop": {{Hooks: []hookCommand{cmdHook(tt.command)}}}})
			_, entries := h.play(fmt.Sprintf("actions: [{stop: {max: %d}}]\n", tt.max))
			var prompts []string
			for _, e := range kinds(entries, "prompt") {
				if e.Origin == "stop_hook" {
					prompts = append(prompts, e.Text)
				}
			}
			if !reflect.DeepEqual(prompts, tt.wantPrompts) {
				t.Fatalf("continuations %q, want %q", prompts, tt.wantPrompts)
			}
			var active []bool
			for _, in := range h.hookInputs() {
				active = append(active, in["stop_hook_active"].(bool))
			}
			if !reflect.DeepEqual(active, tt.wantActive) {
				t.Fatalf("stop_hook_active %v, want %v", active, tt.wantActive)
			}
			if got := len(kinds(entries, "stop_block_cap")) == 1; got != tt.wantCap {
				t.Fatalf("cap reached %v, want %v", got, tt.wantCap)
			}
		})
	}
}

func TestStopHookActiveResetsOnPrompt(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{"Stop": {{Hooks: []hookCommand{cmdHook(fake(0, `{"decision":"block","reason":"go"}`, ""))}}}})
	h.play("actions:\n- stop: {}\n- run: 'true'\n- stop: {}\n- prompt: new turn\n- stop: {}\n")
	var active []bool
	for _, in := range h.hookInputs() {
		active = append(active, in["stop_hook_active"].(bool))
	}
	if want := []bool{false, true, false}; !reflect.DeepEqual(active, want) {
		t.Fatalf("stop_hook_active %v, want %v", active, want)
	}
}

func TestRunSeesContinuation(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{"Stop": {{Hooks: []hookCommand{cmdHook(fake(0, `{"decision":"block","reason":"run step 2"}`, ""))}}}})
	_, entries := h.play("actions:\n- stop: {}\n- run: echo \"$CLAUDESIM_LAST_CONTINUATION\"\n")
	tools := kinds(entries, "tool")
	if len(tools) != 1 || tools[0].Stdout != "run step 2\n" {
		t.Fatalf("tool %+v", tools)
	}
}

func TestPromptBlocked(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{"UserPromptSubmit": {{Hooks: []hookCommand{cmdHook(fake(2, "", "not now"))}}}})
	_, entries := h.play("actions: [{prompt: do it}]\n")
	b := kinds(entries, "prompt_blocked")
	if len(b) != 1 || b[0].Reason != "not now" || len(kinds(entries, "prompt")) != 0 {
		t.Fatalf("entries %+v", entries)
	}
}

func TestTimeout(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{"SessionStart": {{Hooks: []hookCommand{cmdHook(fake(0, "late", "", "5"), 0.5)}}}})
	start := time.Now()
	_, entries := h.play("actions: []\n")
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("the timeout did not kill the hook: %s", d)
	}
	hooks := kinds(entries, "hook")
	if len(hooks) == 0 || !hooks[0].TimedOut || len(kinds(entries, "context")) != 0 {
		t.Fatalf("hook %+v", hooks)
	}
	if o := outcome(t, entries, "SessionStart"); len(o.Messages) != 1 || !strings.Contains(o.Messages[0], "timed out") {
		t.Fatalf("outcome %+v", o)
	}
}

func TestLocalSettingsMergeAndDedupe(t *testing.T) {
	h := newHarness(t)
	same := fake(0, "once", "")
	h.settings("settings.json", map[string][]group{"SessionStart": {{Hooks: []hookCommand{cmdHook(same)}}}})
	h.settings("settings.local.json", map[string][]group{"SessionStart": {{Hooks: []hookCommand{cmdHook(same), cmdHook(fake(0, "local", ""))}}}})
	_, entries := h.play("actions: []\n")
	if got := texts(kinds(entries, "context")); !reflect.DeepEqual(got, []string{"once", "local"}) {
		t.Fatalf("context %q", got)
	}
}

func TestCompactOrder(t *testing.T) {
	h := newHarness(t)
	all := []group{{Hooks: []hookCommand{cmdHook(fake(0, "", ""))}}}
	h.settings("settings.json", map[string][]group{"PreCompact": all, "SessionStart": all})
	_, entries := h.play("actions: [{compact: {instructions: keep steps}}]\n")
	in := h.hookInputs()
	var got []string
	for _, e := range in {
		got = append(got, fmt.Sprint(e["hook_event_name"], "/", e["source"], e["trigger"]))
	}
	if want := []string{"SessionStart/startup<nil>", "PreCompact/<nil>manual", "SessionStart/compact<nil>"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if in[1]["custom_instructions"] != "keep steps" || len(kinds(entries, "compacted")) != 1 {
		t.Fatalf("PreCompact input %v", in[1])
	}
}

func TestExitAndEnd(t *testing.T) {
	tests := []struct {
		script    string
		wantCode  int
		wantEnds  []string // SessionEnd reasons
		wantStops int      // actions after exit never run
	}{
		{script: "actions: [{exit: {code: 137}}, {stop: {}}]", wantCode: 137},
		{script: "actions: [{end: {reason: logout}}, {stop: {}}]", wantEnds: []string{"logout"}},
		{script: "actions: [{stop: {}}]", wantEnds: []string{"other"}, wantStops: 1},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			h := newHarness(t)
			all := []group{{Hooks: []hookCommand{cmdHook(fake(0, "", ""))}}}
			h.settings("settings.json", map[string][]group{"SessionEnd": all, "Stop": all})
			code, _ := h.play(tt.script + "\n")
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d", code, tt.wantCode)
			}
			var ends []string
			stops := 0
			for _, in := range h.hookInputs() {
				switch in["hook_event_name"] {
				case "SessionEnd":
					ends = append(ends, in["reason"].(string))
				case "Stop":
					stops++
				}
			}
			if !reflect.DeepEqual(ends, tt.wantEnds) || stops != tt.wantStops {
				t.Fatalf("SessionEnd %v, Stops %d", ends, stops)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		script   string
		want     string
	}{
		{name: "two actions in one", script: "actions: [{run: x, prompt: y}]", want: "actions[0]: want exactly one"},
		{name: "unknown field", script: "actions: [{runn: x}]", want: "unknown field"},
		{name: "bad sleep", script: "actions: [{sleep: soon}]", want: "actions[0].sleep"},
		{name: "corrupt settings", settings: "{", script: "actions: []", want: "settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.settings != "" {
				_ = os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
				_ = os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(tt.settings), 0o644)
			}
			sp := filepath.Join(dir, "s.yaml")
			_ = os.WriteFile(sp, []byte(tt.script), 0o644)
			var stderr strings.Builder
			if code := run([]string{"-project", dir, "-script", sp}, &stderr); code != 1 || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q, want %q", code, stderr.String(), tt.want)
			}
		})
	}
	if code := run(nil, io.Discard); code != 1 {
		t.Fatalf("no -script: exit %d", code)
	}
}

func TestTestdataScriptsAreValid(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("testdata scripts: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var sc Script
		if err := yaml.UnmarshalStrict(data, &sc); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := sc.Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestExampleScriptIsValid(t *testing.T) {
	data, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sc Script
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		t.Fatal(err)
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(sc.Actions) != 9 || sc.Actions[7].Stop == nil || sc.Actions[7].Stop.Max != 10 {
		t.Fatalf("example decoded as %+v", sc.Actions)
	}
}

func TestSessionEntryRecordsTetherEnv(t *testing.T) {
	t.Setenv("TETHER_HOOK", "task")
	t.Setenv("TETHER_WORKER", "agent-1")
	h := newHarness(t)
	_, entries := h.play("actions: []", "-source", "resume")
	s := kinds(entries, "session")
	if len(s) != 1 || entries[0].Kind != "session" || s[0].Text != "resume" || s[0].Reason != "s1" {
		t.Fatalf("session entries %+v: want one, first, with source resume and the session id", s)
	}
	if s[0].Env["TETHER_HOOK"] != "task" || s[0].Env["TETHER_WORKER"] != "agent-1" {
		t.Fatalf("session env %v lacks the TETHER_* variables", s[0].Env)
	}
	for k := range s[0].Env {
		if !strings.HasPrefix(k, "TETHER_") {
			t.Fatalf("session env records %s", k)
		}
	}
}

// readTranscript decodes a JSONL transcript.
func readTranscript(t *testing.T, path string) []Entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Entry
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func TestResumeScriptPlaysWhenTheTranscriptHoldsASession(t *testing.T) {
	h := newHarness(t)
	h.settings("settings.json", map[string][]group{"SessionStart": {{Hooks: []hookCommand{cmdHook(fake(0, "", ""))}}}})
	first := filepath.Join(h.dir, "first.yaml")
	again := filepath.Join(h.dir, "again.yaml")
	_ = os.WriteFile(first, []byte("actions: [{run: echo first}, {exit: {code: 3}}]"), 0o644)
	_ = os.WriteFile(again, []byte("actions: [{run: echo again}]"), 0o644)
	tr := filepath.Join(h.dir, "t", "transcript.jsonl")
	args := []string{"-project", h.dir, "-script", first, "-resume-script", again, "-transcript", tr}
	if code := run(args, io.Discard); code != 3 {
		t.Fatalf("first run: exit %d, want the script's 3", code)
	}
	if code := run(args, io.Discard); code != 0 {
		t.Fatalf("second run: exit %d", code)
	}
	entries := readTranscript(t, tr)
	var got []string
	for _, e := range entries {
		switch e.Kind {
		case "session":
			got = append(got, "session "+e.Text)
		case "tool":
			got = append(got, strings.TrimSpace(e.Stdout))
		}
	}
	if want := []string{"session startup", "first", "session resume", "again"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sessions and tools %q, want %q", got, want)
	}
	var sources []any
	for _, in := range h.hookInputs() {
		sources = append(sources, in["source"])
	}
	if want := []any{"startup", "resume"}; !reflect.DeepEqual(sources, want) {
		t.Fatalf("SessionStart sources %v, want %v", sources, want)
	}
}

func TestSignalEndsASleep(t *testing.T) {
	h := newHarness(t)
	tr := filepath.Join(h.dir, "transcript.jsonl")
	f, err := os.OpenFile(tr, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{Project: h.dir, SessionID: "s1", Transcript: tr, out: f}
	done := make(chan int, 1)
	go func() { done <- s.Run(ctx, &Script{Actions: []Action{{Sleep: "1h"}, {Run: "echo never"}}}, "") }()
	cancel()
	select {
	case code := <-done:
		if code != InterruptedExit {
			t.Fatalf("exit %d, want %d", code, InterruptedExit)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled sleep did not end the session")
	}
	entries := readTranscript(t, tr)
	if last := entries[len(entries)-1]; last.Kind != "exit" || last.Reason != "signal" || len(kinds(entries, "tool")) != 0 {
		t.Fatalf("transcript %+v: want an exit by signal and no further action", entries)
	}
}

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
	"reflect"
	"testing"

	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/claudehook"
)

func TestAdapterDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		env  string
		want agentevent.Event
	}{
		{"session start with the version", `{"hook_event_name":"SessionStart","session_id":"s","cwd":"/w","source":"resume"}`, "claude-code_2-1-197_harness",
			agentevent.Event{Kind: agentevent.SessionStart, Native: "SessionStart", Agent: "claude", AgentVersion: "2.1.197", SessionID: "s", CWD: "/w", Source: "resume"}},
		{"foreign AI_AGENT", `{"hook_event_name":"UserPromptSubmit","prompt":"go"}`, "someone-else_1",
			agentevent.Event{Kind: agentevent.Prompt, Native: "UserPromptSubmit", Agent: "claude", Prompt: "go"}},
		{"failed Bash", `{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"git commit -m x && false"},"error":"Exit code 1"}`, "",
			agentevent.Event{Kind: agentevent.ToolDone, Native: "PostToolUseFailure", Agent: "claude", Tool: "Bash", ToolFailed: true, Shell: "git commit -m x && false"}},
		{"Bash output", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"gh pr create"},"tool_response":{"stdout":"https://h/o/r/pull/1"}}`, "",
			agentevent.Event{Kind: agentevent.ToolDone, Native: "PostToolUse", Agent: "claude", Tool: "Bash", Shell: "gh pr create", ShellOutput: "https://h/o/r/pull/1"}},
		{"other tool", `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"command":"git commit"}}`, "",
			agentevent.Event{Kind: agentevent.ToolDone, Native: "PostToolUse", Agent: "claude", Tool: "Write"}},
		{"stop", `{"hook_event_name":"Stop","stop_hook_active":true}`, "",
			agentevent.Event{Kind: agentevent.TurnEnd, Native: "Stop", Agent: "claude", Continued: true}},
		{"pre compact", `{"hook_event_name":"PreCompact","trigger":"manual"}`, "",
			agentevent.Event{Kind: agentevent.PreCompact, Native: "PreCompact", Agent: "claude", Trigger: "manual"}},
		{"session end", `{"hook_event_name":"SessionEnd","reason":"logout"}`, "",
			agentevent.Event{Kind: agentevent.SessionEnd, Native: "SessionEnd", Agent: "claude", Reason: "logout"}},
		{"unknown event", `{"hook_event_name":"Notification"}`, "",
			agentevent.Event{Native: "Notification", Agent: "claude"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudehook.Adapter{}.Decode([]byte(tt.in), func(k string) string {
				if k == "AI_AGENT" {
					return tt.env
				}
				return ""
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, err := (claudehook.Adapter{}).Decode([]byte(`[]`), nil); err == nil {
		t.Fatal("a non-object decoded")
	}
}

func TestAdapterRender(t *testing.T) {
	tests := []struct {
		name   string
		native string
		ans    agentevent.Answer
		want   string
	}{
		{"context at SessionStart", "SessionStart", agentevent.Answer{Context: "c"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"c"}}` + "\n"},
		{"context at UserPromptSubmit", "UserPromptSubmit", agentevent.Answer{Context: "c"}, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"c"}}` + "\n"},
		{"no context at PostToolUse", "PostToolUse", agentevent.Answer{Context: "c"}, ""},
		{"continue", "Stop", agentevent.Answer{Continue: true, Reason: "go on"}, `{"decision":"block","reason":"go on"}` + "\n"},
		{"nothing", "Stop", agentevent.Answer{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := claudehook.Adapter{}.Render(agentevent.Event{Native: tt.native}, tt.ans)
			if string(out.Stdout) != tt.want || out.ExitCode != 0 {
				t.Fatalf("got %q exit %d, want %q", out.Stdout, out.ExitCode, tt.want)
			}
		})
	}
}

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

package claudehook

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tether-dev/tether/internal/agent/agentevent"
)

// Agent is Claude Code's name in tether: `tether agent hook --agent
// claude`, the default, and status.agentSession.agent.
const Agent = "claude"

// ShellTool is the name of Claude Code's shell tool.
const ShellTool = "Bash"

// agentEnv is set by Claude Code in its hooks' environment:
// "claude-code_2-1-197_harness" (the version with dashes for dots).
const agentEnv = "AI_AGENT"

// Adapter is Claude Code's agentevent.Adapter.
type Adapter struct{}

var _ agentevent.Adapter = Adapter{}

// Decode reads one Claude Code event (see DecodeEvent) and translates it.
func (Adapter) Decode(data []byte, getenv func(string) string) (agentevent.Event, error) {
	ev, err := DecodeEvent(bytes.NewReader(data))
	if err != nil {
		return agentevent.Event{}, err
	}
	n := Neutral(ev)
	if getenv != nil {
		n.AgentVersion = versionOf(getenv(agentEnv))
	}
	return n, nil
}

// Render renders ans in Claude Code's protocol (see RenderAnswer).
func (Adapter) Render(ev agentevent.Event, ans agentevent.Answer) agentevent.Output {
	a := RenderAnswer(ev.Native, ans)
	return agentevent.Output{Stdout: a.Stdout, ExitCode: a.ExitCode}
}

// versionOf reads the version in AI_AGENT's "claude-code_2-1-197_harness".
func versionOf(v string) string {
	rest, ok := strings.CutPrefix(v, "claude-code_")
	if !ok {
		return ""
	}
	ver, _, _ := strings.Cut(rest, "_")
	if ver == "" || len(ver) > 64 || strings.Trim(ver, "0123456789-abcdefghijklmnopqrstuvwxyz") != "" {
		return ""
	}
	return strings.ReplaceAll(ver, "-", ".")
}

// Neutral translates a Claude Code event. SessionStart with source compact
// stays a SessionStart: Claude Code reports the end of a compaction so.
func Neutral(ev Event) agentevent.Event {
	n := agentevent.Event{
		Native: ev.HookEventName, Agent: Agent,
		SessionID: ev.SessionID, TranscriptPath: ev.TranscriptPath, CWD: ev.CWD,
	}
	switch ev.HookEventName {
	case SessionStart:
		n.Kind, n.Source = agentevent.SessionStart, ev.Source
	case UserPromptSubmit:
		n.Kind, n.Prompt = agentevent.Prompt, ev.Prompt
	case PostToolUse, PostToolUseFailure:
		n.Kind, n.Tool, n.ToolFailed = agentevent.ToolDone, ev.ToolName, ev.HookEventName == PostToolUseFailure
		if ev.ToolName == ShellTool {
			n.Shell = toolCommand(ev.ToolInput)
			if n.Shell != "" {
				n.ShellOutput = responseStdout(ev.ToolResponse)
			}
		}
	case PreCompact:
		n.Kind, n.Trigger = agentevent.PreCompact, ev.Trigger
	case Stop:
		n.Kind, n.Continued = agentevent.TurnEnd, ev.StopHookActive
	case SessionEnd:
		n.Kind, n.Reason = agentevent.SessionEnd, ev.Reason
	}
	return n
}

// RenderAnswer is ans in Claude Code's protocol: a continuation is
// {"decision":"block","reason":...}, context is hookSpecificOutput's
// additionalContext for the events that take it (SessionStart,
// UserPromptSubmit), anything else is no output.
func RenderAnswer(native string, ans agentevent.Answer) Answer {
	switch {
	case ans.Continue:
		return BlockStop(ans.Reason)
	case ans.Context != "" && (native == SessionStart || native == UserPromptSubmit):
		return AdditionalContext(native, ans.Context)
	}
	return NoOp()
}

// toolCommand is a Bash tool_input's command.
func toolCommand(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	return in.Command
}

// responseStdout returns the stdout of a Bash tool_response: the "stdout"
// field of an object, or the response itself when it is a string.
func responseStdout(raw json.RawMessage) string {
	var obj struct {
		Stdout string `json:"stdout"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Stdout != "" {
		return obj.Stdout
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

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

// Package geminihook is Gemini CLI's adapter of "tether agent hook
// --agent gemini": it decodes the event JSON Gemini CLI writes to a hook's
// stdin into an agentevent.Event and renders agentevent's answers as Gemini
// CLI reads them. What tether does with an event is agentsession's, the same
// for every agent. Only Refine reads files (the session's transcript and
// the settings, for PreCompress).
//
// Every answer exits 0 with one JSON object on stdout, "{}" when tether has
// nothing to say: Gemini CLI parses stderr as the answer when stdout is
// empty, and would show tether's notes to the user as a system message.
package geminihook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/internal/agent/agentevent"
)

// Agent is Gemini CLI's name in tether: `tether agent hook --agent gemini`
// and status.agentSession.agent.
const Agent = "gemini"

// ShellTool is the name of Gemini CLI's shell tool.
const ShellTool = "run_shell_command"

// Event names of Gemini CLI tether handles.
const (
	SessionStart = "SessionStart"
	// BeforeAgent comes after a prompt is submitted, before the model plans:
	// a person's prompt, or the reason of an AfterAgent "deny" that Gemini
	// CLI sends as the next prompt.
	BeforeAgent = "BeforeAgent"
	AfterTool   = "AfterTool"
	// PreCompress comes before a compression of the history. With trigger
	// auto, Gemini CLI 0.61 runs it before every model call, before it
	// checks whether compression is due; with trigger manual (/compress)
	// the compression always follows.
	PreCompress = "PreCompress"
	// AfterAgent comes when the model ends its turn; "deny" sends the
	// reason as a new prompt instead.
	AfterAgent = "AfterAgent"
	SessionEnd = "SessionEnd"
)

// Event is the JSON Gemini CLI writes to a hook's stdin. Fields an event
// does not carry stay zero; unknown fields are ignored.
type Event struct {
	// SessionID identifies the session; a resumed session (--resume) keeps
	// it.
	SessionID string `json:"session_id"`
	// TranscriptPath is the session's transcript (JSONL).
	TranscriptPath string `json:"transcript_path"`
	// CWD is the project directory.
	CWD string `json:"cwd"`
	// HookEventName is the event.
	HookEventName string `json:"hook_event_name"`
	// Source is SessionStart's cause: startup, resume or clear.
	Source string `json:"source,omitempty"`
	// Prompt is BeforeAgent's prompt (and AfterAgent's original one).
	Prompt string `json:"prompt,omitempty"`
	// StopHookActive is AfterAgent's: the turn follows an AfterAgent
	// "deny" and ended without a tool call since.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// ToolName is the tool of BeforeTool and AfterTool.
	ToolName string `json:"tool_name,omitempty"`
	// ToolInput is the tool's arguments; for the shell tool {"command": ...}.
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	// ToolResponse is AfterTool's result: llmContent, returnDisplay and
	// error.
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Trigger is PreCompress's cause: auto or manual.
	Trigger string `json:"trigger,omitempty"`
	// Reason is SessionEnd's cause: exit, clear, logout, prompt_input_exit
	// or other.
	Reason string `json:"reason,omitempty"`
}

// DecodeEvent reads one event. It fails on input that is not one JSON object
// no larger than agentevent.MaxEventSize, or has no hook_event_name; any
// other field of an unexpected type is left zero.
func DecodeEvent(data []byte) (Event, error) {
	if len(data) > agentevent.MaxEventSize {
		return Event{}, fmt.Errorf("event: larger than %d bytes", agentevent.MaxEventSize)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return Event{}, errors.New("event: want a JSON object on stdin")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Event{}, fmt.Errorf("event: %w", err)
	}
	var ev Event
	str := func(k string, dst *string) { _ = json.Unmarshal(fields[k], dst) }
	str("session_id", &ev.SessionID)
	str("transcript_path", &ev.TranscriptPath)
	str("cwd", &ev.CWD)
	str("hook_event_name", &ev.HookEventName)
	str("source", &ev.Source)
	str("prompt", &ev.Prompt)
	str("tool_name", &ev.ToolName)
	str("trigger", &ev.Trigger)
	str("reason", &ev.Reason)
	_ = json.Unmarshal(fields["stop_hook_active"], &ev.StopHookActive)
	for k, dst := range map[string]*json.RawMessage{"tool_input": &ev.ToolInput, "tool_response": &ev.ToolResponse} {
		if v := fields[k]; len(v) > 0 && v[0] == '{' {
			*dst = v
		}
	}
	if ev.HookEventName == "" {
		return Event{}, errors.New("event: no hook_event_name")
	}
	return ev, nil
}

// Adapter is Gemini CLI's agentevent.Adapter.
type Adapter struct{}

var (
	_ agentevent.Adapter = Adapter{}
	_ agentevent.Capable = Adapter{}
)

// Decode reads one Gemini CLI event and translates it (see Neutral).
func (Adapter) Decode(data []byte, _ func(string) string) (agentevent.Event, error) {
	ev, err := DecodeEvent(data)
	if err != nil {
		return agentevent.Event{}, err
	}
	return Neutral(ev), nil
}

// Capabilities are Gemini CLI's: no event follows a compaction, and the
// context of SessionStart, BeforeAgent (appended to the prompt) and
// AfterTool (appended to the tool's result) reaches the model.
func (Adapter) Capabilities() agentevent.Capabilities {
	return agentevent.Capabilities{
		NoCompactStart: true,
		ContextKinds:   []agentevent.Kind{agentevent.SessionStart, agentevent.Prompt, agentevent.ToolDone},
	}
}

// Render renders ans in Gemini CLI's protocol (see RenderAnswer).
func (Adapter) Render(ev agentevent.Event, ans agentevent.Answer) agentevent.Output {
	return agentevent.Output{Stdout: RenderAnswer(ev.Native, ans)}
}

// IsContinuation reports whether prompt is one of tether's continuations
// (agentsession.ContinuationText), which Gemini CLI submits as a prompt of
// its own after an AfterAgent "deny".
func IsContinuation(prompt string) bool { return strings.HasPrefix(prompt, "tether: ") }

// Neutral translates a Gemini CLI event.
//
// AfterAgent is the end of a turn. Its stop_hook_active is false again as
// soon as a continued turn called a tool, so it cannot say whether a person
// spoke: every AfterAgent counts as Continued, and the count of
// continuations in a row starts again at a person's prompt instead (a
// BeforeAgent whose prompt is not tether's continuation).
//
// PreCompress with trigger manual (/compress) is PreCompact, and the
// compaction (Compacts: no event follows it). With trigger
// auto it says nothing here: Gemini CLI runs it before every model call,
// whether or not it then compresses; Refine reads the transcript to tell.
func Neutral(ev Event) agentevent.Event {
	n := agentevent.Event{
		Native: ev.HookEventName, Agent: Agent,
		SessionID: ev.SessionID, TranscriptPath: ev.TranscriptPath, CWD: ev.CWD,
	}
	switch ev.HookEventName {
	case SessionStart:
		n.Kind, n.Source = agentevent.SessionStart, ev.Source
	case BeforeAgent:
		n.Kind, n.Prompt, n.Continued = agentevent.Prompt, ev.Prompt, IsContinuation(ev.Prompt)
	case AfterTool:
		n.Kind, n.Tool = agentevent.ToolDone, ev.ToolName
		out, failed := toolOutput(ev.ToolResponse)
		n.ToolFailed = failed
		if ev.ToolName == ShellTool {
			n.Shell = toolCommand(ev.ToolInput)
			if n.Shell != "" {
				n.ShellOutput = out
			}
		}
	case PreCompress:
		n.Trigger = ev.Trigger
		if ev.Trigger == "manual" {
			n.Kind, n.Compacts = agentevent.PreCompact, true
		}
	case AfterAgent:
		n.Kind, n.Continued = agentevent.TurnEnd, true
	case SessionEnd:
		n.Kind, n.Reason = agentevent.SessionEnd, ev.Reason
	}
	return n
}

// RenderAnswer is ans in Gemini CLI's protocol: a continuation is
// {"decision":"deny","reason":...} at AfterAgent, context is
// hookSpecificOutput's additionalContext at SessionStart, BeforeAgent and
// AfterTool (which the client appends to the tool's result, in
// <hook_context>, with < and > escaped), anything else is "{}".
func RenderAnswer(native string, ans agentevent.Answer) []byte {
	var v any = struct{}{}
	switch {
	case ans.Continue && native == AfterAgent:
		v = map[string]string{"decision": "deny", "reason": ans.Reason}
	case ans.Context != "" && (native == SessionStart || native == BeforeAgent || native == AfterTool):
		v = map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": native, "additionalContext": ans.Context}}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.Bytes()
}

// toolCommand is a shell tool_input's command.
func toolCommand(raw json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	return in.Command
}

// shellFields are the labels of the lines Gemini CLI's shell tool puts after
// the command's output in llmContent.
var shellFields = regexp.MustCompile(`\n(Error|Exit Code|Signal|Background PIDs|Process Group PGID): `)

var exitCode = regexp.MustCompile(`(?m)^Exit Code: (-?\d+)`)

// toolOutput reads an AfterTool tool_response: the shell command's output
// (llmContent's "Output: " section, without the untrusted_context wrapper)
// and whether the call failed (an error, or a non-zero "Exit Code").
func toolOutput(raw json.RawMessage) (string, bool) {
	var r struct {
		LLMContent json.RawMessage `json:"llmContent"`
		Error      json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return "", false
	}
	failed := len(r.Error) > 0 && string(r.Error) != "null" && string(r.Error) != `""`
	var text string
	if json.Unmarshal(r.LLMContent, &text) != nil {
		return "", failed
	}
	text = strings.TrimSpace(text)
	text = strings.TrimPrefix(text, "<untrusted_context>")
	text = strings.TrimSuffix(text, "</untrusted_context>")
	if m := exitCode.FindStringSubmatch(text); m != nil {
		if c, err := strconv.Atoi(m[1]); err == nil && c != 0 {
			failed = true
		}
	}
	_, out, ok := strings.Cut(text, "Output: ")
	if !ok {
		return "", failed
	}
	if loc := shellFields.FindStringIndex(out); loc != nil {
		out = out[:loc[0]]
	}
	if out == "(empty)" {
		out = ""
	}
	return out, failed
}

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

// Package claudehook is Claude Code's adapter of "tether agent hook": it
// decodes the event JSON Claude Code writes to a hook's stdin into an
// agentevent.Event and renders agentevent's answers as Claude Code reads
// them. What tether does with an event is agentsession's, the same for every
// agent. It does no I/O beyond the reader and writer it is given.
//
// Answers follow one rule: exit 0 always. Context and decisions go to stdout
// as JSON; tether never combines JSON with exit 2, which Claude Code ignores
// (the earlier loop plugin's continuation was lost that way).
package claudehook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tether-dev/tether/internal/agent/agentevent"
)

// DisableEnv is agentevent.DisableEnv.
const DisableEnv = agentevent.DisableEnv

// Disabled is agentevent.Disabled.
func Disabled(getenv func(string) string) bool { return agentevent.Disabled(getenv) }

// Event names tether handles.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PostToolUse      = "PostToolUse"
	// PostToolUseFailure is PostToolUse for a tool call that failed (a Bash
	// command exiting non-zero): it carries error and is_interrupt instead
	// of tool_response.
	PostToolUseFailure = "PostToolUseFailure"
	PreCompact         = "PreCompact"
	Stop               = "Stop"
	SessionEnd         = "SessionEnd"
)

// MaxEventSize bounds the event JSON read from stdin: agentevent.MaxEventSize.
const MaxEventSize = agentevent.MaxEventSize

// Event is the JSON Claude Code writes to a hook's stdin. Fields an event does
// not carry stay zero; unknown fields are ignored.
type Event struct {
	// SessionID identifies the agent session.
	SessionID string `json:"session_id"`
	// TranscriptPath is the session's transcript file.
	TranscriptPath string `json:"transcript_path"`
	// CWD is the agent's working directory when the event fired.
	CWD string `json:"cwd"`
	// HookEventName is the event: SessionStart, Stop, ...
	HookEventName string `json:"hook_event_name"`
	// Source is SessionStart's cause: startup, resume, clear, compact, fork.
	Source string `json:"source,omitempty"`
	// StopHookActive is true on a Stop that follows a Stop hook's block in
	// the same turn.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// ToolName is PostToolUse's tool, such as "Bash" or "Write".
	ToolName string `json:"tool_name,omitempty"`
	// ToolInput is the tool's input; for Bash {"command": ...}.
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	// ToolResponse is the tool's result; for Bash {"stdout": ..., "stderr": ...}.
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Prompt is UserPromptSubmit's prompt text.
	Prompt string `json:"prompt,omitempty"`
	// Reason is SessionEnd's cause: clear, logout, prompt_input_exit, other.
	Reason string `json:"reason,omitempty"`
	// Trigger is PreCompact's cause: manual or auto.
	Trigger string `json:"trigger,omitempty"`
	// CustomInstructions is the text given to /compact; the client sends
	// null when there is none.
	CustomInstructions string `json:"custom_instructions,omitempty"`
	// Error is PostToolUseFailure's error text, such as "Exit code 1".
	Error string `json:"error,omitempty"`
	// IsInterrupt is true on a PostToolUseFailure the user interrupted.
	IsInterrupt bool `json:"is_interrupt,omitempty"`
}

// DecodeEvent reads one event from r. It fails on input that is not one JSON
// object, larger than MaxEventSize, or without hook_event_name. Every other
// field is read leniently: the client adds fields between versions, omits
// some per event (permission_mode) and sends null for others
// (custom_instructions), so a field of an unexpected type is left zero
// rather than losing the event.
func DecodeEvent(r io.Reader) (Event, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxEventSize+1))
	if err != nil {
		return Event{}, fmt.Errorf("reading the event: %w", err)
	}
	if len(data) > MaxEventSize {
		return Event{}, fmt.Errorf("event: larger than %d bytes", MaxEventSize)
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
	for name, dst := range ev.fields() {
		if raw, ok := fields[name]; ok {
			// A field of another type stays zero (see above).
			_ = json.Unmarshal(raw, dst)
		}
	}
	if ev.HookEventName == "" {
		return Event{}, errors.New("event: hook_event_name: required")
	}
	return ev, nil
}

// fields maps each JSON name of Event to the field it decodes into.
func (ev *Event) fields() map[string]any {
	return map[string]any{
		"session_id": &ev.SessionID, "transcript_path": &ev.TranscriptPath, "cwd": &ev.CWD,
		"hook_event_name": &ev.HookEventName, "source": &ev.Source, "stop_hook_active": &ev.StopHookActive,
		"tool_name": &ev.ToolName, "tool_input": &ev.ToolInput, "tool_response": &ev.ToolResponse,
		"prompt": &ev.Prompt, "reason": &ev.Reason, "trigger": &ev.Trigger,
		"custom_instructions": &ev.CustomInstructions, "error": &ev.Error, "is_interrupt": &ev.IsInterrupt,
	}
}

// Answer is what the hook process prints and how it exits.
type Answer struct {
	// Stdout is written to stdout; empty means no output.
	Stdout []byte
	// ExitCode is the process exit code. tether's answers are always 0.
	ExitCode int
}

// Write writes the answer's stdout to w.
func (a Answer) Write(w io.Writer) error {
	if len(a.Stdout) == 0 {
		return nil
	}
	_, err := w.Write(a.Stdout)
	return err
}

// NoOp is no output and exit 0: Claude Code carries on as if no hook ran. It
// is the answer to every event tether has nothing to say to, to
// TETHER_DISABLE=1, and to every internal error.
func NoOp() Answer { return Answer{} }

// AllowStop lets the agent stop: no output, exit 0.
func AllowStop() Answer { return Answer{} }

type hookSpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// AdditionalContext answers SessionStart or UserPromptSubmit with text added
// to the agent's context:
// {"hookSpecificOutput":{"hookEventName":EVENT,"additionalContext":TEXT}}.
// Empty text is a no-op.
func AdditionalContext(event, text string) Answer {
	if text == "" {
		return NoOp()
	}
	return jsonAnswer(struct {
		HookSpecificOutput hookSpecificOutput `json:"hookSpecificOutput"`
	}{hookSpecificOutput{HookEventName: event, AdditionalContext: text}})
}

// SessionStartContext is AdditionalContext for SessionStart.
func SessionStartContext(text string) Answer { return AdditionalContext(SessionStart, text) }

// BlockStop continues the session: {"decision":"block","reason":NEXT}, exit 0.
// Claude Code gives reason to the agent as its next instruction. An empty
// reason would not be delivered, so it lets the agent stop instead.
func BlockStop(next string) Answer {
	if next == "" {
		return AllowStop()
	}
	return jsonAnswer(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"block", next})
}

func jsonAnswer(v any) Answer {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return NoOp()
	}
	return Answer{Stdout: b.Bytes()}
}

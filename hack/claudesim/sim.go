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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// blockingEvents are the events whose hooks can block (decision "block" or
// exit 2 with stderr fed back to the model).
var blockingEvents = map[string]bool{
	"PreToolUse": true, "PostToolUse": true, "UserPromptSubmit": true, "Stop": true, "SubagentStop": true,
}

// contextEvents are the events whose hookSpecificOutput.additionalContext
// reaches the model.
var contextEvents = map[string]bool{"SessionStart": true, "UserPromptSubmit": true, "PostToolUse": true}

// plainContextEvents are the events whose plain (non-JSON) stdout on exit 0
// is added to the model's context.
var plainContextEvents = map[string]bool{"SessionStart": true, "UserPromptSubmit": true}

// Entry is one line of the JSONL transcript.
type Entry struct {
	Seq      int             `json:"seq"`
	Time     string          `json:"time"`
	Kind     string          `json:"kind"`
	Event    string          `json:"event,omitempty"`
	Action   string          `json:"action,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Command  string          `json:"command,omitempty"`
	ExitCode *int            `json:"exit_code,omitempty"`
	Stdout   string          `json:"stdout,omitempty"`
	Stderr   string          `json:"stderr,omitempty"`
	TimedOut bool            `json:"timed_out,omitempty"`
	Blocked  bool            `json:"blocked,omitempty"`
	Stopped  bool            `json:"stopped,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Context  []string        `json:"context,omitempty"`
	Messages []string        `json:"messages,omitempty"`
	Origin   string          `json:"origin,omitempty"`
	Text     string          `json:"text,omitempty"`
	// Env is, on the session entry, the agent's TETHER_* environment.
	Env map[string]string `json:"env,omitempty"`
}

// Outcome is how Claude Code reads the answers of all hooks of one event.
type Outcome struct {
	// Blocked: the event's action is blocked (Stop: the agent continues).
	Blocked bool
	// Reason is the block's reason (fed to the model).
	Reason string
	// Stopped: a hook answered "continue": false.
	Stopped bool
	// Context is text added to the model's context.
	Context []string
	// Messages are shown to the user only (errors, stderr of non-blocking
	// events, systemMessage).
	Messages []string
}

// hookOutput is the JSON a hook may print on exit 0.
type hookOutput struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	SystemMessage      string `json:"systemMessage"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput *struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Sim is the simulated Claude Code session.
type Sim struct {
	Project    string
	SessionID  string
	Transcript string
	Sources    []source

	mu          sync.Mutex
	out         *os.File
	seq         int
	stopActive  bool
	consecutive int
	lastReason  string
}

// log appends e to the transcript.
func (s *Sim) log(e Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	e.Seq = s.seq
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	if _, err := s.out.Write(append(line, '\n')); err != nil {
		fmt.Fprintln(os.Stderr, "claudesim: transcript:", err)
	}
}

// Fire sends event with its own fields to every matching hook and reads
// their answers.
func (s *Sim) Fire(ctx context.Context, event string, fields map[string]any) Outcome {
	input := map[string]any{
		"session_id":      s.SessionID,
		"transcript_path": s.Transcript,
		"cwd":             s.Project,
		"hook_event_name": event,
	}
	// As the real client: SessionStart, PreCompact and SessionEnd carry no
	// permission_mode.
	switch event {
	case "SessionStart", "PreCompact", "SessionEnd":
	default:
		input["permission_mode"] = "default"
	}
	for k, v := range fields {
		input[k] = v
	}
	raw, _ := json.Marshal(input)
	s.log(Entry{Kind: "event", Event: event, Input: raw})
	hooks, warnings := hooksFor(s.Sources, event, input)
	out := Outcome{Messages: warnings}
	for _, h := range hooks {
		s.runHook(ctx, event, h, raw, &out)
	}
	s.log(Entry{Kind: "outcome", Event: event, Blocked: out.Blocked, Stopped: out.Stopped, Reason: out.Reason, Context: out.Context, Messages: out.Messages})
	return out
}

func (s *Sim) runHook(ctx context.Context, event string, h matchedHook, input []byte, out *Outcome) {
	res := s.exec(ctx, h.command, input, h.timeout, nil)
	code := res.code
	s.log(Entry{Kind: "hook", Event: event, Command: h.command, ExitCode: &code, Stdout: res.stdout, Stderr: res.stderr, TimedOut: res.timedOut})
	switch {
	case res.timedOut:
		out.Messages = append(out.Messages, fmt.Sprintf("%s hook timed out after %s: %s", event, h.timeout, h.command))
	case res.code == 0:
		s.readStdout(event, res.stdout, out)
	case res.code == 2:
		// Exit 2: stdout (JSON or not) is ignored; stderr is the message.
		if blockingEvents[event] {
			out.Blocked = true
			out.Reason = joinReason(out.Reason, strings.TrimSpace(res.stderr))
		} else {
			out.Messages = append(out.Messages, fmt.Sprintf("%s hook error: %s", event, strings.TrimSpace(res.stderr)))
		}
	default:
		out.Messages = append(out.Messages, fmt.Sprintf("%s hook failed with exit code %d: %s", event, res.code, strings.TrimSpace(res.stderr)))
	}
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// readStdout reads an exit-0 answer: JSON when it parses as a JSON object,
// else plain text.
func (s *Sim) readStdout(event, stdout string, out *Outcome) {
	trimmed := strings.TrimSpace(stdout)
	if trimmed == "" {
		return
	}
	var o hookOutput
	if strings.HasPrefix(trimmed, "{") && json.Unmarshal([]byte(trimmed), &o) == nil {
		if o.Continue != nil && !*o.Continue {
			out.Stopped = true
			out.Messages = append(out.Messages, "stopped by hook: "+o.StopReason)
		}
		if o.SystemMessage != "" {
			out.Messages = append(out.Messages, o.SystemMessage)
		}
		if o.Decision == "block" && blockingEvents[event] {
			if o.Reason == "" {
				out.Messages = append(out.Messages, event+` hook: "decision": "block" without a reason is not honoured`)
			} else {
				out.Blocked = true
				out.Reason = joinReason(out.Reason, o.Reason)
			}
		}
		if hso := o.HookSpecificOutput; hso != nil {
			switch {
			case hso.HookEventName != event:
				out.Messages = append(out.Messages, fmt.Sprintf("%s hook: hookSpecificOutput.hookEventName %q does not match the event", event, hso.HookEventName))
			case hso.AdditionalContext != "" && contextEvents[event]:
				out.Context = append(out.Context, hso.AdditionalContext)
			}
		}
		return
	}
	if plainContextEvents[event] {
		out.Context = append(out.Context, trimmed)
	}
}

type execResult struct {
	code           int
	stdout, stderr string
	timedOut       bool
}

// exec runs command through bash (sh when bash is missing) in the project
// directory with stdin, CLAUDE_PROJECT_DIR set, and a timeout that kills its
// whole process group.
func (s *Sim) exec(ctx context.Context, command string, stdin []byte, timeout time.Duration, env []string) execResult {
	shell := "bash"
	if _, err := exec.LookPath(shell); err != nil {
		shell = "sh"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-c", command)
	cmd.Dir = s.Project
	cmd.Env = append(append(os.Environ(), "CLAUDE_PROJECT_DIR="+s.Project), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	res := execResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.timedOut, res.code = true, -1
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		res.code, res.stderr = 127, err.Error()
	}
	return res
}

// Script is the scripted agent.
type Script struct {
	// SessionID overrides the generated session id.
	SessionID string `json:"session_id,omitempty"`
	// Source is the SessionStart source; default startup.
	Source string `json:"source,omitempty"`
	// Actions run in order.
	Actions []Action `json:"actions"`
}

// Action is one step of the scripted agent; exactly one field is set.
type Action struct {
	// Run runs a shell command as the Bash tool, then fires PostToolUse (exit
	// 0) or PostToolUseFailure (other exit codes).
	Run string `json:"run,omitempty"`
	// Write writes a file as the Write tool, then fires PostToolUse.
	Write *WriteAction `json:"write,omitempty"`
	// Prompt submits a user prompt (UserPromptSubmit); it starts a new turn.
	Prompt string `json:"prompt,omitempty"`
	// Stop ends the agent's turn (Stop).
	Stop *StopAction `json:"stop,omitempty"`
	// Compact compacts the context: PreCompact, then SessionStart with
	// source compact.
	Compact *CompactAction `json:"compact,omitempty"`
	// Sleep waits, as a Go duration ("500ms").
	Sleep string `json:"sleep,omitempty"`
	// End ends the session: SessionEnd with a reason, then exit 0.
	End *EndAction `json:"end,omitempty"`
	// Exit exits at once with a code, without SessionEnd: a crash.
	Exit *ExitAction `json:"exit,omitempty"`
}

// WriteAction writes Content to Path, relative to the project.
type WriteAction struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// StopAction fires Stop; while a hook blocks it, the reason becomes the next
// prompt. Max (default 1) is how many Stops to fire in a row while blocked,
// for an agent that makes no progress between them.
type StopAction struct {
	Max int `json:"max,omitempty"`
}

// CompactAction compacts with a trigger (manual, default, or auto).
type CompactAction struct {
	Trigger      string `json:"trigger,omitempty"`
	Instructions string `json:"instructions,omitempty"`
}

// EndAction is SessionEnd's reason (default other).
type EndAction struct {
	Reason string `json:"reason,omitempty"`
}

// ExitAction is the exit code of a simulated crash.
type ExitAction struct {
	Code int `json:"code"`
}

func (a Action) name() (string, error) {
	var set []string
	for n, ok := range map[string]bool{
		"run": a.Run != "", "write": a.Write != nil, "prompt": a.Prompt != "", "stop": a.Stop != nil,
		"compact": a.Compact != nil, "sleep": a.Sleep != "", "end": a.End != nil, "exit": a.Exit != nil,
	} {
		if ok {
			set = append(set, n)
		}
	}
	if len(set) != 1 {
		return "", fmt.Errorf("want exactly one of run, write, prompt, stop, compact, sleep, end, exit; got %v", set)
	}
	return set[0], nil
}

// Validate checks every action before any runs.
func (sc *Script) Validate() error {
	for i, a := range sc.Actions {
		n, err := a.name()
		if err != nil {
			return fmt.Errorf("actions[%d]: %w", i, err)
		}
		if n == "sleep" {
			if _, err := time.ParseDuration(a.Sleep); err != nil {
				return fmt.Errorf("actions[%d].sleep: %w", i, err)
			}
		}
		if n == "write" && a.Write.Path == "" {
			return fmt.Errorf("actions[%d].write.path: required", i)
		}
	}
	return nil
}

// Run plays the script and returns the process exit code.
func (s *Sim) Run(ctx context.Context, sc *Script, source string) int {
	if source == "" {
		source = "startup"
	}
	s.log(Entry{Kind: "session", Text: source, Reason: s.SessionID, Env: tetherEnv()})
	s.newTurn()
	s.addContext("SessionStart", s.Fire(ctx, "SessionStart", map[string]any{"source": source}))
	for i, a := range sc.Actions {
		n, _ := a.name()
		s.log(Entry{Kind: "action", Action: n, Text: fmt.Sprint(i)})
		switch n {
		case "run":
			s.runTool(ctx, a.Run)
		case "write":
			p := a.Write.Path
			if !filepath.IsAbs(p) {
				p = filepath.Join(s.Project, p)
			}
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			err := os.WriteFile(p, []byte(a.Write.Content), 0o644)
			resp := map[string]any{"filePath": p, "success": err == nil}
			s.addContext("PostToolUse", s.Fire(ctx, "PostToolUse", map[string]any{
				"tool_name": "Write", "tool_input": map[string]any{"file_path": p, "content": a.Write.Content}, "tool_response": resp,
			}))
		case "prompt":
			s.newTurn()
			s.prompt(ctx, a.Prompt)
		case "stop":
			s.stop(ctx, max(1, a.Stop.Max))
		case "compact":
			trigger := a.Compact.Trigger
			if trigger == "" {
				trigger = "manual"
			}
			// The real client sends null when /compact was given no text.
			var instructions any
			if a.Compact.Instructions != "" {
				instructions = a.Compact.Instructions
			}
			s.Fire(ctx, "PreCompact", map[string]any{"trigger": trigger, "custom_instructions": instructions})
			s.log(Entry{Kind: "compacted", Text: "the model's context was summarised"})
			s.addContext("SessionStart", s.Fire(ctx, "SessionStart", map[string]any{"source": "compact"}))
		case "sleep":
			d, _ := time.ParseDuration(a.Sleep)
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				// SIGINT or SIGTERM while idle: the session ends at once, as
				// Claude Code's does when its terminal goes away.
				t.Stop()
				s.log(Entry{Kind: "exit", Text: fmt.Sprint(InterruptedExit), Reason: "signal"})
				return InterruptedExit
			}
		case "end":
			reason := a.End.Reason
			if reason == "" {
				reason = "other"
			}
			s.Fire(ctx, "SessionEnd", map[string]any{"reason": reason})
			s.log(Entry{Kind: "exit", Text: "0"})
			return 0
		case "exit":
			s.log(Entry{Kind: "exit", Text: fmt.Sprint(a.Exit.Code)})
			return a.Exit.Code
		}
	}
	s.Fire(ctx, "SessionEnd", map[string]any{"reason": "other"})
	s.log(Entry{Kind: "exit", Text: "0"})
	return 0
}

// InterruptedExit is claudesim's exit code when a signal ends a sleep.
const InterruptedExit = 130

// tetherEnv is the TETHER_* part of the environment, which a Worker sets for
// the agent it launches.
func tetherEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "TETHER_") {
			env[k] = v
		}
	}
	return env
}

// newTurn starts a turn: a person spoke, so the Stop-hook chain is over.
func (s *Sim) newTurn() {
	s.stopActive, s.consecutive = false, 0
}

func (s *Sim) addContext(event string, o Outcome) {
	for _, c := range o.Context {
		s.log(Entry{Kind: "context", Event: event, Text: c})
	}
}

func (s *Sim) prompt(ctx context.Context, text string) {
	o := s.Fire(ctx, "UserPromptSubmit", map[string]any{"prompt": text})
	if o.Blocked {
		s.log(Entry{Kind: "prompt_blocked", Text: text, Reason: o.Reason})
		return
	}
	s.addContext("UserPromptSubmit", o)
	s.log(Entry{Kind: "prompt", Origin: "user", Text: text})
}

func (s *Sim) runTool(ctx context.Context, command string) {
	env := []string{"CLAUDESIM_LAST_CONTINUATION=" + s.lastReason, "CLAUDESIM_SESSION_ID=" + s.SessionID}
	res := s.exec(ctx, command, nil, 10*time.Minute, env)
	code := res.code
	s.log(Entry{Kind: "tool", Action: "Bash", Command: command, ExitCode: &code, Stdout: res.stdout, Stderr: res.stderr})
	input := map[string]any{"command": command}
	if res.code == 0 {
		s.addContext("PostToolUse", s.Fire(ctx, "PostToolUse", map[string]any{
			"tool_name": "Bash", "tool_input": input,
			"tool_response": map[string]any{"stdout": res.stdout, "stderr": res.stderr, "interrupted": false, "isImage": false},
		}))
		return
	}
	s.Fire(ctx, "PostToolUseFailure", map[string]any{
		"tool_name": "Bash", "tool_input": input, "error": fmt.Sprintf("Exit code %d\n%s%s", res.code, res.stdout, res.stderr),
	})
}

// stop fires Stop up to max times while hooks block it. The real client
// (2.1.x) has no cap of its own on consecutive blocks: it delivered 30 in
// one turn, so only the hooks' answers (and max, the script's bound) end it.
func (s *Sim) stop(ctx context.Context, max int) {
	for i := 0; i < max; i++ {
		o := s.Fire(ctx, "Stop", map[string]any{"stop_hook_active": s.stopActive})
		if o.Stopped || !o.Blocked {
			s.log(Entry{Kind: "turn_end", Text: "the agent stopped"})
			s.newTurn()
			return
		}
		s.consecutive++
		s.stopActive = true
		s.lastReason = o.Reason
		s.log(Entry{Kind: "prompt", Origin: "stop_hook", Text: o.Reason})
	}
}

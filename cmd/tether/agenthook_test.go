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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/atomicfs"
)

// hookEvent pipes one event into `tether agent hook` as Claude Code does,
// from the workspace, with extra environment variables.
func (e *agentEnv) hookEvent(event map[string]any, env ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	if _, ok := event["cwd"]; !ok {
		event["cwd"] = e.workspace
	}
	if _, ok := event["session_id"]; !ok {
		event["session_id"] = "s1"
	}
	data, err := json.Marshal(event)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := e.command("agent", "hook")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(string(data))
	return runCommand(e.t, cmd)
}

// okHook is hookEvent that fails the test unless it exits 0.
func (e *agentEnv) okHook(event map[string]any, env ...string) (stdout, stderr string) {
	e.t.Helper()
	out, errOut, code := e.hookEvent(event, env...)
	if code != 0 {
		e.t.Fatalf("agent hook %v: exit %d\nstdout: %s\nstderr: %s", event["hook_event_name"], code, out, errOut)
	}
	return out, errOut
}

func sessionContext(t *testing.T, stdout string) string {
	t.Helper()
	var a struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &a); err != nil || a.HookSpecificOutput.HookEventName != "SessionStart" {
		t.Fatalf("not a SessionStart answer (%v): %q", err, stdout)
	}
	return a.HookSpecificOutput.AdditionalContext
}

func TestAgentHookEvents(t *testing.T) {
	e := newAgentEnv(t)
	// staleAfter 400ms: a tool call writes its heartbeat when the last is
	// older than 100ms.
	e.createHook("task", 3, 400*time.Millisecond, step("build", 0, "true"), step("test", 0, "true"))

	out, _ := e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup", "transcript_path": "transcripts/s1.jsonl"})
	if ctx := sessionContext(t, out); !strings.Contains(ctx, "# Recovery file: hook task") || !strings.Contains(ctx, "tether step begin task") {
		t.Fatalf("SessionStart context:\n%s", ctx)
	}
	e.ok("step", "begin", "task", "--working-on", "the build")

	before := e.hook("task").Status.LastHeartbeat
	time.Sleep(150 * time.Millisecond)
	if out, _ := e.okHook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "go"}); out != "" {
		t.Errorf("UserPromptSubmit answered %q", out)
	}
	if out, _ := e.okHook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": "x"}}); out != "" {
		t.Errorf("PostToolUse answered %q", out)
	}
	h := e.hook("task")
	if !h.Status.LastHeartbeat.After(before.Time) || h.Status.AgentSession == nil || h.Status.AgentSession.LastSeen == nil {
		t.Errorf("no heartbeat: %v -> %v, session %+v", before, h.Status.LastHeartbeat, h.Status.AgentSession)
	}

	e.write("feature.go", "package main\n")
	e.okHook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "git add . && git -c user.name=t -c user.email=t@example.invalid commit -m feature"}})
	if cps := e.checkpointsBy("task", v1.TriggerGitCommit); len(cps) != 1 {
		t.Errorf("git_commit checkpoints: %d, want 1", len(cps))
	}

	if out, _ := e.okHook(map[string]any{"hook_event_name": "PreCompact", "trigger": "auto"}); out != "" {
		t.Errorf("PreCompact answered %q", out)
	}
	if cps := e.checkpointsBy("task", v1.TriggerPreCompact); len(cps) != 1 {
		t.Errorf("pre_compact checkpoints: %d, want 1", len(cps))
	}
	events := e.ok("events", "--for", "hook/task")
	for _, trigger := range []v1.CheckpointTrigger{v1.TriggerGitCommit, v1.TriggerPreCompact} {
		if !regexp.MustCompile(`CheckpointTaken .* ` + string(trigger) + ` checkpoint \S+ by tether agent hook`).MatchString(events) {
			t.Errorf("no CheckpointTaken Event of the %s checkpoint by tether agent hook:\n%s", trigger, events)
		}
	}
	out, _ = e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "compact"})
	ctx := sessionContext(t, out)
	first, rest, _ := strings.Cut(ctx, "\n\n")
	if !strings.Contains(first, "supersedes every earlier tether context") || !strings.HasPrefix(rest, "# Your context was just compacted") || !strings.Contains(ctx, `Current step: "build" (1/2), attempt 1 of 3`) || !strings.Contains(ctx, "(pre_compact") {
		t.Errorf("compact context:\n%s", ctx)
	}

	out, _ = e.okHook(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})
	var block struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(out), &block); err != nil || block.Decision != "block" || !strings.Contains(block.Reason, "tether step done task") {
		t.Errorf("Stop: %q (%v), want a block naming tether step done task", out, err)
	}

	if out, _ := e.okHook(map[string]any{"hook_event_name": "SessionEnd", "reason": "logout"}); out != "" {
		t.Errorf("SessionEnd answered %q", out)
	}
	s := e.hook("task").Status.AgentSession
	if s.EndedAt == nil || s.EndReason != "logout" || s.EndedInStep != "build" || s.Compactions != 1 || s.TranscriptPath != "transcripts/s1.jsonl" {
		t.Errorf("session after SessionEnd: %+v", s)
	}
	rec := e.ok("recover", "task")
	if !strings.Contains(rec, `The last session ended during step "build"`) {
		t.Errorf("recover does not flag the session that ended mid-step:\n%s", rec)
	}
	desc := e.ok("describe", "hook", "task")
	if !strings.Contains(desc, "Agent Session:") || !strings.Contains(desc, "Session ID:") || !strings.Contains(desc, "during step build") {
		t.Errorf("describe hook:\n%s", desc)
	}

	// A new session after the end is a resumption.
	e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup", "session_id": "s2"})
	if s := e.hook("task").Status.AgentSession; s.SessionID != "s2" || s.ResumedFrom != "s1" {
		t.Errorf("new session: %+v", s)
	}
}

func TestAgentHookBinding(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("alpha", 3, 0, step("build", 0, "true"))
	e.createHook("beta", 3, 0, step("build", 0, "true"))

	// Two Hooks claim the workspace: the agent is told, never guessed for.
	out, stderr := e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	ctx := sessionContext(t, out)
	for _, want := range []string{"alpha, beta", "tether agent bind HOOK"} {
		if !strings.Contains(ctx, want) || !strings.Contains(stderr, want) {
			t.Errorf("ambiguity message lacks %q:\ncontext: %s\nstderr: %s", want, ctx, stderr)
		}
	}
	if out, _ := e.okHook(map[string]any{"hook_event_name": "Stop"}); out != "" {
		t.Errorf("Stop with an ambiguous Hook answered %q", out)
	}

	out = e.ok("agent", "bind", "beta")
	if !strings.Contains(out, "hook default/beta") || !strings.Contains(out, filepath.Join(".git", "tether", "binding")) {
		t.Errorf("bind: %q", out)
	}
	if st := e.gitOut("status", "--porcelain"); st != "" {
		t.Errorf("the binding shows in git status: %q", st)
	}
	out, _ = e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	if ctx := sessionContext(t, out); !strings.Contains(ctx, "# Recovery file: hook beta") {
		t.Errorf("bound SessionStart:\n%s", ctx)
	}
	// TETHER_HOOK wins over the binding.
	out, _ = e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"}, "TETHER_HOOK=alpha")
	if ctx := sessionContext(t, out); !strings.Contains(ctx, "# Recovery file: hook alpha") {
		t.Errorf("TETHER_HOOK SessionStart:\n%s", ctx)
	}
	if _, stderr, code := e.tether("agent", "bind", "nope"); code != 2 || !strings.Contains(stderr, "nope") {
		t.Errorf("bind to a missing Hook: exit %d, %s", code, stderr)
	}

	if out := e.ok("agent", "unbind"); !strings.HasPrefix(out, "unbound") {
		t.Errorf("unbind: %q", out)
	}
	if out := e.ok("agent", "unbind"); !strings.HasPrefix(out, "not bound") {
		t.Errorf("second unbind: %q", out)
	}

	// A garbage binding file is a warning, never a crash.
	bindingPath := filepath.Join(e.workspace, ".git", "tether", "binding")
	if err := atomicfs.WriteFile(bindingPath, []byte("\x00garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr = e.okHook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read"})
	if !strings.Contains(stderr, bindingPath) {
		t.Errorf("garbage binding: stderr %q lacks the file", stderr)
	}

	// No Hook at all: a one-line note.
	other := t.TempDir()
	out, stderr = e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup", "cwd": other})
	if out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "no Hook") {
		t.Errorf("no Hook: stdout %q, stderr %q", out, stderr)
	}
}

func TestAgentHookNeverBreaksTheAgent(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("task", 3, 0, step("build", 0, "true"))

	// Disabled: no output, and the store is not even opened.
	missing := filepath.Join(t.TempDir(), "no-store")
	cmd := e.command("agent", "hook")
	cmd.Env = append(cmd.Env, "TETHER_DISABLE=1", "TETHER_STORE="+missing)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop","session_id":"s","cwd":"` + e.workspace + `"}`)
	if out, stderr, code := runCommand(t, cmd); out != "" || stderr != "" || code != 0 {
		t.Errorf("disabled: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("disabled hook created the store: %v", err)
	}

	// Not JSON.
	cmd = e.command("agent", "hook")
	cmd.Stdin = strings.NewReader("not json")
	if out, stderr, code := runCommand(t, cmd); out != "" || code != 0 || !strings.Contains(stderr, "warning") {
		t.Errorf("bad input: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	// A store that is not a directory.
	notStore := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notStore, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = e.command("agent", "hook")
	cmd.Env = append(cmd.Env, "TETHER_STORE="+notStore)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"PostToolUse","session_id":"s","cwd":"` + e.workspace + `"}`)
	if out, stderr, code := runCommand(t, cmd); out != "" || code != 0 || !strings.Contains(stderr, "warning") {
		t.Errorf("a store that is a file: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	// No store: a note, and no store is created.
	cmd = e.command("agent", "hook")
	cmd.Env = append(cmd.Env, "TETHER_STORE="+missing)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"s","cwd":"` + e.workspace + `"}`)
	if out, stderr, code := runCommand(t, cmd); out != "" || code != 0 || !strings.Contains(stderr, "no store") {
		t.Errorf("no store: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("agent hook created the store: %v", err)
	}

	// A corrupt Hook file: the store keeps the last valid version, and the
	// hook answers from it.
	path := filepath.Join(e.store, "hooks", "default", "task.yaml")
	if err := os.WriteFile(path, []byte("{{{ not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"SessionStart", "PostToolUse", "Stop", "PreCompact", "SessionEnd"} {
		_, stderr, code := e.hookEvent(map[string]any{"hook_event_name": ev, "source": "startup"}, "TETHER_HOOK=task")
		if code != 0 || strings.Contains(stderr, "panic") {
			t.Errorf("%s on a corrupt Hook file: exit %d, stderr %q", ev, code, stderr)
		}
	}
	// A corrupt file that never was a valid Hook: not found, a note.
	if err := os.WriteFile(filepath.Join(e.store, "hooks", "default", "broken.yaml"), []byte("{{{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := e.hookEvent(map[string]any{"hook_event_name": "Stop"}, "TETHER_HOOK=broken"); code != 0 || out != "" || !strings.Contains(stderr, `"broken"`) {
		t.Errorf("a never-valid Hook file: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	// The store's lock held by someone else: an answer within the deadline.
	lock, err := os.OpenFile(filepath.Join(e.store, ".lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Close() }()
	if err := atomicfs.Lock(lock, atomicfs.Exclusive); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, stderr, code := e.hookEvent(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read"}, "TETHER_HOOK=task")
	if took := time.Since(start); code != 0 || out != "" || took > 4*time.Second || !strings.Contains(stderr, "warning") {
		t.Errorf("lock held: exit %d in %s, stdout %q, stderr %q", code, took, out, stderr)
	}
	_ = atomicfs.Unlock(lock)
}

func TestAgentHookStopCaps(t *testing.T) {
	e := newAgentEnv(t)
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte("agentLoop:\n  maxConsecutive: 2\n  maxPerHook: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.createHook("task", 3, 0, step("build", 0, "true"), step("test", 0, "true"))
	stop := func(active bool) (bool, v1.AgentSession, string) {
		out, _, code := e.hookEvent(map[string]any{"hook_event_name": "Stop", "stop_hook_active": active})
		if code != 0 {
			t.Fatalf("Stop: exit %d", code)
		}
		h := e.hook("task")
		reason := ""
		if c := meta.FindStatusCondition(h.Status.Conditions, v1.ConditionAgentLoop); c != nil {
			reason = c.Reason
		}
		return strings.Contains(out, `"decision":"block"`), *h.Status.AgentSession, reason
	}
	// Each continuation is followed by progress, so only the caps end it.
	if b, _, _ := stop(false); !b {
		t.Fatal("first Stop did not continue")
	}
	e.ok("step", "begin", "task")
	if b, _, _ := stop(true); !b {
		t.Fatal("second Stop did not continue")
	}
	e.ok("await", "task", "--reason", "x")
	e.ok("resume", "task")
	if b, s, reason := stop(true); b || reason != "SessionContinuationCap" || s.Continuations != 0 {
		t.Fatalf("third Stop in a row: block %v, reason %s, session %+v; want the session cap of 2", b, reason, s)
	}
	// A person spoke: one more continuation, then the Hook's cap of 3.
	if b, s, _ := stop(false); !b || s.HookContinuations != 3 {
		t.Fatalf("after a prompt: block %v, session %+v", b, s)
	}
	e.ok("await", "task", "--reason", "x")
	e.ok("resume", "task")
	if b, _, reason := stop(false); b || reason != "HookContinuationCap" {
		t.Fatalf("fourth continuation: block %v, reason %s; want the Hook cap of 3", b, reason)
	}
	events := e.ok("events", "--for", "hook/task")
	for _, want := range []string{"SessionContinuationCap", "HookContinuationCap"} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %s:\n%s", want, events)
		}
	}
}

func TestAgentHookNoProgressEndsTheLoop(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("task", 3, 0, step("build", 0, "true"))
	out, _ := e.okHook(map[string]any{"hook_event_name": "Stop"})
	if !strings.Contains(out, `"decision":"block"`) {
		t.Fatalf("first Stop: %q", out)
	}
	out, _ = e.okHook(map[string]any{"hook_event_name": "Stop", "stop_hook_active": true})
	if out != "" {
		t.Fatalf("a repeated continuation with no progress: %q", out)
	}
	if c := meta.FindStatusCondition(e.hook("task").Status.Conditions, v1.ConditionAgentLoop); c == nil || c.Reason != "NoProgress" {
		t.Errorf("condition %+v, want AgentLoop NoProgress", c)
	}
}

// A pre_compact capture slower than the hook's deadline is finished by a
// detached process instead of being lost; the hook answers in time, blames
// no lock, and leaves no temporary index behind (issue 25, item 4).
func TestAgentHookPreCompactFinishesInBackground(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("task", 3, 0, step("build", 0, "true"))
	e.ok("step", "begin", "task")
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	marker := filepath.Join(bin, "slow-once")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The first git run sleeps past the deadline, its descriptors closed so
	// that killing it is immediate.
	script := "#!/bin/sh\nif [ -e " + marker + " ]; then rm -f " + marker + "; sleep 4 </dev/null >/dev/null 2>&1; fi\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, stderr := e.okHook(map[string]any{"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": nil},
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	took := time.Since(start)
	if out != "" || took > 3500*time.Millisecond {
		t.Errorf("PreCompact answered %q in %s, want nothing within the deadline and a second of cleanup", out, took)
	}
	if !strings.Contains(stderr, "finishing it in the background") || strings.Contains(stderr, "lock") {
		t.Errorf("stderr %q: want the background finish named, and no lock blamed", stderr)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(e.checkpointsBy("task", v1.TriggerPreCompact)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the background process took no pre_compact checkpoint")
		}
		time.Sleep(50 * time.Millisecond)
	}
	indexDir := filepath.Join(e.workspace, ".git", "tether", "index", "default")
	for {
		tmps, _ := filepath.Glob(filepath.Join(indexDir, "*.tmp*"))
		if len(tmps) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("temporary indexes left behind: %v", tmps)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(e.checkpointsBy("task", v1.TriggerPreCompact)); n != 1 {
		t.Errorf("%d pre_compact checkpoints, want 1", n)
	}
}

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
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/fakemodel"
)

// The acceptance scenario of issue 25, judged by the real Claude Code CLI
// (pinned in hack/agents/install.sh) against a scripted fake Anthropic
// Messages API (internal/testing/fakemodel): every assertion on what the
// agent was told reads the requests the client actually sent to the model.

var (
	claudeOnce sync.Once
	claudePath string
	claudeErr  error
)

// claudeBin installs the pinned client with the project's script, once.
func claudeBin(t *testing.T) string {
	t.Helper()
	claudeOnce.Do(func() {
		cmd := exec.Command("../../hack/agents/install.sh")
		if v := os.Getenv("TETHER_CLAUDE_CODE_VERSION"); v != "" {
			cmd.Args = append(cmd.Args, v)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			claudeErr = fmt.Errorf("hack/agents/install.sh: %w\n%s", err, stderr.String())
			return
		}
		claudePath = strings.TrimSpace(string(out))
	})
	if claudeErr != nil {
		t.Fatal(claudeErr)
	}
	return claudePath
}

// rcEnv is arEnv with the real client: its home, the fake model, and a
// wrapper named tether that records each hook input and its duration.
type rcEnv struct {
	*arEnv
	claude  string
	home    string
	model   *fakemodel.Server
	capture string
	wrapper string
}

const captureWrapper = `#!/bin/sh
if [ "$1 $2" = "agent hook" ]; then
  f="$TETHER_TEST_CAPTURE/$(date +%s%N)-$$"
  cat > "$f.json"
  start=$(date +%s%N)
  "$TETHER_TEST_REAL" "$@" < "$f.json" > "$f.out"
  rc=$?
  end=$(date +%s%N)
  echo "$((end - start))" > "$f.ns"
  cat "$f.out"
  exit $rc
fi
if [ "$1" = "version" ] && [ -n "$TETHER_TEST_TIME_VERSION" ]; then
  start=$(date +%s%N)
  "$TETHER_TEST_REAL" "$@" > /dev/null
  end=$(date +%s%N)
  echo "$((end - start))" > "$TETHER_TEST_CAPTURE/$start-$$.version-ns"
  exit 0
fi
exec "$TETHER_TEST_REAL" "$@"
`

func newRCEnv(t *testing.T) *rcEnv {
	t.Helper()
	claude := claudeBin(t)
	model := fakemodel.New()
	t.Cleanup(model.Close)
	e := newClientEnv(t, []string{"ANTHROPIC_", "CLAUDE"},
		// The client talks to the fake model and to nothing else.
		"ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-ant-test-dummy",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1", "DISABLE_COST_WARNINGS=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1", "CLAUDE_CODE_ENABLE_TELEMETRY=0", "BASH_DEFAULT_TIMEOUT_MS=300000",
	)
	e.claude, e.model = claude, model
	return e
}

// newClientEnv is what every real client's test starts from: a workspace
// holding a git repository with one commit, the wrapper (named tether,
// first on PATH) recording each hook input, HOME and TETHER_HOME in the
// test's directory, TMPDIR too (the clients leave their own temporary
// directories behind: Gemini CLI one per shell command), git's identity, and
// this process's environment without PATH, HOME, TMPDIR and the variables whose names start with TETHER_,
// GIT_ or one of skip (the agent's own). env comes last.
func newClientEnv(t *testing.T, skip []string, env ...string) *rcEnv {
	t.Helper()
	root := t.TempDir()
	e := &rcEnv{home: filepath.Join(root, "home"), capture: filepath.Join(root, "capture")}
	e.arEnv = &arEnv{t: t, ws: filepath.Join(root, "ws"), out: filepath.Join(root, "out"), counts: filepath.Join(root, "counts")}
	wrap, tmp := filepath.Join(root, "wrap"), filepath.Join(root, "tmp")
	for _, d := range []string{e.ws, e.out, e.counts, e.home, e.capture, wrap, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.wrapper = filepath.Join(wrap, "tether")
	if err := os.WriteFile(e.wrapper, []byte(captureWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	skip = append(skip, "TETHER_", "GIT_")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "HOME" || k == "TMPDIR" || slices.ContainsFunc(skip, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		e.env = append(e.env, kv)
	}
	e.env = append(e.env,
		"PATH="+wrap+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+e.home, "TMPDIR="+tmp,
		"TETHER_HOME="+filepath.Join(root, "tether-home"),
		"TETHER_TEST_REAL="+tetherBin, "TETHER_TEST_CAPTURE="+e.capture, "TETHER_TEST_TIME_VERSION=1",
		"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.invalid",
		"GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.invalid",
	)
	e.env = append(e.env, env...)
	e.git("init", "-q")
	e.write("README.md", "workspace\n")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "init")
	t.Cleanup(e.stop)
	return e
}

// initClaude runs tether init --agent claude and points the hooks it
// installed at the wrapper, which records each input the client sends (the
// installer writes the binary's resolved path, the wrapper's target). It
// returns the settings file as init wrote it.
func (e *rcEnv) initClaude() []byte {
	e.t.Helper()
	e.tetherWrapped("init", "--agent", "claude")
	settings := filepath.Join(e.ws, ".claude", "settings.json")
	data, err := os.ReadFile(settings)
	if err != nil {
		e.t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(tetherBin+" agent hook")) {
		e.t.Fatalf("tether init --agent claude wrote no hook command for %s:\n%s", tetherBin, data)
	}
	e.write(settings, strings.ReplaceAll(string(data), tetherBin+" agent hook", e.wrapper+" agent hook"))
	return data
}

// tetherWrapped runs the wrapper, so that the settings tether writes name it.
func (e *rcEnv) tetherWrapped(args ...string) string {
	e.t.Helper()
	out, stderr, code := runCommand(e.t, e.command(e.wrapper, args))
	if code != 0 {
		e.t.Fatalf("tether %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

// claudeCmd is the client, non-interactive, in its own process group.
func (e *rcEnv) claudeCmd(args ...string) *exec.Cmd {
	cmd := e.command(e.claude, append(args, "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func (e *rcEnv) claudeRun(args ...string) {
	e.t.Helper()
	runClient(e.t, e.claudeCmd(args...))
}

// runClient runs a client's command to its end, at most 3 minutes; a
// failure fails the test with its output.
func runClient(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %v: %v\n%s\n%s", filepath.Base(cmd.Path), cmd.Args[1:], err, stderr.String(), out.String())
		}
	case <-time.After(3 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("%s %v did not finish\n%s", filepath.Base(cmd.Path), cmd.Args[1:], out.String())
	}
}

// captured are the hook inputs the client sent, in order.
type capturedEvent struct {
	raw map[string]any
	in  []byte
	out []byte
	dur time.Duration
}

func (e *rcEnv) captured() []capturedEvent {
	e.t.Helper()
	names, _ := filepath.Glob(filepath.Join(e.capture, "*.json"))
	sort.Strings(names)
	var out []capturedEvent
	for _, n := range names {
		in, _ := os.ReadFile(n)
		var c capturedEvent
		c.in = in
		if json.Unmarshal(in, &c.raw) != nil {
			continue
		}
		base := strings.TrimSuffix(n, ".json")
		c.out, _ = os.ReadFile(base + ".out")
		if ns, err := os.ReadFile(base + ".ns"); err == nil {
			var v int64
			_, _ = fmt.Sscan(string(ns), &v)
			c.dur = time.Duration(v)
		}
		out = append(out, c)
	}
	return out
}

// lastUserText is the text of the last user message of a request: what the
// model was just told (tool results, hook feedback, the prompt).
func lastUserText(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return string(req.Messages[i].Content)
		}
	}
	return ""
}

// contextMark opens every context tether injects (agentsession.SupersedeLine).
const contextMark = "tether context for hook "

// contextsIn are the tether SessionStart contexts a request holds, in order
// (JSON-escaped as sent).
func contextsIn(body []byte) []string {
	var out []string
	s := string(body)
	for {
		i := strings.Index(s, contextMark)
		if i < 0 {
			return out
		}
		j := strings.Index(s[i+1:], contextMark)
		if j < 0 {
			out = append(out, s[i:])
			return out
		}
		out = append(out, s[i:i+1+j])
		s = s[i+1+j:]
	}
}

func TestRealClaudeCodeAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code CLI")
	}
	e := newRCEnv(t)
	settings := filepath.Join(e.ws, ".claude", "settings.json")
	if _, err := os.Stat(settings); err == nil {
		t.Fatal("settings before init")
	}
	data := e.initClaude()
	e.addVersionHooks(settings)
	e.write(".git/info/exclude", ".tether/\n")
	e.startRun()
	e.apply(e.hookYAML("task", "", 3))
	e.waitFor(60*time.Second, "the Hook to be initialised", func() bool {
		return e.get("hook", "task", "{.status.state}") == string(v1.HookStepPending)
	})
	e.ok("agent", "bind", "task")
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range e.captured() {
				t.Logf("hook %s -> %s", c.in, c.out)
			}
		}
	})

	// Session 1: step one passes, with a git commit inside a failing
	// command; the Stop after it is blocked towards step two; step two
	// begins and the client is killed in the middle of it.
	marker := filepath.Join(e.out, "in-step-two")
	// The Bash tool's shell leaves the client's process group: the test
	// ends it by its pid, as the crash leaves it running.
	sleeper := filepath.Join(e.out, "sleeper.pid")
	t.Cleanup(func() {
		if data, err := os.ReadFile(sleeper); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	e.model.Push(
		fakemodel.Bash("tether step begin task --working-on 'the first file'"),
		fakemodel.Bash("echo 'one done' > one.txt && git add one.txt && git commit -q -m one && false"),
		fakemodel.Bash("tether step done task"),
		fakemodel.Say("step one is done"),
		fakemodel.Bash("tether step begin task"),
		fakemodel.Bash("echo 'two started' > two.txt && touch "+marker+" && echo $$ > "+sleeper+" && exec sleep 600"),
	)
	first := e.claudeCmd("-p", "work on the task")
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = first.Wait(); close(waited) }()
	e.waitFor(2*time.Minute, "the agent to reach the middle of step two", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	if got := e.get("hook", "task", "{.status.state} {.status.currentStep.name}"); got != "step_running two" {
		t.Fatalf("before the kill the Hook is %q\n%s", got, firstOut.String())
	}
	_ = syscall.Kill(-first.Process.Pid, syscall.SIGKILL)
	<-waited
	reqs := e.model.AgentRequests(0)
	if len(reqs) < 5 {
		t.Fatalf("%d agent requests in session 1", len(reqs))
	}
	// The commit inside the failing command became a checkpoint.
	if got := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}"); !strings.Contains(got, "git_commit") {
		t.Errorf("checkpoint triggers %q: the git commit of a failing command took no checkpoint", got)
	}
	// The Stop block reached the model as feedback: the request after "step
	// one is done" tells it to begin step two.
	mustContain(t, "the request after the Stop block", lastUserText(t, reqs[4].Body), "Stop hook", "tether step begin task")

	// Session 2: --continue, the same conversation.
	n := len(e.model.AgentRequests(0))
	e.model.Push(
		fakemodel.Bash("echo 'two done' > two.txt && tether step done task"),
		fakemodel.Say("step two is done"),
	)
	e.claudeRun("--continue", "-p", "go on")
	resumed := e.model.AgentRequests(n)
	if len(resumed) == 0 {
		t.Fatal("no model request after --continue")
	}
	body := string(resumed[0].Body)
	mustContain(t, "the first request after --continue", body, "DO NOT REPEAT", "The last session ended during step", `\"two\"`,
		"files it changed: `one.txt`")
	ctxs := contextsIn(resumed[0].Body)
	if len(ctxs) < 2 {
		t.Errorf("the first request after --continue holds %d tether contexts, want the stale one and the new one:\n%s", len(ctxs), body)
	}
	for i, c := range ctxs {
		first, _, _ := strings.Cut(c, `\n`)
		if !strings.Contains(first, "supersedes") {
			t.Errorf("tether context %d does not say in its first line that it supersedes earlier ones: %q", i, first)
		}
	}

	// Session 3: /compact, then step three to the end.
	cpBefore := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}")
	e.claudeRun("--continue", "-p", "/compact")
	if got := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}"); strings.Count(got, "pre_compact") != strings.Count(cpBefore, "pre_compact")+1 {
		t.Errorf("checkpoint triggers after /compact %q: want one more pre_compact", got)
	}
	if got := e.get("hook", "task", "{.status.agentSession.compactions}"); got != "1" {
		t.Errorf("compactions after /compact: %q, want 1", got)
	}
	// A model that makes no progress: the client has no cap of its own on
	// Stop blocks, so tether's no-progress rule must end the loop. The
	// Hook has not changed since the continuation that followed step two,
	// so the first Stop already lets the agent stop.
	stopsBefore := len(e.captured())
	e.model.Push(fakemodel.Say("waiting"), fakemodel.Say("still waiting"))
	e.claudeRun("--continue", "-p", "status?")
	blocks := 0
	for _, c := range e.captured()[stopsBefore:] {
		if c.raw["hook_event_name"] == "Stop" && bytes.Contains(c.out, []byte(`"decision":"block"`)) {
			blocks++
		}
	}
	if blocks != 0 || e.model.Pending() != 1 {
		t.Errorf("a loop without progress: %d Stop blocks and %d scripted answers left, want 0 and 1", blocks, e.model.Pending())
	}
	if got := e.get("hook", "task", `{.status.conditions[?(@.type=="AgentLoop")].status}/{.status.conditions[?(@.type=="AgentLoop")].reason}`); got != "False/NoProgress" {
		t.Errorf("AgentLoop %s after a loop without progress, want False/NoProgress", got)
	}
	// What the loop above left unanswered is answered here.
	e.claudeRun("--continue", "-p", "noop")

	n = len(e.model.AgentRequests(0))
	e.model.Push(
		fakemodel.Bash("tether step begin task && echo 'three done' > three.txt && tether step done task"),
		fakemodel.Say("all done"),
	)
	e.claudeRun("--continue", "-p", "finish")
	after := e.model.AgentRequests(n)
	if len(after) == 0 {
		t.Fatal("no model request after /compact")
	}
	mustContain(t, "the first request after /compact", string(after[0].Body), "Your context was just compacted")
	if got := e.get("hook", "task", "{.status.state}"); got != string(v1.HookCompleted) {
		t.Errorf("the Hook is %q at the end, want completed", got)
	}
	for _, s := range []string{"one", "two", "three"} {
		if n := e.validations("task", s); n != 1 {
			t.Errorf("step %s validated %d times, want exactly 1", s, n)
		}
	}
	// Each step's files are those its tool calls changed from its begin to
	// its pass: not the settings file init wrote before the task began.
	if got := e.get("hook", "task", "{.status.steps[*].filesTouched}"); got != `["one.txt"] ["two.txt"] ["three.txt"]` {
		t.Errorf("the steps' files %s, want one.txt, two.txt, three.txt", got)
	}

	// Every hook answered exit 0 quickly; every event tether installs came.
	seen := map[string]bool{}
	for _, c := range e.captured() {
		name, _ := c.raw["hook_event_name"].(string)
		src, _ := c.raw["source"].(string)
		seen[name+"/"+src] = true
		seen[name] = true
	}
	for _, want := range []string{"SessionStart/startup", "SessionStart/resume", "SessionStart/compact", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PreCompact", "Stop", "SessionEnd"} {
		if !seen[want] {
			t.Errorf("tether agent hook never saw %s", want)
		}
	}
	e.hookTimes()
	if dir := os.Getenv("TETHER_CAPTURE_FIXTURES"); dir != "" {
		saveFixtures(t, dir, filepath.Dir(e.ws), e.captured())
	}

	// Uninstall gives the workspace back as it was: install created the
	// file and .claude/, so both go. (The test's own edits of the file are
	// undone first: uninstall restores only a file tether's install wrote.)
	e.stop()
	e.write(settings, string(data))
	e.tetherWrapped("agent", "uninstall", "claude")
	if _, err := os.Stat(filepath.Join(e.ws, ".claude")); !os.IsNotExist(err) {
		left, _ := os.ReadDir(filepath.Join(e.ws, ".claude"))
		t.Errorf("after uninstall .claude is still there (%v, holding %v): install created it", err, left)
	}
}

// TestRealClaudeCodeStopCaps is issue 25's item 7 through the real client,
// which has no cap of its own on Stop blocks: with agentLoop.maxConsecutive
// 2 and maxPerHook 3, an agent that makes progress in every turn is
// continued twice in its first turn and then let go (the session's cap);
// a new turn starts the consecutive count again, and the Hook's third
// continuation is its last (the Hook's cap). Each cap is the AgentLoop
// condition's reason, and the model is asked nothing after it.
func TestRealClaudeCodeStopCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code CLI")
	}
	e := newRCEnv(t)
	for _, kv := range e.env {
		if home, ok := strings.CutPrefix(kv, "TETHER_HOME="); ok {
			e.write(filepath.Join(home, "config.yaml"), "agentLoop:\n  maxConsecutive: 2\n  maxPerHook: 3\n")
		}
	}
	e.initClaude()
	e.write(".git/info/exclude", ".tether/\n")
	e.startRun()
	e.apply(e.hookYAML("task", "", 3))
	e.waitFor(60*time.Second, "the Hook to be initialised", func() bool {
		return e.get("hook", "task", "{.status.state}") == string(v1.HookStepPending)
	})
	e.ok("agent", "bind", "task")
	blocks := func(since int) int {
		n := 0
		for _, c := range e.captured()[since:] {
			if c.raw["hook_event_name"] == "Stop" && bytes.Contains(c.out, []byte(`"decision":"block"`)) {
				n++
			}
		}
		return n
	}
	loop := func() string {
		return e.get("hook", "task", `{.status.conditions[?(@.type=="AgentLoop")].status}/{.status.conditions[?(@.type=="AgentLoop")].reason}`)
	}

	// Turn 1: progress after each continuation; the third Stop meets the
	// session's cap.
	e.model.Push(
		fakemodel.Bash("tether step begin task"),
		fakemodel.Say("began step one"),
		fakemodel.Bash("echo 'one done' > one.txt && tether step done task"),
		fakemodel.Say("step one passed"),
		fakemodel.Bash("tether step begin task"),
		fakemodel.Say("began step two"),
	)
	e.claudeRun("-p", "work on the task")
	if n, left := blocks(0), e.model.Pending(); n != 2 || left != 0 {
		t.Errorf("turn 1: %d Stop blocks and %d scripted answers left, want 2 and 0", n, left)
	}
	if got := loop(); got != "False/SessionContinuationCap" {
		t.Errorf("AgentLoop %s after turn 1, want False/SessionContinuationCap", got)
	}

	// Turn 2: a person spoke, so the consecutive count starts again; the
	// Hook's third continuation is its last.
	since := len(e.captured())
	e.model.Push(
		fakemodel.Bash("echo 'two done' > two.txt && tether step done task"),
		fakemodel.Say("step two passed"),
		fakemodel.Bash("tether step begin task"),
		fakemodel.Say("began step three"),
	)
	e.claudeRun("--continue", "-p", "go on")
	if n, left := blocks(since), e.model.Pending(); n != 1 || left != 0 {
		t.Errorf("turn 2: %d Stop blocks and %d scripted answers left, want 1 and 0", n, left)
	}
	if got := loop(); got != "False/HookContinuationCap" {
		t.Errorf("AgentLoop %s after turn 2, want False/HookContinuationCap", got)
	}
	if got := e.get("hook", "task", "{.status.state} {.status.currentStep.name}"); got != "step_running three" {
		t.Errorf("the Hook is %q, want step_running three", got)
	}
}

// addVersionHooks adds `tether version` beside `tether agent hook` in every
// group of settings: the client starts both the same way, so their
// whole-process times compare (docs/benchmarks.md).
func (e *rcEnv) addVersionHooks(settings string) {
	e.t.Helper()
	data, err := os.ReadFile(settings)
	if err != nil {
		e.t.Fatal(err)
	}
	var doc map[string]map[string][]map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		e.t.Fatal(err)
	}
	for _, groups := range doc["hooks"] {
		for _, g := range groups {
			hooks, _ := g["hooks"].([]any)
			g["hooks"] = append(hooks, map[string]any{"type": "command", "command": e.wrapper + " version", "timeout": 10})
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		e.t.Fatal(err)
	}
	e.write(settings, string(out)+"\n")
}

// hookTimes logs the whole-process times of tether agent hook and tether
// version as the client ran them: p50 and p99 (docs/benchmarks.md).
func (e *rcEnv) hookTimes() {
	e.t.Helper()
	var hook, version []time.Duration
	for _, c := range e.captured() {
		if c.dur > 0 {
			hook = append(hook, c.dur)
		}
	}
	names, _ := filepath.Glob(filepath.Join(e.capture, "*.version-ns"))
	for _, n := range names {
		data, _ := os.ReadFile(n)
		var v int64
		if _, err := fmt.Sscan(string(data), &v); err == nil {
			version = append(version, time.Duration(v))
		}
	}
	q := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[min(len(d)-1, int(p*float64(len(d))))]
	}
	slowest := capturedEvent{}
	for _, c := range e.captured() {
		if c.dur > slowest.dur {
			slowest = c
		}
	}
	e.t.Logf("slowest hook: %s %v %v in %s", slowest.raw["hook_event_name"], slowest.raw["source"], slowest.raw["tool_input"], slowest.dur)
	e.t.Logf("inside the client: tether agent hook n=%d p50 %s p99 %s; tether version n=%d p50 %s p99 %s",
		len(hook), q(hook, 0.5), q(hook, 0.99), len(version), q(version, 0.5), q(version, 0.99))
}

// saveFixtures writes one captured input per event (and source) into dir,
// for internal/agent/claudehook's tests: TETHER_CAPTURE_FIXTURES=DIR.
// The test's temporary root becomes /home/agent, so that no path of this
// machine is committed.
func saveFixtures(t *testing.T, dir, root string, cs []capturedEvent) {
	t.Helper()
	for _, c := range cs {
		name, _ := c.raw["hook_event_name"].(string)
		if src, ok := c.raw["source"].(string); ok {
			name += "-" + src
		}
		if tool, ok := c.raw["tool_name"].(string); ok {
			name += "-" + tool
		}
		p := filepath.Join(dir, name+".json")
		if _, err := os.Stat(p); err == nil {
			continue
		}
		var b bytes.Buffer
		_ = json.Indent(&b, c.in, "", "  ")
		b = *bytes.NewBuffer(bytes.ReplaceAll(b.Bytes(), []byte(root), []byte("/home/agent")))
		b = *bytes.NewBuffer(bytes.ReplaceAll(b.Bytes(), []byte(strings.ReplaceAll(root, "/", "-")), []byte("-home-agent")))
		b.WriteByte('\n')
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// The acceptance scenario of issue 12: an agent, played by claudesim through
// the hooks `tether agent install claude` wrote, works a 3-step Hook as the
// process of a Worker, is killed by SIGKILL in the middle of step 2, is
// restarted by `tether run`, is told by SessionStart what not to repeat and
// where it was, and finishes the Hook with the Stop hook continuing its loop
// between steps. Everything goes through the built binary; nothing reaches
// into the store.

// arEnv is one scenario: a git workspace initialised with `tether init`,
// the tether and claudesim binaries on PATH, and a `tether run`.
type arEnv struct {
	t      *testing.T
	ws     string // the git workspace, and the agent's project directory
	out    string // files the agent and the validations leave for the test
	counts string // one file per step, a line per validation run
	env    []string
	run    *exec.Cmd
	logs   *syncBuffer
}

// claudesimBin builds hack/claudesim next to the tether binary, once.
func claudesimBin(t *testing.T) string {
	t.Helper()
	sim := filepath.Join(filepath.Dir(tetherBin), "claudesim")
	if _, err := os.Stat(sim); err != nil {
		build := exec.Command("go", "build", "-o", sim, "../../hack/claudesim")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building claudesim: %v\n%s", err, out)
		}
	}
	return sim
}

func newAREnv(t *testing.T) *arEnv {
	t.Helper()
	claudesimBin(t)
	root := t.TempDir()
	e := &arEnv{t: t, ws: filepath.Join(root, "ws"), out: filepath.Join(root, "out"), counts: filepath.Join(root, "counts")}
	for _, d := range []string{e.ws, e.out, e.counts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The store is found from the working directory, as a person's shell
	// would: no TETHER_* variable leaks in from the test's environment.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TETHER_") || strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "GIT_") {
			continue
		}
		e.env = append(e.env, kv)
	}
	e.env = append(e.env,
		"PATH="+filepath.Dir(tetherBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TETHER_HOME="+filepath.Join(root, "home"),
		"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.invalid",
		"GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.invalid",
	)
	e.git("init", "-q")
	e.write("README.md", "workspace\n")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "init")

	// Set up the workspace as the docs tell a person to.
	e.ok("init")
	if out := e.ok("agent", "install", "claude"); !strings.Contains(out, "claude hooks installed") {
		t.Errorf("agent install claude printed %q", out)
	}
	e.git("add", ".claude")
	e.git("commit", "-q", "-m", "claude hooks")
	// What is left untracked is what tether init created; its store must
	// not count as a change of the workspace.
	if st := e.gitOut("status", "--porcelain", "--untracked-files=all"); strings.Contains(st, ".tether/") {
		t.Errorf("after tether init, git status shows the store as a change of the workspace:\n%s", st)
		e.write(".git/info/exclude", ".tether/\n")
	}
	t.Cleanup(e.stop)
	return e
}

func (e *arEnv) git(args ...string) { e.t.Helper(); e.gitOut(args...) }

func (e *arEnv) gitOut(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = e.ws, e.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (e *arEnv) write(name, content string) {
	e.t.Helper()
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.ws, name)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// command is tether ARGS in the workspace, with the test's environment
// plus extra.
func (e *arEnv) command(name string, args []string, extra ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = e.ws
	cmd.Env = append(slices.Clone(e.env), extra...)
	return cmd
}

func (e *arEnv) tether(args ...string) (string, string, int) {
	e.t.Helper()
	return runCommand(e.t, e.command(tetherBin, args))
}

func (e *arEnv) ok(args ...string) string {
	e.t.Helper()
	out, stderr, code := e.tether(args...)
	if code != 0 {
		e.t.Fatalf("tether %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

// get prints one object's jsonpath, or "" when it cannot be read.
func (e *arEnv) get(kind, name, jsonpath string) string {
	e.t.Helper()
	out, _, code := e.tether("get", kind, name, "-o", "jsonpath="+jsonpath)
	if code != 0 {
		return ""
	}
	return out
}

func (e *arEnv) startRun() {
	e.t.Helper()
	e.logs = &syncBuffer{}
	e.run = e.command(tetherBin, []string{"run"})
	e.run.Stdout, e.run.Stderr = e.logs, e.logs
	if err := e.run.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor(60*time.Second, "tether run to serve the store", func() bool {
		return strings.Contains(e.logs.String(), "serving the local store")
	})
}

// stop ends the Workers' processes (they outlive tether run by design),
// then tether run.
func (e *arEnv) stop() {
	if e.run == nil {
		return
	}
	if out, _, code := e.tether("get", "workers", "-o", "jsonpath={.items[*].status.pid}"); code == 0 {
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	_ = e.run.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = e.run.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = e.run.Process.Kill()
		<-done
	}
	if e.t.Failed() {
		e.t.Logf("tether run:\n%s", e.logs.String())
	}
	e.run = nil
}

// waitFor polls cond every 20ms until it holds; the deadline is generous, for
// a loaded machine, and only bounds a failure.
func (e *arEnv) waitFor(timeout time.Duration, what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// apply applies YAML with tether apply -f -.
func (e *arEnv) apply(yaml string) {
	e.t.Helper()
	cmd := e.command(tetherBin, []string{"apply", "-f", "-"})
	cmd.Stdin = strings.NewReader(yaml)
	if out, stderr, code := runCommand(e.t, cmd); code != 0 {
		e.t.Fatalf("apply: exit %d\n%s%s\n%s", code, out, stderr, yaml)
	}
}

// hookYAML is a Hook of three steps whose validations count their runs in
// e.counts/NAME, then check that the step's file holds the step's word.
func (e *arEnv) hookYAML(name, assignee string, maxAttempts int) string {
	var steps strings.Builder
	for _, s := range []string{"one", "two", "three"} {
		fmt.Fprintf(&steps, "  - name: %s\n    validate:\n    - command: [sh, -c, 'echo ran >> %s && grep -qx \"%s done\" %s.txt']\n",
			s, filepath.Join(e.counts, name+"-"+s), s, s)
	}
	y := fmt.Sprintf("apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata:\n  name: %s\nspec:\n  goal: write one.txt, two.txt and three.txt\n  workspace: %s\n  staleAfter: 1h\n  maxAttempts: %d\n", name, e.ws, maxAttempts)
	if assignee != "" {
		y += "  assignee: " + assignee + "\n"
	}
	return y + "  steps:\n" + steps.String()
}

// validations is how many times the validation of hook's step ran.
func (e *arEnv) validations(hook, step string) int {
	data, err := os.ReadFile(filepath.Join(e.counts, hook+"-"+step))
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "ran\n")
}

// script writes a claudesim script into e.out and returns its path.
func (e *arEnv) script(name, body string) string {
	e.t.Helper()
	p := filepath.Join(e.out, name)
	e.write(p, body)
	return p
}

// simEntry is one line of claudesim's transcript (hack/claudesim).
type simEntry struct {
	Seq      int               `json:"seq"`
	Kind     string            `json:"kind"`
	Event    string            `json:"event"`
	Input    json.RawMessage   `json:"input"`
	Command  string            `json:"command"`
	ExitCode *int              `json:"exit_code"`
	Stdout   string            `json:"stdout"`
	Stderr   string            `json:"stderr"`
	Blocked  bool              `json:"blocked"`
	Reason   string            `json:"reason"`
	Context  []string          `json:"context"`
	Messages []string          `json:"messages"`
	Origin   string            `json:"origin"`
	Text     string            `json:"text"`
	Env      map[string]string `json:"env"`
}

// simSession is one claudesim session of a transcript.
type simSession struct {
	source, id string
	env        map[string]string
	entries    []simEntry
}

func readSessions(t *testing.T, path string) []simSession {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []simSession
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var en simEntry
		if err := json.Unmarshal([]byte(line), &en); err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		if en.Kind == "session" {
			out = append(out, simSession{source: en.Text, id: en.Reason, env: en.Env})
		}
		if len(out) == 0 {
			t.Fatalf("transcript %s does not begin with a session entry", path)
		}
		out[len(out)-1].entries = append(out[len(out)-1].entries, en)
	}
	return out
}

// of returns the entries of a kind (and of an event, when given).
func (s simSession) of(kind string, event ...string) []simEntry {
	var out []simEntry
	for _, en := range s.entries {
		if en.Kind == kind && (len(event) == 0 || en.Event == event[0]) {
			out = append(out, en)
		}
	}
	return out
}

// contexts returns the context texts added by event's hooks, in order; for
// SessionStart, source picks the start (the session's own, or compact).
func (s simSession) contexts(event, source string) []string {
	var out []string
	current := ""
	for _, en := range s.entries {
		if en.Kind == "event" {
			var in struct {
				Source string `json:"source"`
			}
			_ = json.Unmarshal(en.Input, &in)
			current = in.Source
		}
		if en.Kind == "context" && en.Event == event && (source == "" || current == source) {
			out = append(out, en.Text)
		}
	}
	return out
}

// continuations are the Stop-hook reasons the agent was given as its next
// prompt.
func (s simSession) continuations() []string {
	var out []string
	for _, en := range s.entries {
		if en.Kind == "prompt" && en.Origin == "stop_hook" {
			out = append(out, en.Text)
		}
	}
	return out
}

// dump is a session's transcript for a failure message.
func (s simSession) dump() string {
	var b strings.Builder
	for _, en := range s.entries {
		line, _ := json.Marshal(en)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// flow is a session's story: actions, Stop outcomes and exits, one word each,
// for asserting the order of things.
func (s simSession) flow() []string {
	var out []string
	for _, en := range s.entries {
		switch {
		case en.Kind == "prompt" && en.Origin == "stop_hook":
			out = append(out, "stop-blocked")
		case en.Kind == "turn_end", en.Kind == "stop_block_cap", en.Kind == "compacted":
			out = append(out, en.Kind)
		case en.Kind == "tool" && strings.Contains(en.Command, "tether "):
			// The verb: "tether step begin", "tether pause".
			f := strings.Fields(en.Command)
			verb := []string{"tether"}
			for _, w := range f[slices.Index(f, "tether")+1:] {
				if len(verb) == 3 || strings.ContainsAny(w[:1], `"'$-|`) {
					break
				}
				verb = append(verb, w)
			}
			out = append(out, strings.Join(verb, " "))
		}
	}
	return out
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// hookObject reads a Hook through tether get -o json.
func (e *arEnv) hookObject(name string) (*v1.Hook, map[string]any) {
	e.t.Helper()
	out := e.ok("get", "hook", name, "-o", "json")
	h := &v1.Hook{}
	raw := map[string]any{}
	if err := json.Unmarshal([]byte(out), h); err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		e.t.Fatal(err)
	}
	return h, raw
}

// condition returns the status and reason of a Hook condition, read through
// jsonpath so that a condition type this test does not compile against
// still shows.
func (e *arEnv) condition(hook, typ string) (status, reason, message string) {
	e.t.Helper()
	p := fmt.Sprintf(`{.status.conditions[?(@.type=="%s")].status}|{.status.conditions[?(@.type=="%s")].reason}|{.status.conditions[?(@.type=="%s")].message}`, typ, typ, typ)
	parts := strings.SplitN(e.get("hook", hook, p), "|", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return parts[0], parts[1], parts[2]
}

func TestAgentResumeAfterSIGKILL(t *testing.T) {
	e := newAREnv(t)
	sim := claudesimBin(t)
	// The scripted agent: its first session, then the one the Worker's
	// restart plays (claudesim -resume-script).
	first, err := filepath.Abs("../../hack/claudesim/testdata/resume-first.yaml")
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := filepath.Abs("../../hack/claudesim/testdata/resume-after-crash.yaml")
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(e.out, "transcript.jsonl")
	e.startRun()
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(transcript)
			logs, _, _ := e.tether("logs", "worker/agent")
			t.Logf("claudesim transcript:\n%s\nWorker log:\n%s", data, logs)
		}
	})

	// The Hook first, assigned to the Worker, so that the Worker's process
	// is launched with TETHER_HOOK. The Worker keeps its Hook across a
	// crash (clearAssigneeOnCrash: false): the restarted agent carries on
	// with the same task.
	e.apply(e.hookYAML("task", "agent", 3))
	e.waitFor(60*time.Second, "the Hook to be initialised", func() bool {
		return e.get("hook", "task", "{.status.state}") == string(v1.HookStepPending)
	})
	e.apply(fmt.Sprintf(`apiVersion: agents.tether.dev/v1alpha1
kind: Worker
metadata:
  name: agent
spec:
  command: [%s, -script, %s, -resume-script, %s, -transcript, %s]
  workdir: %s
  env: [{name: E2E_OUT, value: %s}]
  restart: {auto: true, maxCrashes: 3, window: 10m}
  clearAssigneeOnCrash: false
`, sim, first, resumed, transcript, e.ws, e.out))

	// The agent passes step 1, begins step 2, edits two files and sleeps.
	marker := filepath.Join(e.out, "in-step-two")
	e.waitFor(90*time.Second, "the agent to reach the middle of step 2 and sleep", func() bool {
		if _, err := os.Stat(marker); err != nil {
			return false
		}
		// The marker's PostToolUse hook has answered: the agent sleeps.
		data, _ := os.ReadFile(transcript)
		return strings.Contains(string(data), `"kind":"action","action":"sleep"`)
	})
	if got := e.get("hook", "task", "{.status.state} {.status.currentStep.name} {.status.currentStep.attempt}"); got != "step_running two 1" {
		t.Fatalf("before the kill the Hook is %q, want step_running two 1", got)
	}
	// The Hook follows the agent's session from its hook events. (Its
	// heartbeat is not checked per tool call: tether agent hook writes one
	// at most every min(10s, staleAfter/4).)
	sessionBefore := e.get("hook", "task", "{.status.agentSession.sessionID}")
	pid, err := strconv.Atoi(e.get("worker", "agent", "{.status.pid}"))
	if err != nil || pid <= 0 {
		t.Fatalf("the Worker's status.pid: %v", err)
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil || !strings.Contains(string(cmdline), "claudesim") {
		t.Fatalf("the Worker's status.pid %d is not the agent: %q %v", pid, cmdline, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}

	// tether run restarts it; the resumed session finishes the Hook and
	// exits 0, which stops the Worker.
	e.waitFor(120*time.Second, "the Hook to complete", func() bool {
		return e.get("hook", "task", "{.status.state}") == string(v1.HookCompleted)
	})
	e.waitFor(60*time.Second, "the resumed agent to exit", func() bool {
		return e.get("worker", "agent", "{.status.phase}") == string(v1.WorkerStopped)
	})
	if got := e.get("worker", "agent", "{.status.restarts} {.status.crashes[0].pid} {.status.crashes[0].signal}"); got != fmt.Sprintf("1 %d 9", pid) {
		t.Errorf("Worker restarts, crash pid and signal: %q, want \"1 %d 9\"", got, pid)
	}

	sessions := readSessions(t, transcript)
	if len(sessions) != 2 {
		t.Fatalf("%d sessions in the transcript, want 2 (the first, killed, and the restarted one)", len(sessions))
	}
	s1, s2 := sessions[0], sessions[1]

	// The Worker told each agent its Hook and store.
	for i, s := range sessions {
		if s.env["TETHER_HOOK"] != "task" || s.env["TETHER_WORKER"] != "agent" || s.env["TETHER_NAMESPACE"] != "default" || s.env["TETHER_STORE"] == "" {
			t.Errorf("session %d got the environment %v: want TETHER_HOOK=task, TETHER_WORKER=agent, TETHER_NAMESPACE=default and TETHER_STORE", i+1, s.env)
		}
	}
	if s1.source != "startup" || s2.source != "resume" {
		t.Errorf("session sources %q, %q: want startup, then resume", s1.source, s2.source)
	}
	// Every hook answer exits 0: tether never breaks the agent.
	for _, s := range sessions {
		for _, h := range s.of("hook") {
			if h.ExitCode == nil || *h.ExitCode != 0 || strings.TrimSpace(h.Stderr) != "" {
				t.Errorf("%s hook: exit %v, stderr %q: want exit 0 and nothing on stderr", h.Event, h.ExitCode, h.Stderr)
			}
		}
	}

	// The first session: step 1, a continuation to step 2, then the kill.
	want1 := []string{"tether step begin", "tether step done", "stop-blocked", "tether step begin"}
	if got := s1.flow(); !slices.Equal(got, want1) {
		t.Errorf("first session went %q, want %q", got, want1)
	}
	if c := s1.continuations(); len(c) > 0 {
		mustContain(t, "the Stop continuation after step 1", c[0], "tether step begin", "two")
	}
	if sessionBefore != s1.id {
		t.Errorf("status.agentSession.sessionID before the kill is %q, want the first session's, %q", sessionBefore, s1.id)
	}
	if ex := s1.of("exit"); len(ex) != 0 {
		t.Errorf("the killed session recorded an exit: %+v", ex)
	}

	// The restarted session starts with the recovery file: step 1 passed,
	// with its verified receipt, not to repeat; step 2 current, attempt 1;
	// the files changed since the last checkpoint.
	start := strings.Join(s2.contexts("SessionStart", "resume"), "\n")
	if start == "" {
		t.Fatal("the resumed session got no SessionStart context")
	}
	notRepeat := section(t, start, "## DO NOT REPEAT")
	mustContain(t, "DO NOT REPEAT", notRepeat, `step "one" (1/3) passed`, "signature: verified")
	if strings.Contains(notRepeat, `step "two"`) || strings.Contains(notRepeat, `step "three"`) {
		t.Errorf("DO NOT REPEAT lists an unfinished step:\n%s", notRepeat)
	}
	mustContain(t, "the resumed SessionStart context", start, `- Step: step "two" (2/3)`, "- Attempt: 1 of 3", "`two.txt`", "`README.md`")
	if strings.Contains(start, ".tether/") || strings.Contains(start, "transcript.jsonl") {
		t.Errorf("the files changed since the last checkpoint include tether's own files:\n%s", start)
	}

	// The restarted session: step 2 done, a continuation to step 3, a
	// compaction, step 3 done, and the Stop hook lets it stop.
	want2 := []string{"tether step done", "stop-blocked", "tether step begin", "compacted", "tether step done", "turn_end"}
	if got := s2.flow(); !slices.Equal(got, want2) {
		t.Errorf("resumed session went %q, want %q", got, want2)
	}
	if c := s2.continuations(); len(c) > 0 {
		mustContain(t, "the Stop continuation after step 2", c[0], "tether step begin", "three")
	}
	for _, s := range sessions {
		if c := s.of("stop_block_cap"); len(c) > 0 {
			t.Errorf("Claude Code's own 8-block limit ended a turn: %+v", c)
		}
	}
	stops := s2.of("outcome", "Stop")
	if len(stops) == 0 || stops[len(stops)-1].Blocked {
		t.Errorf("the last Stop was not let through: %+v", stops)
	}
	if status, reason, msg := e.condition("task", "AgentLoop"); status != "False" || reason != "HookTerminal" {
		t.Errorf("AgentLoop condition %s/%s (%s), want False/HookTerminal: the loop ended because the Hook completed", status, reason, msg)
	}

	// Compaction: PreCompact took a pre_compact checkpoint, and the
	// SessionStart after it leads with the anchor: step 3, its attempt, the
	// files touched and the last checkpoint.
	var cps v1.CheckpointList
	if err := json.Unmarshal([]byte(e.ok("get", "checkpoints", "-o", "json")), &cps); err != nil {
		t.Fatal(err)
	}
	preCompact := ""
	var triggers []string
	for _, cp := range cps.Items {
		triggers = append(triggers, string(cp.Spec.Trigger))
		if cp.Spec.Trigger == v1.CheckpointTrigger("pre_compact") && cp.Spec.HookName == "task" {
			preCompact = cp.Name
		}
	}
	if preCompact == "" {
		t.Errorf("no pre_compact Checkpoint of the Hook; triggers: %v", triggers)
	}
	anchor := strings.Join(s2.contexts("SessionStart", "compact"), "\n")
	if anchor == "" {
		t.Error("the SessionStart after compaction added no context")
	} else {
		mustContain(t, "the compaction anchor", anchor, `step "three" (3/3)`, "ttempt", "three.txt")
		if preCompact != "" {
			mustContain(t, "the compaction anchor", anchor, preCompact)
		}
		if i, j := strings.Index(anchor, `step "three"`), strings.Index(anchor, "## DO NOT REPEAT"); j >= 0 && i > j {
			t.Errorf("the compaction anchor does not come first:\n%s", anchor)
		}
	}

	// Each validation ran once: step 1 was not repeated after the crash,
	// and no step was skipped.
	for _, s := range []string{"one", "two", "three"} {
		if n := e.validations("task", s); n != 1 {
			t.Errorf("the validation of step %q ran %d times, want 1", s, n)
		}
	}
	h, raw := e.hookObject("task")
	for i, r := range h.Status.Steps {
		if r.Phase != v1.StepPassed || r.Attempts != 1 || len(r.Receipts) != 1 {
			t.Errorf("step %d: %s after %d attempt(s) with %d receipt(s), want Passed, 1, 1", i+1, r.Phase, r.Attempts, len(r.Receipts))
		}
	}
	var begun []int32
	for _, he := range h.Status.History {
		if he.Event == "begin" {
			begun = append(begun, he.Step)
		}
	}
	if !slices.Equal(begun, []int32{0, 1, 2}) {
		t.Errorf("steps begun in the order %v, want [0 1 2]: none skipped or repeated", begun)
	}
	if out := e.ok("receipts", "verify", "task"); verifiedReceipts(out) != 3 {
		t.Errorf("receipts verify:\n%s", out)
	}

	// The Hook knows its agent session: the resumed one, which kept the
	// killed one's id (as claude --continue does) and compacted once.
	st, _ := raw["status"].(map[string]any)
	as, _ := st["agentSession"].(map[string]any)
	if as["sessionID"] != s1.id || s2.id != s1.id || as["compactions"] != float64(1) {
		t.Errorf("status.agentSession = %v, sessions %s then %s: want one session id kept across the resume, compactions 1", as, s1.id, s2.id)
	}
}

// simulateWith plays a claudesim script in the workspace as an agent working
// on hook, with extra environment, and returns its one session.
func (e *arEnv) simulateWith(name, hook, script string, extra ...string) simSession {
	e.t.Helper()
	sp := e.script(name+".yaml", script)
	tr := filepath.Join(e.out, name+".jsonl")
	cmd := e.command(claudesimBin(e.t), []string{"-script", sp, "-transcript", tr, "-session", name}, append([]string{"TETHER_HOOK=" + hook}, extra...)...)
	if out, stderr, code := runCommand(e.t, cmd); code != 0 {
		e.t.Fatalf("claudesim %s: exit %d\n%s%s", name, code, out, stderr)
	}
	s := readSessions(e.t, tr)
	if len(s) != 1 {
		e.t.Fatalf("%d sessions in %s", len(s), tr)
	}
	e.t.Cleanup(func() {
		if e.t.Failed() {
			e.t.Logf("%s transcript:\n%s", name, s[0].dump())
		}
	})
	return s[0]
}

// with is e for a subtest: failures go to t.
func (e *arEnv) with(t *testing.T) *arEnv {
	c := *e
	c.t = t
	return &c
}

// events returns tether events --for hook/NAME.
func (e *arEnv) events(hook string) string {
	e.t.Helper()
	return e.ok("events", "--for", "hook/"+hook)
}

// TestAgentResumeStopControls: what lets an agent stop although its Hook has
// work left. TETHER_DISABLE=1 and `tether pause` let it stop at once; a loop
// that makes no progress, and one that makes progress but never passes its
// step, are ended by tether's caps before Claude Code's own limit, and the
// Hook says why in its AgentLoop condition and an Event.
func TestAgentResumeStopControls(t *testing.T) {
	e := newAREnv(t)
	e.startRun()
	for _, name := range []string{"disabled", "paused", "stuck", "looping"} {
		e.apply(e.hookYAML(name, "", 20))
	}
	for _, name := range []string{"disabled", "paused", "stuck", "looping"} {
		e.waitFor(60*time.Second, "Hook "+name+" to be initialised", func() bool {
			return e.get("hook", name, "{.status.state}") == string(v1.HookStepPending)
		})
	}

	t.Run("TETHER_DISABLE", func(t *testing.T) {
		e := e.with(t)
		s := e.simulateWith("disabled", "disabled", "actions:\n  - stop: {}\n", "TETHER_DISABLE=1")
		if got := s.flow(); !slices.Equal(got, []string{"turn_end"}) {
			t.Errorf("with TETHER_DISABLE=1 the session went %q, want an immediate turn_end", got)
		}
		for _, h := range s.of("hook") {
			if h.Stdout != "" || *h.ExitCode != 0 {
				t.Errorf("%s hook answered %q exit %d with TETHER_DISABLE=1, want nothing and 0", h.Event, h.Stdout, *h.ExitCode)
			}
		}
		if c := s.of("context"); len(c) != 0 {
			t.Errorf("with TETHER_DISABLE=1 the agent got context: %+v", c)
		}
		if got := e.get("hook", "disabled", "{.status.agentSession}"); got != "" {
			t.Errorf("with TETHER_DISABLE=1 the Hook recorded an agent session: %s", got)
		}
	})

	t.Run("pause", func(t *testing.T) {
		e := e.with(t)
		s := e.simulateWith("paused", "paused", `actions:
  - run: tether pause "$TETHER_HOOK" --reason "a person takes over"
  - stop: {max: 3}
  - run: tether unpause "$TETHER_HOOK"
  - prompt: "Carry on."
  - stop: {}
`)
		want := []string{"tether pause", "turn_end", "tether unpause", "stop-blocked"}
		if got := s.flow(); !slices.Equal(got, want) {
			t.Errorf("paused session went %q, want %q: a paused Hook lets the agent stop at the first Stop, an unpaused one continues it", got, want)
		}
		mustContain(t, "the Hook's Events", e.events("paused"), "HookPaused")
		if got := e.get("hook", "paused", "{.spec.suspend}"); got == "true" {
			t.Errorf("spec.suspend is still true after tether unpause")
		}
	})

	t.Run("no progress", func(t *testing.T) {
		e := e.with(t)
		s := e.simulateWith("stuck", "stuck", "actions:\n  - stop: {max: 10}\n")
		if got := s.flow(); !slices.Equal(got, []string{"stop-blocked", "turn_end"}) {
			t.Errorf("an agent that does nothing went %q, want one continuation, then a stop", got)
		}
		status, reason, msg := e.condition("stuck", "AgentLoop")
		if status != "False" || reason != "NoProgress" {
			t.Errorf("AgentLoop condition %s/%s (%s), want False/NoProgress", status, reason, msg)
		}
		mustContain(t, "the Hook's Events", e.events("stuck"), "NoProgress")
	})

	t.Run("session cap", func(t *testing.T) {
		e := e.with(t)
		// Each round fails the step's validation: the attempt changes, so
		// the state does (no NoProgress), but the step never passes.
		var script strings.Builder
		script.WriteString("actions:\n  - prompt: \"Work on the Hook.\"\n  - run: tether step begin \"$TETHER_HOOK\"\n")
		for range 7 {
			script.WriteString("  - run: tether step done \"$TETHER_HOOK\" || true\n  - stop: {}\n")
		}
		s := e.simulateWith("looping", "looping", script.String())
		var stopOutcomes []string
		for _, w := range s.flow() {
			if w == "stop-blocked" || w == "turn_end" || w == "stop_block_cap" {
				stopOutcomes = append(stopOutcomes, w)
			}
		}
		want := []string{"stop-blocked", "stop-blocked", "stop-blocked", "stop-blocked", "stop-blocked", "stop-blocked", "turn_end"}
		if len(stopOutcomes) < len(want) || !slices.Equal(stopOutcomes[:len(want)], want) {
			t.Errorf("the Stops of a loop that never passes its step went %q, want 6 continuations, then tether's cap", stopOutcomes)
		}
		status, reason, msg := e.condition("looping", "AgentLoop")
		if status != "False" || reason != "SessionContinuationCap" {
			t.Errorf("AgentLoop condition %s/%s (%s), want False/SessionContinuationCap", status, reason, msg)
		}
		mustContain(t, "the Hook's Events", e.events("looping"), "SessionContinuationCap")
		if n := e.validations("looping", "one"); n < 7 {
			t.Errorf("the failing validation ran %d times, want one per round", n)
		}
	})
}

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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/fakemodel"
)

// Issue 26's acceptance scenario for the OpenAI Codex CLI (pinned in
// hack/agents/install.sh), against a scripted fake OpenAI Responses API
// (fakemodel.Responses) reached through a custom model provider: every
// assertion on what the agent was told reads the requests the client sent.

var (
	codexOnce sync.Once
	codexPath string
	codexErr  error
)

// codexBin installs the pinned client with the project's script, once.
func codexBin(t *testing.T) string {
	t.Helper()
	codexOnce.Do(func() {
		cmd := exec.Command("../../hack/agents/install.sh", "codex")
		if v := os.Getenv("TETHER_CODEX_VERSION"); v != "" {
			cmd.Args = append(cmd.Args, v)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			codexErr = fmt.Errorf("hack/agents/install.sh codex: %w\n%s", err, stderr.String())
			return
		}
		codexPath = strings.TrimSpace(string(out))
	})
	if codexErr != nil {
		t.Fatal(codexErr)
	}
	return codexPath
}

// cxEnv is arEnv with the real Codex client: CODEX_HOME in the test's
// directory, the fake model as its only provider, and the wrapper named
// tether that records each hook input.
type cxEnv struct {
	*arEnv
	codex   string
	home    string
	model   *fakemodel.Responses
	capture string
	wrapper string
}

// codexConfig is CODEX_HOME/config.toml: the fake model as a custom
// provider whose key comes from the environment (no login), no approvals
// and no sandbox (the test's directory is the sandbox), a shell that is
// not a login shell (a login shell's profile resets PATH, and with it the
// wrapper named tether), the workspace
// trusted (Codex reads a project's .codex/ only then), no update checks and
// no analytics, and a small auto-compaction limit that a turn reporting a
// large usage crosses.
const codexConfig = `model = "gpt-fake"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
allow_login_shell = false
check_for_update_on_startup = false
model_auto_compact_token_limit = 20000

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
env_key = "TETHER_TEST_FAKE_KEY"

[projects.%q]
trust_level = "trusted"
`

func newCXEnv(t *testing.T) *cxEnv {
	t.Helper()
	codex := codexBin(t)
	root := t.TempDir()
	e := &cxEnv{codex: codex, home: filepath.Join(root, "codex-home"), capture: filepath.Join(root, "capture")}
	e.arEnv = &arEnv{t: t, ws: filepath.Join(root, "ws"), out: filepath.Join(root, "out"), counts: filepath.Join(root, "counts")}
	wrap := filepath.Join(root, "wrap")
	for _, d := range []string{e.ws, e.out, e.counts, e.home, e.capture, wrap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.wrapper = filepath.Join(wrap, "tether")
	if err := os.WriteFile(e.wrapper, []byte(captureWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	e.model = fakemodel.NewResponses()
	t.Cleanup(e.model.Close)
	e.write(filepath.Join(e.home, "config.toml"), fmt.Sprintf(codexConfig, e.model.URL, e.ws))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TETHER_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "CODEX_") || k == "PATH" || k == "HOME" {
			continue
		}
		e.env = append(e.env, kv)
	}
	e.env = append(e.env,
		"PATH="+wrap+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(root, "home"),
		"CODEX_HOME="+e.home, "TETHER_TEST_FAKE_KEY=sk-test-dummy",
		"TETHER_HOME="+filepath.Join(root, "tether-home"),
		"TETHER_TEST_REAL="+tetherBin, "TETHER_TEST_CAPTURE="+e.capture,
		"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.invalid",
		"GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.invalid",
	)
	e.git("init", "-q")
	e.write("README.md", "workspace\n")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "init")
	t.Cleanup(e.stop)
	return e
}

// initCodex runs tether init --agent codex and points the hooks it
// installed at the wrapper. It returns hooks.json as init wrote it.
func (e *cxEnv) initCodex() []byte {
	e.t.Helper()
	out, stderr, code := runCommand(e.t, e.command(e.wrapper, []string{"init", "--agent", "codex"}))
	if code != 0 {
		e.t.Fatalf("tether init --agent codex: exit %d\n%s%s", code, out, stderr)
	}
	hooks := filepath.Join(e.ws, ".codex", "hooks.json")
	data, err := os.ReadFile(hooks)
	if err != nil {
		e.t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(tetherBin+" agent hook --agent codex")) {
		e.t.Fatalf("tether init --agent codex wrote no hook command for %s:\n%s", tetherBin, data)
	}
	e.write(hooks, strings.ReplaceAll(string(data), tetherBin+" agent hook", e.wrapper+" agent hook"))
	return data
}

// codexCmd is `codex exec` in its own process group. Codex runs only the
// hooks a person reviewed, or, for automation, every hook with
// --dangerously-bypass-hook-trust.
func (e *cxEnv) codexCmd(args ...string) *exec.Cmd {
	cmd := e.command(e.codex, append([]string{"exec", "--dangerously-bypass-hook-trust"}, args...))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func (e *cxEnv) codexRun(args ...string) {
	e.t.Helper()
	cmd := e.codexCmd(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			e.t.Fatalf("codex %v: %v\n%s", args, err, out.String())
		}
	case <-time.After(3 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		e.t.Fatalf("codex %v did not finish\n%s", args, out.String())
	}
}

func (e *cxEnv) captured() []capturedEvent {
	return (&rcEnv{arEnv: e.arEnv, capture: e.capture}).captured()
}

// lastInputText is the text of the last message of a Responses request's
// input: what the model was just told (a hook's continuation comes as a
// user message).
func lastInputText(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Input []struct {
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for i := len(req.Input) - 1; i >= 0; i-- {
		if req.Input[i].Type == "message" {
			var b strings.Builder
			for _, c := range req.Input[i].Content {
				b.WriteString(c.Text)
			}
			return b.String()
		}
	}
	return ""
}

func TestRealCodexAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Codex CLI")
	}
	e := newCXEnv(t)
	data := e.initCodex()
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
	// command; the end of the turn after it is continued towards step two;
	// step two begins and the client is killed in the middle of it.
	marker := filepath.Join(e.out, "in-step-two")
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
	first := e.codexCmd("work on the task")
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
	if len(reqs) < 6 {
		t.Fatalf("%d agent requests in session 1\n%s", len(reqs), firstOut.String())
	}
	if got := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}"); !strings.Contains(got, "git_commit") {
		t.Errorf("checkpoint triggers %q: the git commit of a failing command took no checkpoint", got)
	}
	// The continuation reached the model: the request after "step one is
	// done" tells it to begin step two.
	mustContain(t, "the request after the end-of-turn continuation", lastInputText(t, reqs[4].Body), "hook task is not finished", "tether step begin task")
	if got := e.get("hook", "task", "{.status.agentSession.agent}"); got != "codex" {
		t.Errorf("status.agentSession.agent %q, want codex", got)
	}
	var pkg struct{ Version string }
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(e.codex), "..", "@openai", "codex", "package.json")); err != nil || json.Unmarshal(data, &pkg) != nil || pkg.Version == "" {
		t.Fatalf("the client's package.json: %v", err)
	}
	if got := e.get("hook", "task", "{.status.agentSession.agentVersion}"); got != pkg.Version {
		t.Errorf("status.agentSession.agentVersion %q, want the client's version %s", got, pkg.Version)
	}

	// Session 2: resume the same conversation after the crash.
	n := len(e.model.AgentRequests(0))
	e.model.Push(
		fakemodel.Bash("echo 'two done' > two.txt && tether step done task"),
		fakemodel.Say("step two is done"),
	)
	e.codexRun("resume", "--last", "go on")
	resumed := e.model.AgentRequests(n)
	if len(resumed) == 0 {
		t.Fatal("no model request after resume")
	}
	body := string(resumed[0].Body)
	mustContain(t, "the first request after resume", body, "DO NOT REPEAT", "The last session ended during step", `\"two\"`,
		"files it changed: `one.txt`")
	ctxs := contextsIn(resumed[0].Body)
	if len(ctxs) < 2 {
		t.Errorf("the first request after resume holds %d tether contexts, want the stale one and the new one", len(ctxs))
	}
	for i, c := range ctxs {
		first, _, _ := strings.Cut(c, `\n`)
		if !strings.Contains(first, "supersedes") {
			t.Errorf("tether context %d does not say in its first line that it supersedes earlier ones: %q", i, first)
		}
	}
	// After step two, the turn is continued towards step three; the model
	// then makes no progress, and tether's no-progress rule lets it stop.
	if got := e.get("hook", "task", `{.status.conditions[?(@.type=="AgentLoop")].status}/{.status.conditions[?(@.type=="AgentLoop")].reason}`); got != "False/NoProgress" {
		t.Errorf("AgentLoop %s after a turn without progress, want False/NoProgress", got)
	}

	// Session 3: a turn whose usage crosses the auto-compaction limit:
	// Codex compacts (PreCompact, the summary request, PostCompact, then
	// SessionStart with source compact), and the anchor leads the next
	// request; then step three to the end.
	cpBefore := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}")
	all := len(e.model.Requests())
	big := fakemodel.Bash("tether step begin task")
	big.InputTokens = 50000
	e.model.Push(
		big,
		fakemodel.Bash("echo 'three done' > three.txt && tether step done task"),
		fakemodel.Say("all done"),
	)
	e.codexRun("resume", "--last", "finish")
	if got := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}"); strings.Count(got, "pre_compact") != strings.Count(cpBefore, "pre_compact")+1 {
		t.Errorf("checkpoint triggers after the compaction %q: want one more pre_compact", got)
	}
	if got := e.get("hook", "task", "{.status.agentSession.compactions}"); got != "1" {
		t.Errorf("compactions: %q, want 1", got)
	}
	var afterCompact []byte
	compacted := false
	for _, r := range e.model.Requests()[all:] {
		if !r.Agent && bytes.Contains(r.Body, []byte("COMPACTION")) {
			compacted = true
			continue
		}
		if compacted && r.Agent {
			afterCompact = r.Body
			break
		}
	}
	if afterCompact == nil {
		t.Fatal("no compaction request, or no agent request after it")
	}
	mustContain(t, "the first request after the compaction", lastInputText(t, afterCompact), "Your context was just compacted", `Current step: "three"`)
	if got := e.get("hook", "task", "{.status.state}"); got != string(v1.HookCompleted) {
		t.Errorf("the Hook is %q at the end, want completed", got)
	}
	for _, s := range []string{"one", "two", "three"} {
		if n := e.validations("task", s); n != 1 {
			t.Errorf("step %s validated %d times, want exactly 1", s, n)
		}
	}
	if got := e.get("hook", "task", "{.status.steps[*].filesTouched}"); got != `["one.txt"] ["two.txt"] ["three.txt"]` {
		t.Errorf("the steps' files %s, want one.txt, two.txt, three.txt", got)
	}

	seen := map[string]bool{}
	for _, c := range e.captured() {
		name, _ := c.raw["hook_event_name"].(string)
		src, _ := c.raw["source"].(string)
		seen[name+"/"+src] = true
		seen[name] = true
		if len(c.out) > 0 && !json.Valid(c.out) {
			t.Errorf("%s answered what is not JSON: %q", name, c.out)
		}
	}
	for _, want := range []string{"SessionStart/startup", "SessionStart/resume", "SessionStart/compact", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"} {
		if !seen[want] {
			t.Errorf("tether agent hook never saw %s", want)
		}
	}
	if dir := os.Getenv("TETHER_CAPTURE_FIXTURES"); dir != "" {
		saveFixtures(t, dir, filepath.Dir(e.ws), e.captured())
	}

	// Uninstall gives the workspace back as it was: install created
	// hooks.json and .codex/, so both go.
	e.stop()
	e.write(filepath.Join(e.ws, ".codex", "hooks.json"), string(data))
	if out, stderr, code := runCommand(t, e.command(e.wrapper, []string{"agent", "uninstall", "codex"})); code != 0 {
		t.Fatalf("agent uninstall codex: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".codex")); !os.IsNotExist(err) {
		left, _ := os.ReadDir(filepath.Join(e.ws, ".codex"))
		t.Errorf("after uninstall .codex is still there (%v, holding %v): install created it", err, left)
	}
}

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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/fakemodel"
)

// Issue 26's acceptance scenario for Gemini CLI (pinned in
// hack/agents/install.sh), against a scripted fake Gemini API
// (fakemodel.Gemini): every assertion on what the agent was told reads the
// requests the client actually sent to the model.

var (
	geminiOnce sync.Once
	geminiPath string
	geminiErr  error
)

// geminiBin installs the pinned client with the project's script, once.
func geminiBin(t *testing.T) string {
	t.Helper()
	geminiOnce.Do(func() {
		cmd := exec.Command("../../hack/agents/install.sh", "gemini")
		if v := os.Getenv("TETHER_GEMINI_CLI_VERSION"); v != "" {
			cmd.Args = append(cmd.Args, v)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			geminiErr = fmt.Errorf("hack/agents/install.sh gemini: %w\n%s", err, stderr.String())
			return
		}
		geminiPath = strings.TrimSpace(string(out))
	})
	if geminiErr != nil {
		t.Fatal(geminiErr)
	}
	return geminiPath
}

// geminiVersion is the version of the installed client.
func geminiVersion(t *testing.T, bin string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(real)), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	return pkg.Version
}

// gcEnv is rcEnv with Gemini CLI and its fake model.
type gcEnv struct {
	*rcEnv
	gemini string
	gmodel *fakemodel.Gemini
}

// geminiUserSettings is the user settings file of the test's HOME: the
// API key's auth (the key itself is a dummy in the environment), and no
// update check, telemetry or usage statistics.
const geminiUserSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`

func newGCEnv(t *testing.T) *gcEnv {
	t.Helper()
	gemini := geminiBin(t)
	model := fakemodel.NewGemini()
	t.Cleanup(model.Close)
	// GITHUB_SHA (or SURFACE=Github) makes Gemini CLI strip the hooks'
	// environment to an allowlist, TETHER_* included.
	e := &gcEnv{gemini: gemini, gmodel: model, rcEnv: newClientEnv(t, []string{"GEMINI_", "GOOGLE_", "GITHUB_", "SURFACE"},
		// The client talks to the fake model and to nothing else.
		"GEMINI_API_KEY=dummy-test-key", "GOOGLE_GEMINI_BASE_URL="+model.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_TELEMETRY_ENABLED=false", "NO_COLOR=1",
	)}
	e.write(filepath.Join(e.home, ".gemini", "settings.json"), geminiUserSettings)
	return e
}

// initGemini runs tether init --agent gemini and points the hooks at the
// wrapper; it returns the settings file as init wrote it.
func (e *gcEnv) initGemini() []byte {
	e.t.Helper()
	e.tetherWrapped("init", "--agent", "gemini")
	settings := filepath.Join(e.ws, ".gemini", "settings.json")
	data, err := os.ReadFile(settings)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := tetherBin + " agent hook --agent gemini"
	if bytes.Count(data, []byte(cmd)) != 6 {
		e.t.Fatalf("tether init --agent gemini wrote no six hook commands for %s:\n%s", tetherBin, data)
	}
	e.write(settings, strings.ReplaceAll(string(data), cmd, e.wrapper+" agent hook --agent gemini"))
	return data
}

// geminiCmd is the client, non-interactive, every tool allowed, in its own
// process group.
func (e *gcEnv) geminiCmd(args ...string) *exec.Cmd {
	cmd := e.command(e.gemini, append(args, "--approval-mode", "yolo", "--output-format", "text"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func (e *gcEnv) geminiRun(args ...string) {
	e.t.Helper()
	runClient(e.t, e.geminiCmd(args...))
}

// geminiUserText is the last user turn of a Gemini API request (its parts
// as sent): what the model was just told.
func geminiUserText(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Contents []struct {
			Role  string          `json:"role"`
			Parts json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for i := len(req.Contents) - 1; i >= 0; i-- {
		if req.Contents[i].Role == "user" {
			return string(req.Contents[i].Parts)
		}
	}
	return ""
}

func TestRealGeminiCLIAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Gemini CLI")
	}
	e := newGCEnv(t)
	settings := filepath.Join(e.ws, ".gemini", "settings.json")
	data := e.initGemini()
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
	// command; the end of the turn is continued towards step two; step two
	// begins and the client is killed in the middle of it.
	marker := filepath.Join(e.out, "in-step-two")
	sleeper := filepath.Join(e.out, "sleeper.pid")
	t.Cleanup(func() {
		if data, err := os.ReadFile(sleeper); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	e.gmodel.Push(
		fakemodel.Shell("tether step begin task --working-on 'the first file'"),
		fakemodel.Shell("echo 'one done' > one.txt && git add one.txt && git commit -q -m one && false"),
		fakemodel.Shell("tether step done task"),
		fakemodel.Say("step one is done"),
		fakemodel.Shell("tether step begin task"),
		fakemodel.Shell("echo 'two started' > two.txt && touch "+marker+" && echo $$ > "+sleeper+" && exec sleep 600"),
	)
	first := e.geminiCmd("-p", "work on the task")
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
	reqs := e.gmodel.AgentRequests(0)
	if len(reqs) < 6 {
		t.Fatalf("%d agent requests in session 1\n%s", len(reqs), firstOut.String())
	}
	// SessionStart's context came with the prompt.
	mustContain(t, "the first request", geminiUserText(t, reqs[0].Body), contextMark, "# Recovery file: hook task", "work on the task")
	if got := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}"); !strings.Contains(got, "git_commit") {
		t.Errorf("checkpoint triggers %q: the git commit of a failing command took no checkpoint", got)
	}
	// AfterAgent's continuation reached the model as the next prompt.
	mustContain(t, "the request after the end of turn", geminiUserText(t, reqs[4].Body), "tether: hook task is not finished", "tether step begin task")
	if s := e.get("hook", "task", "{.status.agentSession.agent} {.status.agentSession.agentVersion}"); s != "gemini "+geminiVersion(t, e.gemini) {
		t.Errorf("status.agentSession agent and version %q, want gemini %s", s, geminiVersion(t, e.gemini))
	}

	// Session 2: --resume latest, the same conversation.
	n := len(e.gmodel.AgentRequests(0))
	e.gmodel.Push(
		fakemodel.Shell("echo 'two done' > two.txt && tether step done task"),
		fakemodel.Say("step two is done"),
	)
	e.geminiRun("--resume", "latest", "-p", "go on")
	resumed := e.gmodel.AgentRequests(n)
	if len(resumed) == 0 {
		t.Fatal("no model request after --resume")
	}
	mustContain(t, "the first request after --resume", geminiUserText(t, resumed[0].Body), "DO NOT REPEAT", "The last session ended during step", `\"two\"`,
		"files it changed: `one.txt`", "go on")
	if s := e.get("hook", "task", "{.status.agentSession.source}"); s != "resume" {
		t.Errorf("status.agentSession.source %q after --resume, want resume", s)
	}

	// Session 3: an answer that reports a prompt of 700,000 tokens makes the
	// client compress its history before the next model call (its threshold
	// is half of the model's 1,048,576): PreCompress with trigger auto, and
	// the compression's pre_compact checkpoint. No event follows the
	// compression: the next tool call's AfterTool carries the anchor, which
	// the client appends to the tool's result. The continuation that
	// follows has no progress to report, so the loop ends.
	cpBefore := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}")
	n = len(e.gmodel.Requests())
	big := fakemodel.Shell("git status --short")
	big.InputTokens = 700000
	e.gmodel.Push(big, fakemodel.Shell("git log --oneline -1"), fakemodel.Say("nothing to do"))
	e.geminiRun("--resume", "latest", "-p", "status?")
	compressed, results := false, 0
	for _, r := range e.gmodel.Requests()[n:] {
		if !r.Agent && strings.Contains(string(r.Body), "state_snapshot") {
			compressed = true
		}
		if !r.Agent || !compressed {
			continue
		}
		user := geminiUserText(t, r.Body)
		if !strings.Contains(user, "functionResponse") {
			continue
		}
		// The first result after the compression is git status's, whose
		// AfterTool came before it; the next is the one after.
		if results++; results == 2 {
			mustContain(t, "the request with the first tool result after the compression", user,
				"hook_context", "# Your context was just compacted: where you were", "- Task: hook task", "- Last checkpoint: ", "pre_compact")
		} else if strings.Contains(user, "Your context was just compacted") {
			t.Errorf("the anchor came before the compression's next tool call:\n%s", user)
		}
	}
	if !compressed {
		t.Fatal("the client did not compress its history")
	}
	if results < 2 {
		t.Fatalf("%d tool results after the compression, want 2", results)
	}
	if got := e.get("hook", "task", "{.status.agentSession.anchorPending}"); got != "" && got != "0" {
		t.Errorf("anchorPending %q after the anchor was given", got)
	}
	if got := e.ok("get", "checkpoints", "-o", "jsonpath={.items[*].spec.trigger}"); strings.Count(got, "pre_compact") != strings.Count(cpBefore, "pre_compact")+1 {
		t.Errorf("checkpoint triggers after the compression %q: want one more pre_compact", got)
	}
	if got := e.get("hook", "task", "{.status.agentSession.compactions}"); got != "1" {
		t.Errorf("compactions after the compression: %q, want 1", got)
	}
	if got := e.get("hook", "task", `{.status.conditions[?(@.type=="AgentLoop")].status}/{.status.conditions[?(@.type=="AgentLoop")].reason}`); got != "False/NoProgress" {
		t.Errorf("AgentLoop %s after a turn without progress, want False/NoProgress", got)
	}

	// Session 4: step three to the end.
	e.gmodel.Push(
		fakemodel.Shell("tether step begin task && echo 'three done' > three.txt && tether step done task"),
		fakemodel.Say("all done"),
	)
	e.geminiRun("--resume", "latest", "-p", "finish")
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
		for _, k := range []string{"source", "trigger"} {
			if v, ok := c.raw[k].(string); ok {
				seen[name+"/"+v] = true
			}
		}
		seen[name] = true
		if !json.Valid(c.out) {
			t.Errorf("the answer to %s is not one JSON object: %q", name, c.out)
		}
	}
	for _, want := range []string{"SessionStart/startup", "SessionStart/resume", "BeforeAgent", "AfterTool", "PreCompress/auto", "AfterAgent", "SessionEnd"} {
		if !seen[want] {
			t.Errorf("tether agent hook never saw %s", want)
		}
	}
	e.hookTimes()
	if dir := os.Getenv("TETHER_CAPTURE_FIXTURES"); dir != "" {
		saveGeminiFixtures(t, dir, filepath.Dir(e.ws), e.captured())
	}

	// Uninstall gives the workspace back as it was: install created the
	// file and .gemini/, so both go.
	e.stop()
	e.write(settings, string(data))
	e.tetherWrapped("agent", "uninstall", "gemini")
	if _, err := os.Stat(filepath.Join(e.ws, ".gemini")); !os.IsNotExist(err) {
		left, _ := os.ReadDir(filepath.Join(e.ws, ".gemini"))
		t.Errorf("after uninstall .gemini is still there (%v, holding %v): install created it", err, left)
	}
}

var pgid = regexp.MustCompile(`Process Group PGID: \d+`)

// saveGeminiFixtures writes one captured input per event (with its source,
// trigger or tool) into dir, for internal/agent/geminihook's tests:
// TETHER_CAPTURE_FIXTURES=DIR. The test's root becomes /home/agent.
func saveGeminiFixtures(t *testing.T, dir, root string, cs []capturedEvent) {
	t.Helper()
	for _, c := range cs {
		name, _ := c.raw["hook_event_name"].(string)
		for _, k := range []string{"source", "trigger", "tool_name"} {
			if v, ok := c.raw[k].(string); ok {
				name += "-" + v
			}
		}
		p := filepath.Join(dir, name+".json")
		if _, err := os.Stat(p); err == nil {
			continue
		}
		var b bytes.Buffer
		_ = json.Indent(&b, c.in, "", "  ")
		out := bytes.ReplaceAll(b.Bytes(), []byte(root), []byte("/home/agent"))
		out = pgid.ReplaceAll(out, []byte("Process Group PGID: 4242"))
		if err := os.WriteFile(p, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/tether-dev/tether/internal/testing/testenv"
)

// xssGoal and xssNote are untrusted text that would run script if the
// console rendered it as markup.
const (
	xssGoal = `<script>window.__xss = 1; alert("goal")</script> ship it`
	xssNote = `<img src=x onerror="window.__xss = 2; alert('img')">`
)

// chromium is the headless browser the console tests drive. They are
// skipped only when TETHER_SKIP_BROWSER_TESTS says so; without a chromium
// they fail and say how to install one.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("TETHER_SKIP_BROWSER_TESTS") != "" {
		t.Skip("TETHER_SKIP_BROWSER_TESTS is set")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH for the console's browser tests: install it with hack/browser/install.sh " +
		"(make test does), or set TETHER_SKIP_BROWSER_TESTS=1 to skip them")
	return ""
}

// artifactDir is where a test keeps its screenshots: under
// $TETHER_ARTIFACTS when set, else the test's artifact directory (kept
// with go test -artifacts).
func artifactDir(t *testing.T) string {
	t.Helper()
	if root := os.Getenv("TETHER_ARTIFACTS"); root != "" {
		dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.ArtifactDir()
}

// consoleEnv is a backend with a console on it: the CLI's arguments for
// it, a git workspace, and the console's URL once tether run serves it.
type consoleEnv struct {
	t    *testing.T
	args []string
	env  []string
	ws   string
	url  string
	run  *exec.Cmd
	out  *syncBuffer
}

func (e *consoleEnv) tether(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(tetherBin, append(args, e.args...)...)
	cmd.Dir = e.ws
	cmd.Env = append(os.Environ(), e.env...)
	return runCommand(e.t, cmd)
}

func (e *consoleEnv) ok(args ...string) string {
	e.t.Helper()
	out, stderr, code := e.tether(args...)
	if code != 0 {
		e.t.Fatalf("tether %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

// start runs tether run with flags and waits for the console's URL in its log.
func (e *consoleEnv) start(flags ...string) {
	e.t.Helper()
	cmd := exec.Command(tetherBin, append(append([]string{"run"}, e.args...), flags...)...)
	cmd.Dir = e.ws
	cmd.Env = append(os.Environ(), e.env...)
	e.out = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = e.out, e.out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.run = cmd
	e.t.Cleanup(func() { e.stop() })
	url := regexp.MustCompile(`"msg":"serving the console".*"url":"(http://127\.0\.0\.1:[0-9]+/)"`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := url.FindStringSubmatch(e.out.String()); m != nil {
			e.url = m[1]
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("tether run logged no console URL:\n%s", e.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *consoleEnv) stop() {
	if e.run == nil || e.run.ProcessState != nil {
		return
	}
	_ = e.run.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = e.run.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = e.run.Process.Kill()
		<-done
	}
}

func (e *consoleEnv) write(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.ws, name), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// hookYAML is a Hook in e's workspace; extra is more of its spec.
func (e *consoleEnv) hookYAML(name, goal string, steps []string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  goal: %q\n  workspace: %s\n%s  steps:\n", name, goal, e.ws, extra)
	for _, s := range steps {
		b.WriteString("  - " + s + "\n")
	}
	return b.String()
}

// populate creates a Hook in every state a person sees: pending,
// running, validating, awaiting a human, recovering, completed, failed
// and abandoned, and one whose goal and texts are markup.
func (e *consoleEnv) populate() {
	e.t.Helper()
	plain := []string{"name: build", "name: test"}
	docs := []string{
		e.hookYAML("pending", "wait for an agent", plain, ""),
		e.hookYAML("running", "work on it", plain, ""),
		e.hookYAML("validating", "validate it", []string{"name: check\n    validate:\n    - command: [sleep, \"120\"]"}, ""),
		e.hookYAML("human", "ask a person", plain, ""),
		e.hookYAML("recovering", "lose the agent", plain, "  staleAfter: 2s\n"),
		e.hookYAML("done", "finish it", []string{"name: only\n    validate:\n    - command: [\"true\"]"}, ""),
		e.hookYAML("failed", "fail it", plain, ""),
		e.hookYAML("abandoned", "drop it", plain, ""),
		e.hookYAML("xss", xssGoal, []string{"name: build\n    description: " + fmt.Sprintf("%q", xssNote), "name: test"}, ""),
		// An agent that reports by heartbeat, which both backends judge
		// alike (no process, no Pod).
		"apiVersion: agents.tether.dev/v1alpha1\nkind: Worker\nmetadata:\n  name: agent-1\n  namespace: default\nspec:\n  heartbeatTimeout: 10m\n",
	}
	path := filepath.Join(e.t.TempDir(), "hooks.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.ok("apply", "-f", path)
	for _, h := range []string{"running", "validating", "human", "recovering", "done", "failed", "abandoned", "xss"} {
		e.ok("step", "begin", h)
	}
	e.ok("worker", "heartbeat", "agent-1")
	e.ok("await", "human", "--reason", "which database?")
	e.ok("await", "xss", "--reason", xssNote)
	e.ok("step", "done", "done")
	e.ok("fail", "failed", "--reason", "the tests cannot pass")
	e.ok("abandon", "abandoned")
	e.write("notes.txt", "first line\n")
	e.ok("checkpoint", "running", "-m", "first")
	e.write("notes.txt", "first line\nsecond line\n")
	e.ok("checkpoint", "running", "-m", xssNote)
	// step done runs its validation (sleep 120) until the test kills it.
	validate := exec.Command(tetherBin, append([]string{"step", "done", "validating"}, e.args...)...)
	validate.Dir, validate.Env = e.ws, append(os.Environ(), e.env...)
	validate.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuffer{}
	validate.Stdout, validate.Stderr = out, out
	if err := validate.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = syscall.Kill(-validate.Process.Pid, syscall.SIGKILL); _ = validate.Wait() })
	deadline := time.Now().Add(2 * time.Minute)
	for e.ok("get", "hook", "validating", "-o", "jsonpath={.status.state}") != "step_validating" {
		if time.Now().After(deadline) {
			e.t.Fatalf("step done never moved the Hook to step_validating:\n%s", out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// browser drives headless Chromium; every JavaScript dialog it opens (an
// alert from injected script) is recorded and dismissed.
type browser struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	mu      sync.Mutex
	dialogs []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, dir: artifactDir(t)}
	opened := make(chan struct{}, 16)
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.mu.Lock()
			b.dialogs = append(b.dialogs, d.Message)
			b.mu.Unlock()
			select {
			case opened <- struct{}{}:
			default:
			}
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	// A dialog blocks the page: dismiss it, from outside the listener.
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-opened:
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}
		}
	}()
	return b
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.failed(what, err)
	}
}

func (b *browser) failed(what string, err error) {
	b.t.Helper()
	html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML("html"))
	b.shot(strings.ReplaceAll(what, " ", "-") + "-failed")
	b.t.Fatalf("%s: %v\npage:\n%s", what, err, html)
}

// waitJS waits until expr is true in the page.
func (b *browser) waitJS(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(45*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		b.failed(what, err)
	}
}

// eval evaluates expr in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.failed("evaluate "+expr, err)
	}
	return v
}

// text is the text of the element sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	if err != nil {
		b.failed("read "+sel, err)
	}
	return v
}

func (b *browser) shot(name string) {
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Error(err)
		return
	}
	b.t.Logf("screenshot %s", path)
}

func stateIs(hook, state string) string {
	return fmt.Sprintf(`(document.querySelector('tr[data-hook="default/%s"] .state') || {}).textContent === %q`, hook, state)
}

// testConsoleInBrowser is the browser test, on whichever backend e is.
func testConsoleInBrowser(t *testing.T, e *consoleEnv) {
	b := newBrowser(t)
	e.populate()

	b.do("open the overview", chromedp.Navigate(e.url), chromedp.WaitVisible("#hooks"))
	for hook, state := range map[string]string{
		"pending": "step_pending", "running": "step_running", "validating": "step_validating", "human": "awaiting_human",
		"recovering": "recovering", "done": "completed", "failed": "failed", "abandoned": "abandoned", "xss": "awaiting_human",
	} {
		b.waitJS("the overview shows "+hook+" "+state, stateIs(hook, state))
	}
	order := eval[[]string](b, `Array.from(document.querySelectorAll('#hooks tbody tr')).map(r => r.dataset.hook.split('/')[1])`)
	if len(order) < 4 || order[0] != "human" || order[1] != "xss" || order[2] != "recovering" || order[3] != "failed" {
		t.Errorf("the overview is not sorted by what needs a person first: %v", order)
	}
	b.shot("overview")

	// A transition made by the CLI appears without a reload.
	eval[bool](b, `window.__token = "same page"; true`)
	e.ok("step", "begin", "pending")
	b.waitJS("the overview follows step begin", stateIs("pending", "step_running"))
	token := eval[string](b, `window.__token || "reloaded"`)
	if token != "same page" {
		t.Errorf("the overview reloaded to show the change (token %q)", token)
	}

	// A filter is a link.
	b.do("filter on failed", chromedp.Navigate(e.url+"?state=failed"), chromedp.WaitVisible("#hooks"))
	rows := eval[int](b, `document.querySelectorAll('#hooks tbody tr[data-hook]').length`)
	if rows != 1 {
		t.Errorf("?state=failed shows %d Hooks, want 1", rows)
	}

	// A Hook's page follows it too.
	b.do("open a Hook", chromedp.Navigate(e.url), chromedp.WaitVisible("#hooks"),
		chromedp.Click(`tr[data-hook="default/running"] a.name`, chromedp.NodeVisible), chromedp.WaitVisible("#hook-state"))
	b.waitJS("the Hook page shows its checkpoints", `document.querySelectorAll('#checkpoints tr[data-checkpoint]').length === 2`)
	b.shot("hook")
	eval[bool](b, `window.__token = "hook page"; true`)
	e.ok("await", "running", "--reason", "a person must choose")
	b.waitJS("the Hook page follows await", `document.getElementById('hook-state').textContent === 'awaiting_human'`)
	token = eval[string](b, `window.__token || "reloaded"`)
	if token != "hook page" {
		t.Errorf("the Hook page reloaded to show the change (token %q)", token)
	}

	// A checkpoint's diff against the one before it.
	b.do("open a checkpoint diff", chromedp.Click(`tr[data-checkpoint="running-2"] a.diff-previous`, chromedp.NodeVisible), chromedp.WaitVisible("#diff-patch"))
	patch := b.text("#diff-patch")
	if !strings.Contains(patch, "+second line") || strings.Contains(patch, "+first line") {
		t.Errorf("the diff against the previous checkpoint is not the second line alone:\n%s", patch)
	}
	b.shot("diff-previous")
	b.do("open the diff against the workspace", chromedp.Navigate(e.url+"hooks/default/running/diff/running-1?against=workspace"), chromedp.WaitVisible("#diff-patch"))
	patch = b.text("#diff-patch")
	if !strings.Contains(patch, "+second line") {
		t.Errorf("the diff against the workspace lacks the second line:\n%s", patch)
	}
	b.shot("diff-workspace")

	// A passed step's receipt, verified with the receipt key.
	b.do("open the completed Hook", chromedp.Navigate(e.url+"hooks/default/done"), chromedp.WaitVisible("#steps"))
	if receipt := b.text("#steps .receipt"); !strings.Contains(receipt, "true exit 0") || !strings.HasSuffix(strings.TrimSpace(receipt), ": verified") {
		t.Errorf("the receipt of the passed step reads %q, want it verified", receipt)
	}
	if verdict := b.text("#steps .verdict"); !strings.HasPrefix(verdict, "verified: 1 of 1 validate commands") {
		t.Errorf("the passed step's verdict reads %q", verdict)
	}

	// Markup in a goal, a description, a reason, a checkpoint note is text.
	b.do("open the Hook with markup", chromedp.Navigate(e.url+"hooks/default/xss"), chromedp.WaitVisible("#goal"))
	goal := b.text("#goal")
	if goal != xssGoal {
		t.Errorf("the goal reads %q, want the text %q", goal, xssGoal)
	}
	injected := eval[int](b, `document.querySelectorAll('#content script, #content img').length + (window.__xss ? 100 : 0)`)
	if injected != 0 {
		t.Errorf("markup from the Hook became elements or ran (%d)", injected)
	}
	body := b.text("#content")
	if !strings.Contains(body, xssNote) {
		t.Errorf("the step description and reason are not shown as text")
	}
	b.shot("hook-markup")
	b.do("open the Hook with a markup checkpoint note", chromedp.Navigate(e.url+"hooks/default/running"), chromedp.WaitVisible("#checkpoints"))
	injected = eval[int](b, `document.querySelectorAll('#content script, #content img').length + (window.__xss ? 100 : 0)`)
	if injected != 0 {
		t.Errorf("markup from a checkpoint note became elements or ran (%d)", injected)
	}

	// A Worker's page, reached from the overview, follows its heartbeats.
	b.do("open the overview", chromedp.Navigate(e.url), chromedp.WaitVisible("#workers"))
	b.do("open a Worker", chromedp.Click(`tr[data-worker="default/agent-1"] a.name`, chromedp.NodeVisible), chromedp.WaitVisible("#worker-phase"))
	b.waitJS("the Worker page shows it running", `document.getElementById('worker-phase').textContent === 'Running'`)
	b.shot("worker")

	// The console says when it loses the stream.
	b.do("open the overview", chromedp.Navigate(e.url), chromedp.WaitVisible("#hooks"))
	b.waitJS("the page is live", `!document.getElementById('live').hidden`)
	e.stop()
	b.waitJS("the banner says the connection is lost", `!document.getElementById('conn').hidden`)
	b.shot("connection-lost")

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dialogs) > 0 {
		t.Errorf("script from a Hook ran: dialogs %q", b.dialogs)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func TestConsoleInBrowserOnTheLocalStore(t *testing.T) {
	chromium(t)
	root := t.TempDir()
	e := &consoleEnv{t: t, ws: filepath.Join(root, "ws"), args: []string{"--store", filepath.Join(root, "store")},
		env: []string{"TETHER_HOME=" + filepath.Join(root, "home")}}
	if err := os.MkdirAll(e.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, e.ws)
	e.start("--metrics-bind-address", "127.0.0.1:0")
	testConsoleInBrowser(t, e)
}

func TestConsoleInBrowserOnACluster(t *testing.T) {
	chromium(t)
	env := testenv.Start(t)
	root := t.TempDir()
	e := &consoleEnv{t: t, ws: filepath.Join(root, "ws"), args: []string{"--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default"},
		env: []string{"TETHER_HOME=" + filepath.Join(root, "home")}}
	if err := os.MkdirAll(e.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, e.ws)
	e.start("--console-bind-address", "127.0.0.1:0")
	testConsoleInBrowser(t, e)
}

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
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// agentEnv is one test's store, tether home and git workspace.
type agentEnv struct {
	t         *testing.T
	store     string
	home      string
	workspace string
	client    client.Client
	// procTag marks every process the test starts, so that its end waits
	// for the ones that go on in the background.
	procTag string
}

func newAgentEnv(t *testing.T) *agentEnv {
	t.Helper()
	root := t.TempDir()
	e := &agentEnv{t: t, store: filepath.Join(root, "store"), home: filepath.Join(root, "home"), workspace: filepath.Join(root, "ws"),
		procTag: testsupport.TagProcesses(t, time.Minute)}
	e.client = openStore(t, e.store).Client()
	if err := os.MkdirAll(e.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git("init", "-q")
	e.write("README.md", "workspace\n")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "init")
	return e
}

func (e *agentEnv) git(args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir, cmd.Env = e.workspace, append(os.Environ(), e.procTag)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (e *agentEnv) write(name, content string) {
	e.t.Helper()
	path := filepath.Join(e.workspace, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *agentEnv) command(args ...string) *exec.Cmd {
	cmd := exec.Command(tetherBin, args...)
	cmd.Dir = e.workspace
	cmd.Env = append(os.Environ(), "TETHER_STORE="+e.store, "TETHER_HOME="+e.home, "TETHER_ACTOR=agent-1", e.procTag)
	return cmd
}

// tether runs the binary as the agent would and returns its output and exit code.
func (e *agentEnv) tether(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return runCommand(e.t, e.command(args...))
}

// ok runs tether and fails the test unless it exits 0.
func (e *agentEnv) ok(args ...string) string {
	e.t.Helper()
	out, stderr, code := e.tether(args...)
	if code != 0 {
		e.t.Fatalf("tether %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

func (e *agentEnv) createHook(name string, maxAttempts int32, staleAfter time.Duration, steps ...v1.Step) {
	e.t.Helper()
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.HookSpec{Goal: "test the agent verbs", Workspace: e.workspace, Steps: steps, MaxAttempts: maxAttempts},
	}
	if staleAfter > 0 {
		h.Spec.StaleAfter = &metav1.Duration{Duration: staleAfter}
	}
	if err := e.client.Create(context.Background(), h); err != nil {
		e.t.Fatal(err)
	}
}

func (e *agentEnv) hook(name string) *v1.Hook {
	e.t.Helper()
	h := &v1.Hook{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

func step(name string, timeout time.Duration, argv ...string) v1.Step {
	c := v1.ValidationCommand{Command: argv}
	if timeout > 0 {
		c.Timeout = &metav1.Duration{Duration: timeout}
	}
	return v1.Step{Name: name, Validate: []v1.ValidationCommand{c}}
}

func wantState(t *testing.T, h *v1.Hook, state v1.HookState, index, attempt int32) {
	t.Helper()
	cs := h.Status.CurrentStep
	if h.Status.State != state || cs == nil || cs.Index != index || cs.Attempt != attempt {
		t.Fatalf("hook is %s at %+v, want %s at step %d attempt %d", h.Status.State, cs, state, index, attempt)
	}
}

func TestAgentThreeStepTask(t *testing.T) {
	e := newAgentEnv(t)
	e.write("go.mod", "module example.invalid/calc\n\ngo 1.22\n")
	e.write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "calc")
	e.createHook("calc", 3, 0,
		v1.Step{Name: "add-test", Validate: []v1.ValidationCommand{
			{Command: []string{"go", "vet", "./..."}},
			{Command: []string{"go", "test", "-count=1", "./..."}, Timeout: &metav1.Duration{Duration: 2 * time.Minute}},
		}},
		step("docs", 0, "test", "-s", "CALC.md"),
		step("changelog", 0, "grep", "-q", "Add", "CHANGELOG.md"))

	out := e.ok("step", "begin", "calc", "--working-on", "writing the test")
	e.write("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"2+3\")\n\t}\n}\n")
	if !strings.Contains(out, `hook.agents.tether.dev/calc step "add-test" (1/3) running, attempt 1`) || !strings.Contains(out, "next:") {
		t.Errorf("step begin printed %q", out)
	}
	h := e.hook("calc")
	wantState(t, h, v1.HookStepRunning, 0, 1)
	if cs := h.Status.CurrentStep; cs.WorkingOn != "writing the test" || len(cs.FilesTouched) != 0 || cs.BaseTree == "" {
		t.Errorf("currentStep %+v: want workingOn, a base tree and no file changed yet", cs)
	}
	if h.Status.LastHeartbeat == nil {
		t.Error("step begin did not set lastHeartbeat")
	}

	e.ok("step", "done", "calc")
	h = e.hook("calc")
	wantState(t, h, v1.HookStepPending, 1, 1)
	if r := h.Status.Steps[0]; r.Phase != v1.StepPassed || len(r.Receipts) != 2 || r.Receipts[1].ExitCode != 0 || r.Receipts[1].Envelope == nil {
		t.Fatalf("step 1 result %+v: want Passed with two signed receipts", r)
	}
	if got := h.Status.Steps[0].FilesTouched; !slices.Equal(got, []string{"calc_test.go"}) {
		t.Errorf("step 1 changed %q, want [calc_test.go]", got)
	}

	e.write("CALC.md", "Add adds.\n")
	e.ok("step", "begin", "calc", "--files", "CALC.md")
	if got := e.hook("calc").Status.CurrentStep.FilesTouched; !slices.Equal(got, []string{"CALC.md"}) {
		t.Errorf("--files recorded %q", got)
	}
	e.ok("step", "done", "calc")
	e.ok("heartbeat", "calc")
	e.write("CHANGELOG.md", "- Add\n")
	e.ok("step", "begin", "calc")
	out = e.ok("step", "done", "calc")
	if !strings.Contains(out, "hook.agents.tether.dev/calc completed") {
		t.Errorf("last step done printed %q", out)
	}
	h = e.hook("calc")
	if h.Status.State != v1.HookCompleted || h.Status.TerminalAt == nil {
		t.Fatalf("hook is %s, want completed", h.Status.State)
	}
	state, _, _, err := hookfsm.Fold(h.Status.History)
	if err != nil || state != v1.HookCompleted {
		t.Fatalf("history folds to %s, %v", state, err)
	}
	for _, entry := range h.Status.History {
		if entry.Event != string(hookfsm.Initialize) && entry.Actor != "agent-1" {
			t.Errorf("history entry %+v: actor is not $TETHER_ACTOR", entry)
		}
	}

	out = e.ok("receipts", "verify", "calc")
	if steps, receipts := verifiedRows(out); steps != 3 || receipts != 4 {
		t.Errorf("receipts verify: %d steps and %d receipts verified, want 3 and 4:\n%s", steps, receipts, out)
	}

	if rec := e.ok("recover", "calc"); strings.Count(rec, "signature: verified") != 4 || strings.Contains(rec, "INVALID") {
		t.Errorf("recover does not show the four receipts verified:\n%s", rec)
	}

	// The PEM public key alone verifies every stored envelope, per docs/receipts.md.
	block, _ := pem.Decode([]byte(e.ok("receipts", "pubkey", "calc")))
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatal("receipts pubkey printed no PEM public key")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := key.(ed25519.PublicKey)
	for _, s := range h.Status.Steps {
		for _, r := range s.Receipts {
			payload, _ := base64.StdEncoding.DecodeString(r.Envelope.Payload)
			sig, _ := base64.StdEncoding.DecodeString(r.Envelope.Signatures[0].Sig)
			pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(r.Envelope.PayloadType), r.Envelope.PayloadType, len(payload), payload)
			if !ed25519.Verify(pub, []byte(pae), sig) {
				t.Errorf("step %s: the envelope does not verify with the PEM key alone", s.Name)
			}
			opensslVerify(t, pem.EncodeToMemory(block), []byte(pae), sig)
			if !strings.Contains(string(payload), `"step":"`+s.Name+`"`) || !strings.Contains(string(payload), string(h.UID)) {
				t.Errorf("payload %s does not name the step and the hook uid", payload)
			}
		}
	}
}

func TestAgentFailingValidationRetriesThenFails(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("flaky", 2, 0, step("fix", 0, "sh", "-c", "echo broken >&2; exit 3"))
	e.ok("step", "begin", "flaky")

	_, stderr, code := e.tether("step", "done", "flaky")
	if code != 1 || !strings.Contains(stderr, `exited 3`) || !strings.Contains(stderr, "broken") {
		t.Fatalf("failing step done: exit %d, stderr %q; want exit 1 naming the exit code", code, stderr)
	}
	h := e.hook("flaky")
	wantState(t, h, v1.HookStepRunning, 0, 2)
	r := h.Status.Steps[0].Receipts
	if len(r) != 1 || r[0].ExitCode != 3 || r[0].Attempt != 1 || r[0].Envelope == nil {
		t.Fatalf("receipts after the failure: %+v", r)
	}

	_, _, code = e.tether("step", "done", "flaky")
	h = e.hook("flaky")
	if code != 1 || h.Status.State != v1.HookFailed || h.Status.Steps[0].Phase != v1.StepFailed {
		t.Fatalf("second failure: exit %d, state %s; want exit 1 and failed after maxAttempts 2", code, h.Status.State)
	}
	if r := h.Status.Steps[0].Receipts; len(r) != 1 || r[0].Attempt != 2 {
		t.Fatalf("receipts after the last failure: %+v", r)
	}
	e.ok("receipts", "verify", "flaky")
}

func TestAgentInvalidTransitionsChangeNothing(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("task", 3, 0, step("one", 0, "true"))
	e.createHook("done", 3, 0, step("one", 0, "true"))
	e.ok("abandon", "done", "--reason", "superseded")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"step", "done", "task"}, 1, `cannot "step done" hook "task": state is initializing`},
		{[]string{"resume", "task"}, 1, `cannot "resume"`},
		{[]string{"await", "task"}, 1, "--reason is required"},
		{[]string{"fail", "task"}, 1, "--reason is required"},
		{[]string{"fail", "task", "--reason", " "}, 1, "--reason"},
		{[]string{"step", "begin", "task", "--files", "a,,b"}, 1, "--files"},
		{[]string{"step", "begin", "task", "-o", "xml"}, 1, "--output"},
		{[]string{"step", "begin", "task", "done"}, 1, "at most one argument"},
		{[]string{"step", "begin", "done"}, 1, "state is abandoned, which is terminal"},
		{[]string{"heartbeat", "done"}, 1, "terminal"},
		{[]string{"step", "begin", "absent"}, 2, `"absent" not found`},
		{[]string{"receipts", "verify", "absent"}, 2, "not found"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			before := []*v1.Hook{e.hook("task"), e.hook("done")}
			_, stderr, code := e.tether(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d naming %q", code, stderr, tt.code, tt.want)
			}
			for i, after := range []*v1.Hook{e.hook("task"), e.hook("done")} {
				if after.ResourceVersion != before[i].ResourceVersion {
					t.Fatalf("hook %s changed: resourceVersion %s -> %s", after.Name, before[i].ResourceVersion, after.ResourceVersion)
				}
			}
		})
	}

	// The verbs that are valid here work, and print kubectl-style output.
	out := e.ok("await", "task", "--reason", "which API version?", "-o", "name")
	if strings.TrimSpace(out) != "hook.agents.tether.dev/task" {
		t.Errorf("-o name printed %q", out)
	}
	out = e.ok("resume", "task", "-o", "jsonpath={.status.state}")
	if out != "step_pending" {
		t.Errorf("resume -o jsonpath printed %q", out)
	}
	e.ok("fail", "task", "--reason", "gave up")
	if h := e.hook("task"); h.Status.State != v1.HookFailed || h.Status.History[len(h.Status.History)-1].Message != "gave up" {
		t.Fatalf("fail: %s, history %+v", h.Status.State, h.Status.History)
	}

	// Each of those transitions recorded its Event, naming the actor.
	events := e.ok("events") + e.ok("events", "--for", "hook/done")
	for _, want := range []string{
		`Warning\s+Abandoned\s+Hook/done\s+abandon by agent-1`,
		`Normal\s+AwaitingHuman\s+Hook/task\s+await by agent-1`,
		`Normal\s+Resumed\s+Hook/task\s+resume by agent-1`,
		`Warning\s+Failed\s+Hook/task\s+fail by agent-1`,
	} {
		if !regexp.MustCompile(want).MatchString(events) {
			t.Errorf("events lack /%s/:\n%s", want, events)
		}
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d of the validation's group survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether pid has exited and waits to be reaped: an orphan
// is reaped by init, which in a container may never do it.
func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(data), ") ")
	return ok && strings.HasPrefix(after, "Z")
}

// TestAgentValidationTimeoutKillsTheProcessGroup: at the timeout, the
// validation's background child and a grandchild that left its process
// group with setsid are killed too.
func TestAgentValidationTimeoutKillsTheProcessGroup(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("slow", 3, 0, step("wait", 700*time.Millisecond, "sh", "-c",
		"sleep 60 & echo $! > grandchild.pid; setsid sh -c 'echo $$ > session.pid; sleep 60' & wait"))
	e.ok("step", "begin", "slow", "--files", "x")
	start := time.Now()
	_, stderr, code := e.tether("step", "done", "slow")
	if code != 1 || !strings.Contains(stderr, "timed out") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming the timeout", code, stderr)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Fatalf("step done took %v with a 700ms timeout", elapsed)
	}
	for _, f := range []string{"grandchild.pid", "session.pid"} {
		waitDead(t, readPid(t, filepath.Join(e.workspace, f)))
	}
	h := e.hook("slow")
	wantState(t, h, v1.HookStepRunning, 0, 2)
	if r := h.Status.Steps[0].Receipts; len(r) != 1 || r[0].ExitCode != -1 {
		t.Fatalf("receipts %+v: want one with exit code -1", r)
	}
}

func TestAgentTamperedReceiptIsNamed(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("signed", 3, 0, step("one", 0, "true"), step("two", 0, "echo", "two"), step("three", 0, "true"))
	for range 2 {
		e.ok("step", "begin", "signed")
		e.ok("step", "done", "signed")
	}
	e.ok("receipts", "verify", "signed")

	tests := []struct {
		name   string
		mutate func(r *v1.Receipt)
		want   string
	}{
		{"payload byte", func(r *v1.Receipt) {
			p := []byte(r.Envelope.Payload)
			p[20] ^= 0x01
			r.Envelope.Payload = string(p)
		}, "does not verify"},
		{"signature byte", func(r *v1.Receipt) {
			sig, _ := base64.StdEncoding.DecodeString(r.Envelope.Signatures[0].Sig)
			sig[0] ^= 0x80
			r.Envelope.Signatures[0].Sig = base64.StdEncoding.EncodeToString(sig)
		}, "does not verify"},
		{"exit code", func(r *v1.Receipt) { r.ExitCode = 1 }, "exitCode"},
		{"stdout hash", func(r *v1.Receipt) { r.StdoutSHA256 = strings.Repeat("0", 64) }, "stdoutSHA256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := e.hook("signed")
			orig := *h.Status.Steps[1].Receipts[0].DeepCopy()
			tt.mutate(&h.Status.Steps[1].Receipts[0])
			if err := e.client.Status().Update(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := e.tether("receipts", "verify", "signed")
			if code != 1 || !strings.Contains(stderr, "status.steps[1].receipts[0]") || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "1 of 3 steps") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s\nwant exit 1 naming status.steps[1].receipts[0] and %q", code, out, stderr, tt.want)
			}
			if !strings.Contains(out, "verified") {
				t.Errorf("the untouched receipt is not listed as verified:\n%s", out)
			}
			if rec, _, _ := e.tether("recover", "signed"); strings.Count(rec, "signature: INVALID") != 1 || strings.Count(rec, "signature: verified") != 1 {
				t.Errorf("recover does not flag the tampered receipt alone:\n%s", rec)
			}
			h = e.hook("signed")
			h.Status.Steps[1].Receipts[0] = orig
			if err := e.client.Status().Update(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := e.tether("receipts", "verify", "signed"); code != 0 {
				t.Fatalf("the restored receipt does not verify: %s", stderr)
			}
		})
	}
}

// TestReceiptsVerifyWholeClaim edits a Hook's status as someone without
// the key could: a failed step marked passed, receipts swapped between
// steps or taken from another Hook, duplicated, dropped or reordered. Each
// signature still verifies on its own; receipts verify exits 1 naming the
// step and what is wrong, and recover warns not to trust the step.
func TestReceiptsVerifyWholeClaim(t *testing.T) {
	e := newAgentEnv(t)
	two := v1.Step{Name: "one", Validate: []v1.ValidationCommand{{Command: []string{"true"}}, {Command: []string{"echo", "one"}}}}
	e.createHook("claim", 1, 0, two, step("two", 0, "test", "-e", "absent"))
	e.createHook("other", 1, 0, two, step("two", 0, "true"))
	for _, name := range []string{"claim", "other"} {
		e.ok("step", "begin", name)
		e.ok("step", "done", name)
		e.ok("step", "begin", name)
	}
	if _, stderr, code := e.tether("step", "done", "claim"); code != 1 || e.hook("claim").Status.State != v1.HookFailed {
		t.Fatalf("the failing step: exit %d, %s", code, stderr)
	}
	out := e.ok("receipts", "verify", "claim")
	if steps, receipts := verifiedRows(out); steps != 1 || receipts != 3 {
		t.Fatalf("untouched: %d steps and %d receipts verified, want 1 and 3:\n%s", steps, receipts, out)
	}
	pristine := e.hook("claim").Status.DeepCopy()
	otherReceipts := e.hook("other").Status.Steps[0].Receipts

	tests := []struct {
		name string
		edit func(st *v1.HookStatus)
		want []string
	}{
		{"forged pass", func(st *v1.HookStatus) {
			st.Steps[1].Phase, st.State = v1.StepPassed, v1.HookCompleted
		}, []string{`step "two", status.steps[1].receipts[0]: exit code 1 in a passed step`}},
		{"swapped between steps", func(st *v1.HookStatus) {
			st.Steps[0].Receipts[0], st.Steps[1].Receipts[0] = st.Steps[1].Receipts[0], st.Steps[0].Receipts[0]
		}, []string{`step "one", status.steps[0].receipts[0]: receipt of step "two" stored under step "one"`,
			`step "one" (status.steps[0]): no receipt of validate command 1 of 2 (true)`}},
		{"taken from another hook", func(st *v1.HookStatus) { st.Steps[0].Receipts = otherReceipts },
			[]string{`step "one", status.steps[0].receipts[0]: statement names hook default/other`}},
		{"duplicated", func(st *v1.HookStatus) {
			rs := st.Steps[0].Receipts
			st.Steps[0].Receipts = []v1.Receipt{rs[0], rs[1], rs[1]}
		}, []string{`step "one", status.steps[0].receipts[2]: a second receipt of command 2 of 2 (echo one)`}},
		{"dropped", func(st *v1.HookStatus) { st.Steps[0].Receipts = st.Steps[0].Receipts[1:] },
			[]string{`step "one" (status.steps[0]): no receipt of validate command 1 of 2 (true)`}},
		{"reordered", func(st *v1.HookStatus) { slices.Reverse(st.Steps[0].Receipts) },
			[]string{`step "one", status.steps[0].receipts[1]: receipt of command 1 of 2 (true) stored after the receipt of command 2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := e.hook("claim")
			h.Status = *pristine.DeepCopy()
			tt.edit(&h.Status)
			if err := e.client.Status().Update(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := e.tether("receipts", "verify", "claim")
			if code != 1 || !strings.Contains(stderr, "do not support its status") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s\nwant exit 1", code, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if !strings.Contains(out, "INVALID") {
				t.Errorf("the step table shows no INVALID step:\n%s", out)
			}
			rec, _, _ := e.tether("recover", "claim")
			if !strings.Contains(rec, "## WARNING: the receipts do not support the status") || !strings.Contains(rec, tt.want[0]) {
				t.Errorf("recover does not warn about %q:\n%s", tt.want[0], rec)
			}
		})
	}
}

// verifiedRows counts the rows of `receipts verify` output that say
// verified: in its step table, and in its receipt table.
func verifiedRows(out string) (steps, receipts int) {
	tables := strings.SplitN(out, "\n\n", 2)
	count := func(table string) int {
		n := 0
		for _, line := range strings.Split(table, "\n")[1:] {
			if strings.Contains(line, " verified") {
				n++
			}
		}
		return n
	}
	steps = count(tables[0])
	if len(tables) == 2 {
		receipts = count(tables[1])
	}
	return steps, receipts
}

func verifiedReceipts(out string) int {
	_, n := verifiedRows(out)
	return n
}

func TestAgentKeyPermissions(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("keyed", 3, 0, step("one", 0, "true"), step("two", 0, "true"))
	e.ok("step", "begin", "keyed")
	keyDir := filepath.Join(e.home, "keys")
	if _, _, code := e.tether("receipts", "verify", "keyed"); code != 1 {
		t.Errorf("receipts verify without a key: exit %d, want 1", code)
	}
	e.ok("step", "done", "keyed")
	for path, want := range map[string]os.FileMode{keyDir: 0o700, filepath.Join(keyDir, "master.key"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, want mode %04o", path, err, want)
		}
	}
	e.ok("step", "begin", "keyed")

	tests := []struct {
		path string
		mode os.FileMode
		want string
	}{
		{filepath.Join(keyDir, "master.key"), 0o644, "has mode 0644"},
		{keyDir, 0o755, "key directory"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %04o", filepath.Base(tt.path), tt.mode), func(t *testing.T) {
			before := e.hook("keyed")
			if err := os.Chmod(tt.path, tt.mode); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = os.Chmod(tt.path, map[bool]os.FileMode{true: 0o700, false: 0o600}[tt.path == keyDir]) }()
			_, stderr, code := e.tether("step", "done", "keyed")
			if code != 1 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "refusing") {
				t.Fatalf("exit %d, stderr %q; want exit 1 refusing the key", code, stderr)
			}
			if after := e.hook("keyed"); after.ResourceVersion != before.ResourceVersion {
				t.Fatal("step done changed the hook although the key was refused")
			}
			if _, stderr, code := e.tether("receipts", "verify", "keyed"); code != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("receipts verify: exit %d, stderr %q", code, stderr)
			}
		})
	}
	e.ok("step", "done", "keyed")
	e.ok("receipts", "verify", "keyed")
}

// startStepDone starts `step done` on a validation that waits for a signal
// file, and returns once the hook is validating.
func startStepDone(t *testing.T, e *agentEnv, name string) *exec.Cmd {
	t.Helper()
	cmd := e.command("step", "done", name)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	readPid(t, filepath.Join(e.workspace, "validator.pid"))
	if h := e.hook(name); h.Status.State != v1.HookStepValidating {
		t.Fatalf("hook is %s while its validation runs:\n%s", h.Status.State, out.String())
	}
	return cmd
}

func TestAgentStepDoneKilledMidValidation(t *testing.T) {
	script := "echo $$ > validator.pid; sleep 60"
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatalf("setsid(1) is needed: %v", err)
	}
	t.Run("SIGKILL leaves the hook validating", func(t *testing.T) {
		e := newAgentEnv(t)
		tree := "sleep 60 & echo $! > child.pid; setsid sh -c 'echo $$ > session.pid; sleep 60' & " + script
		e.createHook("killed", 3, 0, step("one", 0, "sh", "-c", tree))
		e.ok("step", "begin", "killed")
		cmd := startStepDone(t, e, "killed")
		pidFiles := []string{"validator.pid", "child.pid", "session.pid"}
		pids := make([]int, len(pidFiles))
		for i, f := range pidFiles {
			pids[i] = readPid(t, filepath.Join(e.workspace, f))
		}
		before := e.hook("killed")
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		after := e.hook("killed")
		wantState(t, after, v1.HookStepValidating, 0, 1)
		if after.ResourceVersion != before.ResourceVersion || len(after.Status.Steps[0].Receipts) != 0 {
			t.Fatalf("a killed step done wrote after validating began: %+v", after.Status)
		}
		// Every process of the validation dies with tether, the one that
		// left the group included; the recovering agent re-runs validation.
		for i, pid := range pids {
			t.Logf("waiting for %s (%d)", pidFiles[i], pid)
			waitDead(t, pid)
		}
	})
	t.Run("SIGTERM kills the validation and records the interruption", func(t *testing.T) {
		e := newAgentEnv(t)
		e.createHook("stopped", 3, 0, step("one", 0, "sh", "-c", script))
		e.ok("step", "begin", "stopped")
		cmd := startStepDone(t, e, "stopped")
		pid := readPid(t, filepath.Join(e.workspace, "validator.pid"))
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
			t.Fatalf("step done after SIGTERM: %v, want exit 1", err)
		}
		waitDead(t, pid)
		h := e.hook("stopped")
		if h.Status.State != v1.HookRecovering || h.Status.Recovery == nil || h.Status.Recovery.CrashType != v1.CrashValidationInterrupted ||
			!strings.Contains(h.Status.Recovery.RecommendedAction, "re-run validation") {
			t.Fatalf("after SIGTERM: %s, recovery %+v", h.Status.State, h.Status.Recovery)
		}
		if err := os.Remove(filepath.Join(e.workspace, "validator.pid")); err != nil {
			t.Fatal(err)
		}
		e.ok("resume", "stopped")
		wantState(t, e.hook("stopped"), v1.HookStepRunning, 0, 1)
	})
}

func TestAgentStepDoneHeartbeatsWhileValidating(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("beating", 3, 1500*time.Millisecond, step("one", 0, "sleep", "3.2"))
	e.ok("step", "begin", "beating")
	cmd := e.command("step", "done", "beating")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var validating, latest time.Time
	for {
		h := e.hook("beating")
		if h.Status.State != v1.HookStepValidating {
			if validating.IsZero() {
				continue
			}
			break
		}
		if validating.IsZero() {
			validating = h.Status.LastHeartbeat.Time
		}
		latest = h.Status.LastHeartbeat.Time
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if latest.Sub(validating) < 2*time.Second {
		t.Fatalf("lastHeartbeat moved %v during a 3.2s validation with staleAfter 1.5s", latest.Sub(validating))
	}
	if h := e.hook("beating"); h.Status.State != v1.HookCompleted {
		t.Fatalf("hook is %s", h.Status.State)
	}
}

// opensslVerify checks sig over message with OpenSSL, as docs/receipts.md
// shows, when an OpenSSL with Ed25519 support is installed.
func opensslVerify(t *testing.T, pubPEM, message, sig []byte) {
	t.Helper()
	bin, err := exec.LookPath("openssl")
	if err != nil {
		return
	}
	dir := t.TempDir()
	files := map[string][]byte{"task.pub": pubPEM, "pae.bin": message, "sig.bin": sig}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "pkeyutl", "-verify", "-pubin", "-inkey", "task.pub", "-rawin", "-in", "pae.bin", "-sigfile", "sig.bin")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Signature Verified Successfully") {
		t.Errorf("openssl pkeyutl -verify: %v\n%s", err, out)
	}
}

// TestAgentVerbsOnCluster drives the same verbs against a real
// kube-apiserver: the receipt key lives in a Secret, and a tampered receipt
// is named there too.
func TestAgentVerbsOnCluster(t *testing.T) {
	env := testenv.Start(t)
	ws := t.TempDir()
	ctx := context.Background()
	hook := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "remote"},
		Spec: v1.HookSpec{Goal: "g", Workspace: ws, Steps: []v1.Step{
			step("one", 0, "true"), step("two", 0, "sh", "-c", "exit 4"),
		}},
	}
	if err := env.Client.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	tether := func(args ...string) (string, string, int) {
		cmd := exec.Command(tetherBin, append(args, "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default")...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "TETHER_HOME="+t.TempDir())
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}
	for _, args := range [][]string{{"step", "begin", "remote", "--files", "a.go"}, {"step", "done", "remote"}, {"step", "begin", "remote"}} {
		if out, stderr, code := tether(args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	if _, stderr, code := tether("step", "done", "remote"); code != 1 || !strings.Contains(stderr, "exited 4") {
		t.Fatalf("failing step done: exit %d, %s", code, stderr)
	}
	if _, stderr, code := tether("resume", "remote"); code != 1 || !strings.Contains(stderr, `cannot "resume"`) {
		t.Fatalf("resume in step_running: exit %d, %s", code, stderr)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "tether-receipt-key"}, secret); err != nil {
		t.Fatalf("the receipt key Secret: %v", err)
	}
	if out, stderr, code := tether("receipts", "verify", "remote"); code != 0 || verifiedReceipts(out) != 2 {
		t.Fatalf("receipts verify: exit %d\n%s%s", code, out, stderr)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "remote"}, hook); err != nil {
		t.Fatal(err)
	}
	hook.Status.Steps[1].Receipts[0].ExitCode = 0
	if err := env.Client.Status().Update(ctx, hook); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := tether("receipts", "verify", "remote"); code != 1 || !strings.Contains(stderr, "status.steps[1].receipts[0]") {
		t.Fatalf("a forged exit code: exit %d, %s", code, stderr)
	}
	if _, stderr, code := tether("heartbeat", "absent"); code != 2 {
		t.Fatalf("heartbeat on a missing hook: exit %d, %s", code, stderr)
	}
}

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
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// startRun starts `tether run` on the agent's store and stops it with the
// test; it returns what tether run prints.
func (e *agentEnv) startRun() *syncBuffer {
	e.t.Helper()
	cmd := e.command("run")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if e.t.Failed() {
			e.t.Logf("tether run:\n%s", logs.String())
		}
	})
	return logs
}

// waitGet polls `tether get hook NAME` with a jsonpath until it prints want.
func (e *agentEnv) waitGet(name string, timeout time.Duration, jsonpath, want string) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var got string
	for time.Now().Before(deadline) {
		got, _, _ = e.tether("get", "hook", name, "-o", "jsonpath="+jsonpath)
		if got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("tether get hook %s -o jsonpath=%s printed %q, want %q", name, jsonpath, got, want)
}

// section returns the Markdown section of doc that starts with heading,
// up to the next heading of the same level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, heading+"\n")
	if !ok {
		t.Fatalf("no %q section in:\n%s", heading, doc)
	}
	body, _, _ := strings.Cut(rest, "\n## ")
	return heading + "\n" + body
}

// TestAcceptanceCrashAndResume is issue 5's end-to-end scenario: a 3-step
// task on a real git repository, applied from YAML, worked through the agent
// verbs while tether run reconciles it; the agent stops heartbeating in step
// 3, tether marks the task recovering after staleAfter, and `recover` tells
// the next agent exactly what not to repeat and what to do.
func TestAcceptanceCrashAndResume(t *testing.T) {
	e := newAgentEnv(t)
	e.write("go.mod", "module example.invalid/calc\n\ngo 1.22\n")
	e.write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "calc")
	task := filepath.Join(t.TempDir(), "task.yaml")
	spec := `# The task an agent works on; tether never rewrites this file.
apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: task
spec:
  goal: Add Sub and Mul to calc, with tests
  workspace: ` + e.workspace + `
  staleAfter: 2s
  steps:
  - name: sub
    validate:
    - command: [go, test, -count=1, ./...]
      timeout: 2m
  - name: mul
    validate:
    - command: [go, test, -count=1, -run, Mul, ./...]
      timeout: 2m
  - name: docs
    validate:
    - command: [grep, -q, Mul, README.md]
`
	if err := os.WriteFile(task, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	e.startRun()
	if out := e.ok("apply", "-f", task); !strings.Contains(out, "hook.agents.tether.dev/task created") {
		t.Fatalf("apply printed %q", out)
	}
	e.waitGet("task", 20*time.Second, "{.status.state}", string(v1.HookStepPending))

	e.ok("step", "begin", "task", "--working-on", "Sub and its test")
	e.write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n")
	e.write("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(5, 3) != 2 {\n\t\tt.Fatal(\"5-3\")\n\t}\n}\n")
	e.ok("step", "done", "task")
	e.ok("step", "begin", "task", "--working-on", "Mul and its test")
	e.write("mul.go", "package calc\n\nfunc Mul(a, b int) int { return a * b }\n")
	e.write("mul_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"2*3\")\n\t}\n}\n")
	e.ok("step", "done", "task")
	// The heartbeat is written while step begin runs, so it is no earlier than this.
	began := time.Now()
	e.ok("step", "begin", "task", "--working-on", "documenting Mul")
	// The agent crashes here: no heartbeat, no step done.

	e.waitGet("task", 20*time.Second, "{.status.state}", string(v1.HookRecovering))
	if waited := time.Since(began); waited < 2*time.Second {
		t.Errorf("recovering after %s, before staleAfter (2s) passed", waited)
	}
	e.waitGet("task", 5*time.Second, "{.status.recovery.crashType}", string(v1.CrashStaleHeartbeat))

	out := e.ok("recover", "task")
	notRepeat := section(t, out, "## DO NOT REPEAT")
	for _, want := range []string{`step "sub" (1/3) passed`, `step "mul" (2/3) passed`} {
		if !strings.Contains(notRepeat, want) {
			t.Errorf("DO NOT REPEAT lacks %q:\n%s", want, notRepeat)
		}
	}
	if strings.Contains(notRepeat, `step "docs"`) {
		t.Errorf("DO NOT REPEAT lists the unfinished step 3:\n%s", notRepeat)
	}
	if n := strings.Count(notRepeat, "signature: verified"); n != 2 {
		t.Errorf("DO NOT REPEAT has %d verified receipts, want 2:\n%s", n, notRepeat)
	}
	now := section(t, out, "## What to do now")
	if !strings.Contains(now, "tether resume task") || !strings.Contains(now, `step "docs" (3/3)`) || !strings.Contains(now, "attempt 2") {
		t.Errorf("What to do now does not say to resume step 3 at attempt 2:\n%s", now)
	}

	// Resuming continues step 3 as attempt 2: the interrupted attempt counts.
	e.ok("resume", "task")
	e.waitGet("task", 5*time.Second, "{.status.state} {.status.currentStep.index} {.status.currentStep.attempt}", "step_running 2 2")
	e.write("README.md", "calc: Add, Sub, Mul\n")
	if out := e.ok("step", "done", "task"); !strings.Contains(out, "hook.agents.tether.dev/task completed") {
		t.Errorf("the last step done printed %q", out)
	}
	e.waitGet("task", 10*time.Second, "{.status.state}", string(v1.HookCompleted))
	if out := e.ok("receipts", "verify", "task"); verifiedReceipts(out) != 3 {
		t.Errorf("receipts verify after completion:\n%s", out)
	}
	data, err := os.ReadFile(task)
	if err != nil || string(data) != spec {
		t.Errorf("the user's task file changed: %v\n%s", err, data)
	}
}

// TestAcceptanceStepDoneKilledDuringValidation: `step done` dies by SIGKILL
// while its validation runs. The hook is not left half-transitioned, and
// once its heartbeats stop tether run classifies it as an interrupted
// validation whose recommended action is to re-run validation.
func TestAcceptanceStepDoneKilledDuringValidation(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("killed", 3, 2*time.Second, step("one", 0, "sh", "-c", "echo $$ > validator.pid; sleep 60"))
	e.startRun()
	e.waitGet("killed", 20*time.Second, "{.status.state}", string(v1.HookStepPending))
	e.ok("step", "begin", "killed")
	cmd := startStepDone(t, e, "killed")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Cleanup(func() { _ = syscall.Kill(-readPid(t, filepath.Join(e.workspace, "validator.pid")), syscall.SIGKILL) })
	if h := e.hook("killed"); h.Status.State != v1.HookStepValidating || len(h.Status.Steps[0].Receipts) != 0 {
		t.Fatalf("right after the kill the hook is %s with %d receipts, want step_validating and none", h.Status.State, len(h.Status.Steps[0].Receipts))
	}

	e.waitGet("killed", 20*time.Second, "{.status.state} {.status.recovery.crashType}", "recovering validation_interrupted")
	h := e.hook("killed")
	if !strings.Contains(h.Status.Recovery.RecommendedAction, "re-run validation") {
		t.Errorf("recommendedAction %q does not say to re-run validation", h.Status.Recovery.RecommendedAction)
	}
	if out := e.ok("recover", "killed"); !strings.Contains(section(t, out, "## What to do now"), "re-run validation") {
		t.Errorf("recover does not say to re-run validation:\n%s", out)
	}
	wantState(t, h, v1.HookRecovering, 0, 1)
}

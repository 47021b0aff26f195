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
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestPauseUnpause(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	c := openStore(t, dir).Client()
	putHook(t, c, &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"},
		Spec:       v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}},
		Status:     v1.HookStatus{State: v1.HookStepRunning, CurrentStep: &v1.CurrentStep{Name: "one", Attempt: 1}, Steps: []v1.StepResult{{Name: "one", Phase: v1.StepRunning}}},
	})
	putHook(t, c, terminalHook("done", v1.HookCompleted, time.Now(), nil))

	steps := []struct {
		args             []string
		wantCode         int
		wantOut, wantErr string
	}{
		{[]string{"pause", "task", "--reason", "review the plan"}, 0, "hook.agents.tether.dev/task paused\n", ""},
		{[]string{"pause", "task", "--reason", "review the plan"}, 0, "hook.agents.tether.dev/task unchanged\n", ""},
		{[]string{"get", "hooks", "task"}, 0, "PAUSED", ""},
		{[]string{"describe", "hook", "task"}, 0, "Pause Reason: review the plan", ""},
		{[]string{"describe", "hook", "task"}, 0, "paused by tether pause: review the plan", ""},
		{[]string{"recover", "task"}, 0, "A person paused this task: review the plan", ""},
		{[]string{"unpause", "task"}, 0, "hook.agents.tether.dev/task unpaused\n", ""},
		{[]string{"unpause", "task"}, 0, "hook.agents.tether.dev/task unchanged\n", ""},
		{[]string{"pause", "task", "--reason", " "}, 1, "", "--reason: must not be empty"},
		{[]string{"pause", "done"}, 1, "", "hook done is completed (terminal)"},
		{[]string{"pause", "missing"}, 2, "", `"missing" not found`},
		{[]string{"pause"}, 1, "", "exactly one argument"},
	}
	for _, s := range steps {
		out, stderr, code := run(t, append([]string{"--store", dir}, s.args...)...)
		if s.args[0] == "describe" {
			out = squeeze(out)
		}
		if code != s.wantCode || !strings.Contains(out, s.wantOut) || !strings.Contains(stderr, s.wantErr) {
			t.Errorf("tether %s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				strings.Join(s.args, " "), code, out, stderr, s.wantCode, s.wantOut, s.wantErr)
		}
	}
	out, _, _ := run(t, "--store", dir, "describe", "hook", "task")
	if strings.Contains(out, "Pause Reason") || !strings.Contains(squeeze(out), "Suspend: false") {
		t.Errorf("describe after unpause:\n%s", out)
	}
}

// squeeze folds runs of spaces into one, so that tests need not know the
// width of a describe column.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// TestUnpauseRestartsTheStaleClock: an agent cannot heartbeat while its
// Hook is paused, so a pause longer than staleAfter must not make the Hook
// stale the moment it ends: the clock starts again at the unpause, and a
// Hook whose agent stays silent after it goes stale staleAfter later.
func TestUnpauseRestartsTheStaleClock(t *testing.T) {
	e := newAgentEnv(t)
	const staleAfter = 2 * time.Second
	e.createHook("idle", 3, staleAfter, step("one", 0, "true"))
	e.startRun()
	e.ok("step", "begin", "idle")
	e.ok("pause", "idle", "--reason", "lunch")
	time.Sleep(staleAfter + time.Second)
	if st := e.hook("idle").Status.State; st != v1.HookStepRunning {
		t.Fatalf("a paused Hook went %s", st)
	}
	unpaused := time.Now() // the annotation's time is later
	e.ok("unpause", "idle")
	for time.Since(unpaused) < staleAfter*6/10 {
		if st := e.hook("idle").Status.State; st != v1.HookStepRunning {
			t.Fatalf("%s after the unpause the Hook is %s: the pause counted against its heartbeat", time.Since(unpaused).Round(time.Millisecond), st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.waitGet("idle", 10*time.Second, "{.status.state}", string(v1.HookRecovering))
	if after := time.Since(unpaused); after < staleAfter {
		t.Errorf("stale %s after the unpause, want at least staleAfter (%s)", after, staleAfter)
	}
}

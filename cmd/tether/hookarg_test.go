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
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestVerbsWithoutHookName: recover and the agent's verbs without a Hook
// name act on the Hook tether agent hook would resolve for the working
// directory ($TETHER_HOOK, the checkout's binding, the one non-terminal
// Hook whose workspace holds it), and refuse, naming the way out, when
// there is none or more than one. The terminal verbs must name it.
func TestVerbsWithoutHookName(t *testing.T) {
	e := newAgentEnv(t)
	other := filepath.Join(filepath.Dir(e.workspace), "elsewhere")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	create := func(name, ws string) {
		h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.HookSpec{Goal: "resolve me", Workspace: ws, Steps: []v1.Step{step("one", 0, "true"), step("two", 0, "true")}}}
		if err := e.client.Create(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	run := func(env []string, args ...string) (string, string, int) {
		cmd := e.command(args...)
		cmd.Env = append(cmd.Env, env...)
		return runCommand(t, cmd)
	}

	// No Hook at all.
	if _, stderr, code := run(nil, "recover"); code == 0 || !strings.Contains(stderr, "tether agent bind HOOK") || !strings.Contains(stderr, "name the Hook") {
		t.Errorf("recover with no Hook anywhere: exit %d, %q", code, stderr)
	}

	// The one non-terminal Hook whose workspace holds the directory.
	create("here", e.workspace)
	create("there", other)
	named := e.ok("recover", "here")
	if out, stderr, code := run(nil, "recover"); code != 0 || out != named {
		t.Errorf("recover by workspace: exit %d, stderr %q; output differs from recover here: %v", code, stderr, out != named)
	}
	if out, stderr, code := run(nil, "step", "begin"); code != 0 || !strings.Contains(out, "hook.agents.tether.dev/here") {
		t.Fatalf("step begin by workspace: exit %d, %q %q", code, out, stderr)
	}
	if st := e.hook("here").Status.State; st != v1.HookStepRunning {
		t.Fatalf("step begin by workspace left hook here %s", st)
	}
	if _, stderr, code := run(nil, "heartbeat"); code != 0 {
		t.Fatalf("heartbeat by workspace: exit %d, %q", code, stderr)
	}
	if out, stderr, code := run(nil, "step", "done"); code != 0 || !strings.Contains(out, "hook.agents.tether.dev/here") {
		t.Fatalf("step done by workspace: exit %d, %q %q", code, out, stderr)
	}
	if got := e.hook("here").Status.Steps[0].Phase; got != v1.StepPassed {
		t.Fatalf("step done by workspace: step one is %s", got)
	}

	// $TETHER_HOOK wins over the workspace.
	if out, stderr, code := run([]string{"TETHER_HOOK=there"}, "step", "begin"); code != 0 || !strings.Contains(out, "hook.agents.tether.dev/there") {
		t.Fatalf("step begin with $TETHER_HOOK: exit %d, %q %q", code, out, stderr)
	}
	if st := e.hook("there").Status.State; st != v1.HookStepRunning {
		t.Fatalf("step begin with $TETHER_HOOK left hook there %s", st)
	}

	// Two Hooks hold the directory: no guess, until the checkout is bound.
	create("twin", e.workspace)
	if _, stderr, code := run(nil, "recover"); code == 0 || !strings.Contains(stderr, "here, twin") || !strings.Contains(stderr, "tether agent bind HOOK") {
		t.Errorf("recover with two candidates: exit %d, %q", code, stderr)
	}
	e.ok("agent", "bind", "twin")
	if out, stderr, code := run(nil, "recover"); code != 0 || out != e.ok("recover", "twin") {
		t.Errorf("recover in a bound checkout: exit %d, %q", code, stderr)
	}
	if out, stderr, code := run(nil, "checkpoint", "-m", "bound"); code != 0 || !strings.Contains(out, "checkpoint.agents.tether.dev/twin-") {
		t.Errorf("checkpoint in a bound checkout: exit %d, %q %q", code, out, stderr)
	}

	// The terminal verbs must name their Hook.
	for _, verb := range []string{"abandon", "fail"} {
		if _, stderr, code := run(nil, verb, "--reason", "x"); code == 0 || !strings.Contains(stderr, "exactly one argument") {
			t.Errorf("%s without a name: exit %d, %q", verb, code, stderr)
		}
	}
	if st := e.hook("twin").Status.State; st.IsTerminal() {
		t.Errorf("a terminal verb without a name changed hook twin to %s", st)
	}
}

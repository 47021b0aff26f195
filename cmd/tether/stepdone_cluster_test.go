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
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// stepDoneRuns is how many steps each backend's timing takes the median of.
const stepDoneRuns = 5

// timeStepDones begins and finishes steps steps, with a file changed in
// each, and returns the median time of `step done`, which takes two
// checkpoints after it passes.
func timeStepDones(t *testing.T, ws string, steps int, tether func(args ...string) *exec.Cmd) time.Duration {
	t.Helper()
	var took []time.Duration
	for i := range steps {
		if out, err := tether("step", "begin", "timed").CombinedOutput(); err != nil {
			t.Fatalf("step begin: %v\n%s", err, out)
		}
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte("work\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := tether("step", "done", "timed").CombinedOutput()
		took = append(took, time.Since(start))
		if err != nil || strings.Count(string(out), "checkpoint.agents.tether.dev/") != 2 {
			t.Fatalf("step done: %v, want two checkpoints:\n%s", err, out)
		}
	}
	slices.Sort(took)
	return took[len(took)/2]
}

func timedSteps() []v1.Step {
	var steps []v1.Step
	for i := range stepDoneRuns {
		steps = append(steps, step(fmt.Sprintf("s%d", i), 0, "true"))
	}
	return steps
}

// TestStepDoneOnClusterWithinTwiceLocal times `step done` (a validation,
// the pass, two checkpoints) on the local store and on kube-apiserver with
// an operator running: the cluster's may cost at most twice the local's.
// Its client was throttled to client-go's default of 5 requests a second
// (bursts of 10), which put about 1.2 s between the two checkpoints.
func TestStepDoneOnClusterWithinTwiceLocal(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("timed", 0, 0, timedSteps()...)
	local := timeStepDones(t, e.workspace, stepDoneRuns, e.command)

	env := testenv.Start(t)
	startOperator(t, env, nil)
	ws := gitWorkspace(t)
	hook := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "timed"},
		Spec:       v1.HookSpec{Goal: "timed", Workspace: ws, Steps: timedSteps()},
	}
	if err := env.Client.Create(context.Background(), hook); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cluster := timeStepDones(t, ws, stepDoneRuns, func(args ...string) *exec.Cmd {
		cmd := exec.Command(tetherBin, append(args, "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default")...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "TETHER_HOME="+home)
		return cmd
	})
	t.Logf("step done, median of %d: local %v, cluster %v (%.2fx)", stepDoneRuns, local.Round(time.Millisecond), cluster.Round(time.Millisecond), float64(cluster)/float64(local))
	if cluster > 2*local {
		t.Errorf("step done took %v on the cluster, more than twice its %v on the local store", cluster, local)
	}
}

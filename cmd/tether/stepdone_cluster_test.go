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

// timeStepDone begins and finishes step i, with a file changed, and
// returns how long `step done` took; it takes two checkpoints after the
// pass.
func timeStepDone(t *testing.T, ws string, i int, tether func(args ...string) *exec.Cmd) time.Duration {
	t.Helper()
	if out, err := tether("step", "begin", "timed").CombinedOutput(); err != nil {
		t.Fatalf("step begin: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte("work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := tether("step", "done", "timed").CombinedOutput()
	took := time.Since(start)
	if err != nil || strings.Count(string(out), "checkpoint.agents.tether.dev/") != 2 {
		t.Fatalf("step done: %v, want two checkpoints:\n%s", err, out)
	}
	return took
}

// median is the middle of ds (the later of the two middles when even).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
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
// (bursts of 10), which put about 1.2 s between the two checkpoints. The
// backends take turns, step by step, after both are up: timed one after
// the other, the local steps ran before the API server and the operator
// loaded the machine, and under CI's parallel packages the ratio read
// 2.36x with no change to the verbs (interleaved: 1.02x).
func TestStepDoneOnClusterWithinTwiceLocal(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("timed", 0, 0, timedSteps()...)

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
	onCluster := func(args ...string) *exec.Cmd {
		cmd := exec.Command(tetherBin, append(args, "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default")...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "TETHER_HOME="+home)
		return cmd
	}
	// The backends take turns, so that the load of a busy machine (the
	// other packages' tests) weighs on both alike.
	var locals, clusters []time.Duration
	for i := range stepDoneRuns {
		locals = append(locals, timeStepDone(t, e.workspace, i, e.command))
		clusters = append(clusters, timeStepDone(t, ws, i, onCluster))
	}
	local, cluster := median(locals), median(clusters)
	t.Logf("step done, median of %d: local %v, cluster %v (%.2fx)", stepDoneRuns, local.Round(time.Millisecond), cluster.Round(time.Millisecond), float64(cluster)/float64(local))
	if cluster > 2*local {
		t.Errorf("step done took %v on the cluster, more than twice its %v on the local store", cluster, local)
	}
}

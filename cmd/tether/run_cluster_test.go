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
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tetherv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/cli"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// TestRunOnClusterWithLeaderElection runs `tether run --cluster` against a
// real kube-apiserver through a kubeconfig: it becomes ready, wins the
// leader Lease in the -n namespace, and stops cleanly on SIGTERM.
func TestRunOnClusterWithLeaderElection(t *testing.T) {
	env := testenv.Start(t)
	probe := freeAddr(t)
	cmd := exec.Command(tetherBin, "run", "--cluster", "--kubeconfig", env.Kubeconfig,
		"-n", "default", "--leader-elect", "--health-probe-bind-address", probe)
	output := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lease := &coordinationv1.Lease{}
	for {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: cli.LeaderElectionID}, lease)
		if err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("tether run --cluster never took the leader Lease (last error %v):\n%s", err, output.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/readyz", probe))
	if err != nil {
		t.Fatalf("readyz: %v\n%s", err, output.String())
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz answered %d", resp.StatusCode)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("tether run --cluster exited with %v after SIGTERM:\n%s", err, output.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("tether run --cluster did not stop within 30s of SIGTERM:\n%s", output.String())
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: cli.LeaderElectionID}, lease); err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the leader stopped by SIGTERM still holds the Lease (holder %q): it must release it", *h)
	}
}

// startOperator starts `tether run --cluster` on env with extra flags and
// environment, and stops it with SIGTERM when the test ends.
func startOperator(t *testing.T, env *testenv.Env, environ []string, flags ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	args := append([]string{"run", "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default"}, flags...)
	cmd := exec.Command(tetherBin, args...)
	cmd.Env = append(os.Environ(), environ...)
	output := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return cmd, output
}

func leaseHolder(t *testing.T, env *testenv.Env) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: cli.LeaderElectionID}, lease)
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// TestClusterFailoverOnSIGTERM runs two replicas with leader election: the
// leader, stopped by SIGTERM, releases the Lease, and the standby takes it
// well before the 15s lease duration that a kill would cost.
func TestClusterFailoverOnSIGTERM(t *testing.T) {
	env := testenv.Start(t)
	flags := []string{"--leader-elect", "--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=250ms"}
	waitFor := func(what string, within time.Duration, cond func(holder string) bool) string {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			h := leaseHolder(t, env)
			if cond(h) {
				return h
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the Lease holder is %q after %v", what, h, within)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	leader, _ := startOperator(t, env, nil, flags...)
	first := waitFor("a leader", 60*time.Second, func(h string) bool { return h != "" })

	probe := freeAddr(t)
	_, standbyOutput := startOperator(t, env, nil, append(flags, "--health-probe-bind-address", probe)...)
	ready := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://%s/readyz", probe))
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(ready) {
			t.Fatalf("the standby never became ready:\n%s", standbyOutput.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if h := leaseHolder(t, env); h != first {
		t.Fatalf("the standby took the Lease (%q) from a live leader (%q)", h, first)
	}

	stopped := time.Now()
	if err := leader.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	next := waitFor("failover", 10*time.Second, func(h string) bool { return h != "" && h != first })
	took := time.Since(stopped)
	t.Logf("failover: %s took the Lease %v after the leader's SIGTERM", next, took.Round(time.Millisecond))
	if took > maxTakeoverAfterSIGTERM {
		t.Errorf("the standby took the Lease %v after the leader's SIGTERM, want at most %v: was the Lease released?", took, maxTakeoverAfterSIGTERM)
	}
}

// TestOperatorWritesNothingLocally runs the operator with a home and a
// TETHER_HOME it cannot write, as the Deployment's read-only root
// filesystem leaves it, and an empty TMPDIR: Hooks are still reconciled,
// with no reconcile error and no recovery file, Workers it would run as its
// own processes are refused, and TMPDIR stays empty.
func TestOperatorWritesNothingLocally(t *testing.T) {
	env := testenv.Start(t)
	// Not even root can create anything under /proc.
	unwritable := "/proc/tether-unwritable"
	tmp := t.TempDir()
	// Registered first, so it runs once the operator has stopped.
	t.Cleanup(func() {
		if got := dirListing(t, tmp); len(got) > 0 {
			t.Errorf("the operator wrote to TMPDIR: %v", got)
		}
	})
	_, output := startOperator(t, env, []string{"HOME=" + unwritable, "XDG_CACHE_HOME=" + unwritable, config.HomeEnv + "=" + unwritable, "TMPDIR=" + tmp})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 3 {
		hook := &tetherv1alpha1.Hook{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("ro-%d", i)},
			Spec: tetherv1alpha1.HookSpec{
				Goal:      "reconciled without a writable disk",
				Workspace: t.TempDir(),
				Steps:     []tetherv1alpha1.Step{{Name: "one"}},
			},
		}
		if err := env.Client.Create(ctx, hook); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		hook := &tetherv1alpha1.Hook{}
		key := client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("ro-%d", i)}
		for {
			if err := env.Client.Get(ctx, key, hook); err != nil {
				t.Fatal(err)
			}
			if hook.Status.State != "" && hook.Status.ObservedGeneration == hook.Generation {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("hook %s was never reconciled:\n%s", key.Name, output.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if hook.Status.RecoveryFile != "" {
			t.Errorf("hook %s: status.recoveryFile = %q; the operator writes no recovery file unless asked", key.Name, hook.Status.RecoveryFile)
		}
	}
	// Workers the operator would run as its own processes are refused,
	// naming the field, rather than started with logs on its disk.
	workers := []struct {
		name, field string
		spec        tetherv1alpha1.WorkerSpec
	}{
		{"ro-command", "spec.command", tetherv1alpha1.WorkerSpec{Command: []string{"sleep", "60"}}},
		{"ro-adopt", "spec.adopt", tetherv1alpha1.WorkerSpec{Adopt: &tetherv1alpha1.AdoptSpec{PID: int32(os.Getpid())}}},
	}
	for _, w := range workers {
		if err := env.Client.Create(ctx, &tetherv1alpha1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: w.name}, Spec: w.spec}); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range workers {
		got := &tetherv1alpha1.Worker{}
		var ready *metav1.Condition
		for {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: w.name}, got); err != nil {
				t.Fatal(err)
			}
			if ready = meta.FindStatusCondition(got.Status.Conditions, tetherv1alpha1.ConditionReady); ready != nil && ready.Reason == controllers.ReasonProcessesUnsupported {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("worker %s was never refused: %+v\n%s", w.name, got.Status, output.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, w.field) || !strings.Contains(ready.Message, "spec.template") {
			t.Errorf("worker %s: Ready %+v, want False naming %s and spec.template", w.name, ready, w.field)
		}
		if got.Status.Phase != tetherv1alpha1.WorkerPending || got.Status.PID != 0 {
			t.Errorf("worker %s: phase %s, pid %d; want Pending with no process", w.name, got.Status.Phase, got.Status.PID)
		}
		for {
			events := &eventsv1.EventList{}
			if err := env.Client.List(ctx, events, client.InNamespace("default")); err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(events.Items, func(ev eventsv1.Event) bool {
				return ev.Regarding.Name == w.name && ev.Type == corev1.EventTypeWarning && ev.Reason == controllers.ReasonProcessesUnsupported
			}) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("no Warning Event refused worker %s", w.name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A reconcile error would have been logged by now, a retry after it too.
	time.Sleep(time.Second)
	if out := output.String(); strings.Contains(out, "Reconciler error") || strings.Contains(out, unwritable) {
		t.Errorf("the operator failed on its unwritable home:\n%s", out)
	}
}

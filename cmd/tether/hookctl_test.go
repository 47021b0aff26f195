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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

// putHook creates h and then writes its status, as the reconcilers and
// agent verbs would have.
func putHook(t testing.TB, c client.Client, h *v1.Hook) *v1.Hook {
	t.Helper()
	ctx := context.Background()
	status := h.Status
	h = h.DeepCopy()
	h.ResourceVersion = ""
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	// tether run may initialize the new Hook first; retry on conflict.
	for {
		h.Status = status
		err := c.Status().Update(ctx, h)
		if err == nil {
			return h
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(h), h); err != nil {
			t.Fatal(err)
		}
	}
}

func terminalHook(name string, state v1.HookState, since time.Time, ret *v1.RetentionPolicy) *v1.Hook {
	at := metav1.NewTime(since)
	return &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "only"}}, Retention: ret},
		Status: v1.HookStatus{
			State: state, TerminalAt: &at, CurrentStep: &v1.CurrentStep{Name: "only", Attempt: 1},
			Steps: []v1.StepResult{{Name: "only", Phase: v1.StepPending}},
		},
	}
}

func TestRecoverPrintsTheRecoveryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	c := openStore(t, dir).Client()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recovery", "recovering.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h := &v1.Hook{}
	if err := yaml.UnmarshalStrict(data, h); err != nil {
		t.Fatal(err)
	}
	stored := putHook(t, c, h)

	out, stderr, code := run(t, "--store", dir, "-n", "team-a", "recover", "recovering-example")
	if code != 0 {
		t.Fatalf("recover: exit %d: %s", code, stderr)
	}
	if want := string(recoveryfile.Render(stored, recoveryfile.Options{})); out != want {
		t.Errorf("recover printed:\n%s\nwant the rendering of the stored object:\n%s", out, want)
	}
	for _, want := range []string{"## DO NOT REPEAT", `### step "design" (1/3) passed`, `### step "implement" (2/3) passed`, "re-run validation", "PAUSED"} {
		if !strings.Contains(out, want) {
			t.Errorf("recover output lacks %q", want)
		}
	}

	_, stderr, code = run(t, "--store", dir, "recover", "no-such-hook")
	if code != 2 || !strings.Contains(stderr, "no-such-hook") {
		t.Errorf("recover of a missing hook: exit %d, stderr %q; want exit 2 naming it", code, stderr)
	}
	_, _, code = run(t, "--store", dir, "recover")
	if code != 1 {
		t.Errorf("recover without a hook: exit %d, want 1", code)
	}
}

func exists(t *testing.T, c client.Client, obj client.Object, name string) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestGC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	c := openStore(t, dir).Client()
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("retention:\n  failed: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	done := putHook(t, c, terminalHook("done", v1.HookCompleted, past, &v1.RetentionPolicy{Completed: &metav1.Duration{Duration: 10 * time.Second}}))
	putHook(t, c, terminalHook("broken", v1.HookFailed, past, nil))
	putHook(t, c, terminalHook("dropped", v1.HookAbandoned, past, nil))
	putHook(t, c, terminalHook("kept", v1.HookCompleted, past, &v1.RetentionPolicy{Completed: &metav1.Duration{Duration: time.Hour}}))
	running := terminalHook("running", v1.HookStepRunning, past, nil)
	running.Status.TerminalAt = nil
	putHook(t, c, running)
	cp := &v1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Name: "done-cp-1", Namespace: "default", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: v1.GroupVersion.String(), Kind: "Hook", Name: "done", UID: done.UID,
		}}},
		Spec: v1.CheckpointSpec{HookName: "done", Trigger: v1.CheckpointTrigger("manual")},
	}
	if err := c.Create(context.Background(), cp); err != nil {
		t.Fatal(err)
	}

	env := []string{"--store", dir, "--config", cfgFile}
	out, stderr, code := run(t, append(env, "gc", "--dry-run")...)
	if code != 0 {
		t.Fatalf("gc --dry-run: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"hook.agents.tether.dev/done", "completed", "10s", "hook.agents.tether.dev/broken", "failed", "1s", "would be deleted (dry run)"} {
		if !strings.Contains(out, want) {
			t.Errorf("gc --dry-run output lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"dropped", "kept", "running"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("gc --dry-run lists %s, which is not due:\n%s", unwanted, out)
		}
	}
	for _, name := range []string{"done", "broken", "dropped", "kept", "running"} {
		if !exists(t, c, &v1.Hook{}, name) {
			t.Errorf("gc --dry-run deleted %s", name)
		}
	}

	out, stderr, code = run(t, append(env, "gc")...)
	if code != 0 || strings.Count(out, " deleted") != 2 {
		t.Fatalf("gc: exit %d, stderr %s, output:\n%s\nwant two deletions", code, stderr, out)
	}
	for name, want := range map[string]bool{"done": false, "broken": false, "dropped": true, "kept": true, "running": true} {
		if got := exists(t, c, &v1.Hook{}, name); got != want {
			t.Errorf("after gc, hook %s exists = %v, want %v", name, got, want)
		}
	}
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return !exists(t, c, &v1.Checkpoint{}, "done-cp-1"), nil
	})
	if err != nil {
		t.Error("the checkpoint owned by the collected hook was not deleted with it")
	}

	out, _, code = run(t, append(env, "gc")...)
	if code != 0 || !strings.Contains(out, "No terminal hooks are due") {
		t.Errorf("second gc: exit %d, output %q", code, out)
	}

	if err := os.WriteFile(cfgFile, []byte("retention:\n  failed: 1s\n  bogus: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, append(env, "gc")...)
	if code != 1 || !strings.Contains(stderr, "bogus") || !strings.Contains(stderr, cfgFile) {
		t.Errorf("gc with a bad config: exit %d, stderr %q; want exit 1 naming the file and the field", code, stderr)
	}
	if !exists(t, c, &v1.Hook{}, "dropped") {
		t.Error("gc with a bad config deleted something")
	}
}

// TestRunRecoversAStaleHookAndCollectsExpiredOnes drives tether run: a
// hook whose agent stops heartbeating is recovering after staleAfter, its
// recovery file is in the store, `recover` tells the agent what to do, and
// an abandoned hook is deleted when its TTL passes.
func TestRunRecoversAStaleHookAndCollectsExpiredOnes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	c := openStore(t, dir).Client()
	cmd := exec.Command(tetherBin, "run", "--store", dir)
	cmd.Env = append(os.Environ(), "TETHER_HOME="+t.TempDir())
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("tether run:\n%s", logs.String())
		}
	}()
	ctx := context.Background()
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
			return cond(), nil
		}); err != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
	}

	hook := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"},
		Spec: v1.HookSpec{
			Goal: "three steps", StaleAfter: &metav1.Duration{Duration: 2 * time.Second},
			Steps: []v1.Step{{Name: "one"}, {Name: "two"}, {Name: "three"}},
		},
	}
	if err := c.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	h := &v1.Hook{}
	poll("initialization", func() bool {
		return exists(t, c, h, "task") && h.Status.State == v1.HookStepPending
	})
	for _, e := range []hookfsm.Event{hookfsm.Begin, hookfsm.Validate, hookfsm.Pass, hookfsm.Begin} {
		var err error
		if h, _, err = hookwrite.Transition(ctx, c, client.ObjectKey{Namespace: "default", Name: "task"}, hookwrite.Input(hookfsm.Input{Event: e}),
			hookwrite.Options{Actor: "e2e"}); err != nil {
			t.Fatal(err)
		}
	}
	due := h.Status.LastHeartbeat.Add(2 * time.Second)
	poll("recovering", func() bool {
		return exists(t, c, h, "task") && h.Status.State == v1.HookRecovering
	})
	if h.Status.Recovery == nil || h.Status.Recovery.DetectedAt.Time.Before(due.Truncate(time.Second)) || h.Status.Recovery.CrashType != v1.CrashStaleHeartbeat {
		t.Fatalf("recovery %+v; want stale_heartbeat detected at or after %s", h.Status.Recovery, due)
	}
	out, stderr, code := run(t, "--store", dir, "recover", "task")
	if code != 0 {
		t.Fatalf("recover: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"- State: `recovering`", `### step "one" (1/3) passed`, `continue step "two" (2/3) as attempt 2`} {
		if !strings.Contains(out, want) {
			t.Errorf("recover output lacks %q:\n%s", want, out)
		}
	}
	// The status holds it relative to the store; describe shows it whole.
	file := filepath.Join(dir, "recovery", "default", "task.md")
	if want := filepath.Join("recovery", "default", "task.md"); h.Status.RecoveryFile != want {
		t.Errorf("status.recoveryFile = %q, want %q", h.Status.RecoveryFile, want)
	}
	if out, _, _ := run(t, "--store", dir, "describe", "hook", "task"); !strings.Contains(squeeze(out), "Recovery File: "+file) {
		t.Errorf("describe does not show the recovery file at %s:\n%s", file, out)
	}
	poll("the recovery file to match recover", func() bool {
		data, err := os.ReadFile(file)
		return err == nil && string(data) == out
	})

	abandoned := putHook(t, c, terminalHook("old", v1.HookAbandoned, time.Now(), &v1.RetentionPolicy{Abandoned: &metav1.Duration{Duration: 2 * time.Second}}))
	dueAt := abandoned.Status.TerminalAt.Add(2 * time.Second)
	time.Sleep(time.Until(dueAt.Add(-500 * time.Millisecond)))
	if !exists(t, c, &v1.Hook{}, "old") {
		t.Fatalf("abandoned hook deleted before its TTL passed at %s", dueAt)
	}
	poll("the abandoned hook to be collected", func() bool {
		return !exists(t, c, &v1.Hook{}, "old")
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var exitErr *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &exitErr) {
		t.Fatal(err)
	}
}

// BenchmarkRecoverProcess times the whole `tether recover` process on a
// store holding the recovering fixture; the reference in the same run is
// `tether version`, the process's start-up floor.
func BenchmarkRecoverProcess(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "store")
	c := openStore(b, dir).Client()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recovery", "recovering.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	h := &v1.Hook{}
	if err := yaml.UnmarshalStrict(data, h); err != nil {
		b.Fatal(err)
	}
	putHook(b, c, h)
	timeIt := func(args ...string) time.Duration {
		start := time.Now()
		if out, err := exec.Command(tetherBin, args...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
		return time.Since(start)
	}
	var rec, ref []time.Duration
	for b.Loop() {
		rec = append(rec, timeIt("--store", dir, "-n", "team-a", "recover", "recovering-example"))
		ref = append(ref, timeIt("version"))
	}
	// quantile sorts d and returns its q-quantile (nearest rank).
	quantile := func(d []time.Duration, q float64) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[int(q*float64(len(d)-1)+0.5)]
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(quantile(rec, 0.5)), "recover-p50-ms")
	b.ReportMetric(ms(quantile(rec, 0.99)), "recover-p99-ms")
	b.ReportMetric(ms(quantile(ref, 0.5)), "ref-version-p50-ms")
	b.ReportMetric(float64(quantile(rec, 0.5))/float64(quantile(ref, 0.5)), "ratio-to-ref")
}

// TestRestartOfAMovedStoreWritesNothing: a store whose Hooks tether run
// has reconciled, moved (copied) to another directory, is served there by a
// new tether run that writes nothing: every path the store records is
// relative to it, and a reconcile that finds everything in place changes
// nothing (no status, no condition, no Event: the journal does not grow).
func TestRestartOfAMovedStoreWritesNothing(t *testing.T) {
	root := t.TempDir()
	first, moved := filepath.Join(root, "first"), filepath.Join(root, "moved")
	c := openStore(t, first).Client()
	for _, name := range []string{"a", "b", "c"} {
		putHook(t, c, &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}, {Name: "two"}}}})
	}
	serve := func(dir string, until func() bool) {
		t.Helper()
		cmd := exec.Command(tetherBin, "run", "--store", dir, "--metrics-bind-address", "0")
		cmd.Env = append(os.Environ(), "TETHER_HOME="+filepath.Join(root, "home"))
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !until() {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("tether run on %s did not settle:\n%s", dir, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	settled := func(dir string) func() bool {
		return func() bool {
			for _, name := range []string{"a", "b", "c"} {
				h := &v1.Hook{}
				if !exists(t, c, h, name) || h.Status.State != v1.HookStepPending || h.Status.RecoveryFile == "" {
					return false
				}
				f := h.Status.RecoveryFile
				if !filepath.IsAbs(f) {
					f = filepath.Join(dir, f)
				}
				if _, err := os.Stat(f); err != nil {
					return false
				}
			}
			return true
		}
	}
	serve(first, settled(first))
	before := journalSize(t, first)
	if out, err := exec.Command("cp", "-a", first, moved).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	started := time.Now()
	serve(moved, func() bool { return time.Since(started) > 3*time.Second })
	if after := journalSize(t, moved); after != before {
		t.Errorf("tether run on the moved store wrote %d bytes to its journal; want none", after-before)
	}
}

func journalSize(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

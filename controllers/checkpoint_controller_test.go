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

package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// startCheckpointManager runs every reconciler with a short ref
// verification period until the test ends.
func (e *storeEnv) startCheckpointManager(t *testing.T, cfg *config.Config) {
	t.Helper()
	opts := controllers.Options{Config: cfg, SkipNameValidation: true, CheckpointVerifyPeriod: 200 * time.Millisecond}
	opts.Worker.LogDir = filepath.Join(e.dir, "logs")
	if err := controllers.SetupAll(e.mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, e.mgr)
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "initial"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// checkpointHook creates a Hook over a fresh git repository.
func checkpointHook(t *testing.T, e *storeEnv, name string, mutate func(*v1.Hook)) *v1.Hook {
	t.Helper()
	h := newHook(name, time.Hour, "build", "test")
	h.Spec.Workspace = gitRepo(t)
	if mutate != nil {
		mutate(h)
	}
	if err := e.c.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return h
}

func take(t *testing.T, e *storeEnv, hook string, n int) []*v1.Checkpoint {
	t.Helper()
	var cps []*v1.Checkpoint
	for i := range n {
		h := &v1.Hook{}
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: hook}, h); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.Spec.Workspace, "file.txt"), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := checkpoint.Take(context.Background(), e.c, client.ObjectKey{Namespace: "default", Name: hook}, checkpoint.Request{Trigger: v1.TriggerManual})
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, out.Checkpoint)
	}
	return cps
}

func refSeqs(t *testing.T, ws, hook string) []int64 {
	t.Helper()
	refs, err := snapshot.List(context.Background(), ws, "default", hook)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, r := range refs {
		seqs = append(seqs, r.Seq)
	}
	return seqs
}

func checkpointNames(t *testing.T, c client.Client, hook string) []string {
	t.Helper()
	list := &v1.CheckpointList{}
	if err := c.List(context.Background(), list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cp := range list.Items {
		if cp.Spec.HookName == hook {
			names = append(names, cp.Name)
		}
	}
	slices.Sort(names)
	return names
}

func eventually(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s", what, timeout)
	}
}

func TestCheckpointPruneAndCascade(t *testing.T) {
	e := newStore(t)
	e.startCheckpointManager(t, testConfig(t))
	h := checkpointHook(t, e, "prune", func(h *v1.Hook) { h.Spec.MaxCheckpoints = 3 })
	take(t, e, "prune", 5)

	eventually(t, "pruned to 3 checkpoints and refs", 20*time.Second, func() bool {
		return slices.Equal(checkpointNames(t, e.c, "prune"), []string{"prune-3", "prune-4", "prune-5"}) &&
			slices.Equal(refSeqs(t, h.Spec.Workspace, "prune"), []int64{3, 4, 5})
	})
	stored := &v1.Hook{}
	if err := e.c.Get(context.Background(), client.ObjectKeyFromObject(h), stored); err != nil {
		t.Fatal(err)
	}
	if lc := stored.Status.LastCheckpoint; lc == nil || lc.Name != "prune-5" || lc.Seq != 5 || stored.Status.CheckpointSeq != 5 {
		t.Errorf("lastCheckpoint %+v, checkpointSeq %d; want prune-5 and 5", lc, stored.Status.CheckpointSeq)
	}
	index := filepath.Join(h.Spec.Workspace, ".git", "tether", "index", "default", "prune.index")
	if _, err := os.Stat(index); err != nil {
		t.Errorf("the capture index of a live Hook is gone after pruning: %v", err)
	}

	if err := e.c.Delete(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hook deletion removes every checkpoint, ref and the capture index", 20*time.Second, func() bool {
		_, err := os.Stat(index)
		return len(checkpointNames(t, e.c, "prune")) == 0 && len(refSeqs(t, h.Spec.Workspace, "prune")) == 0 && os.IsNotExist(err)
	})
}

func TestCheckpointReadyFollowsTheRef(t *testing.T) {
	e := newStore(t)
	e.startCheckpointManager(t, testConfig(t))
	h := checkpointHook(t, e, "ready", nil)
	cp := take(t, e, "ready", 1)[0]
	readyIs := func(want metav1.ConditionStatus) func() bool {
		return func() bool {
			got := &v1.Checkpoint{}
			if err := e.c.Get(context.Background(), client.ObjectKeyFromObject(cp), got); err != nil {
				return false
			}
			c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady)
			return c != nil && c.Status == want
		}
	}
	eventually(t, "Ready=True", 10*time.Second, readyIs(metav1.ConditionTrue))
	cmd := exec.Command("git", "update-ref", "-d", cp.Spec.Git.SnapshotRef)
	cmd.Dir = h.Spec.Workspace
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	eventually(t, "Ready=False after git update-ref -d", 10*time.Second, readyIs(metav1.ConditionFalse))
}

// TestCheckpointRefsProbedNotRequeued leaves Checkpoints whose refs hold
// for many verify periods: the refs are looked at each period, once for the
// workspace, and no Checkpoint is reconciled again until one's ref is
// deleted, which then shows in that Checkpoint's Ready alone.
func TestCheckpointRefsProbedNotRequeued(t *testing.T) {
	e := newStore(t)
	e.startCheckpointManager(t, testConfig(t))
	h := checkpointHook(t, e, "probed", nil)
	cps := take(t, e, "probed", 4)
	ready := func(cp *v1.Checkpoint) metav1.ConditionStatus {
		got := &v1.Checkpoint{}
		if err := e.c.Get(context.Background(), client.ObjectKeyFromObject(cp), got); err != nil {
			return ""
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady); c != nil {
			return c.Status
		}
		return ""
	}
	eventually(t, "every Checkpoint Ready=True", 10*time.Second, func() bool {
		for _, cp := range cps {
			if ready(cp) != metav1.ConditionTrue {
				return false
			}
		}
		return true
	})
	// The reconciles that their own status patches queued end first.
	before := checkpointReconciles(t)
	eventually(t, "the Checkpoint reconciles settled", 10*time.Second, func() bool {
		time.Sleep(400 * time.Millisecond)
		now := checkpointReconciles(t)
		settled := now == before
		before = now
		return settled
	})
	time.Sleep(time.Second) // 5 verify periods of 200 ms
	if n := checkpointReconciles(t) - before; n >= float64(len(cps)) {
		t.Errorf("%v Checkpoint reconciles in 5 verify periods with nothing changed; each Checkpoint is requeued", n)
	}
	gone := cps[1]
	cmd := exec.Command("git", "update-ref", "-d", gone.Spec.Git.SnapshotRef)
	cmd.Dir = h.Spec.Workspace
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	eventually(t, "Ready=False after git update-ref -d", 10*time.Second, func() bool { return ready(gone) == metav1.ConditionFalse })
	for _, cp := range cps {
		if want := metav1.ConditionTrue; cp != gone && ready(cp) != want {
			t.Errorf("%s: Ready %q, want %q: its ref is still there", cp.Name, ready(cp), want)
		}
	}
}

// checkpointReconciles is how many reconciles the controllers named
// checkpoint in this process have made (controller_runtime_reconcile_total).
func checkpointReconciles(t *testing.T) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "checkpoint" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

func TestCheckpointFinalizerGivesUpOnAMissingWorkspace(t *testing.T) {
	e := newStore(t)
	e.startCheckpointManager(t, testConfig(t))
	h := checkpointHook(t, e, "gone", nil)
	cp := take(t, e, "gone", 1)[0]
	if err := os.RemoveAll(h.Spec.Workspace); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	eventually(t, "checkpoint deleted despite its workspace being gone", 10*time.Second, func() bool {
		return len(checkpointNames(t, e.c, "gone")) == 0
	})
	eventually(t, "an Event names the ref left behind", 10*time.Second, func() bool {
		events := &corev1.EventList{}
		if err := e.c.List(context.Background(), events, client.InNamespace("default")); err != nil {
			return false
		}
		for _, ev := range events.Items {
			if ev.Reason == "SnapshotRefNotDeleted" && strings.Contains(ev.Message, cp.Spec.Git.SnapshotRef) {
				return true
			}
		}
		return false
	})
}

func TestIntervalCheckpoints(t *testing.T) {
	e := newStore(t)
	e.startCheckpointManager(t, testConfig(t))
	const interval = 1500 * time.Millisecond
	h := checkpointHook(t, e, "tick", func(h *v1.Hook) { h.Spec.CheckpointInterval = &metav1.Duration{Duration: interval} })
	waitFor(t, e.c, "tick", 10*time.Second, state(v1.HookStepPending))
	begun := agent(t, e.c, "tick", hookfsm.Input{Event: hookfsm.Begin})
	start := begun.Status.CurrentStep.StartedAt.Time

	first := waitFor(t, e.c, "tick", 15*time.Second, func(h *v1.Hook) bool { return h.Status.LastCheckpoint != nil })
	lc := first.Status.LastCheckpoint
	if lc.Trigger != v1.TriggerInterval || lc.Step != "build" {
		t.Errorf("last checkpoint %+v, want an interval checkpoint of step build", lc)
	}
	if early := lc.Time.Sub(start); early < interval-time.Second {
		t.Errorf("first interval checkpoint %s after the step began, want about %s", early, interval)
	}
	// Unchanged: the next look takes nothing and says so.
	waitFor(t, e.c, "tick", 15*time.Second, func(h *v1.Hook) bool {
		return h.Status.IntervalCheckedAt != nil && h.Status.IntervalCheckedAt.After(lc.Time.Time)
	})
	if n := checkpointNames(t, e.c, "tick"); len(n) != 1 {
		t.Errorf("checkpoints %q after an unchanged interval, want 1", n)
	}
	skipped := func() (n int32, msgs []string) {
		events := &corev1.EventList{}
		_ = e.c.List(context.Background(), events, client.InNamespace("default"))
		for _, ev := range events.Items {
			if ev.Reason == "CheckpointSkipped" {
				n += max(ev.Count, 1)
				if ev.Series != nil {
					n += ev.Series.Count - 1
				}
				msgs = append(msgs, ev.Message)
			}
		}
		return n, msgs
	}
	eventually(t, "a CheckpointSkipped Event", 5*time.Second, func() bool {
		n, _ := skipped()
		return n > 0
	})
	// A second unchanged look is recorded in status, and is not one more Event.
	looked := waitFor(t, e.c, "tick", 15*time.Second, func(h *v1.Hook) bool { return h.Status.IntervalCheckedAt != nil })
	waitFor(t, e.c, "tick", 15*time.Second, func(h *v1.Hook) bool {
		return h.Status.IntervalCheckedAt != nil && h.Status.IntervalCheckedAt.After(looked.Status.IntervalCheckedAt.Time)
	})
	time.Sleep(500 * time.Millisecond)
	if n, msgs := skipped(); n != 1 || !strings.Contains(msgs[0], "nothing changed") || !strings.Contains(msgs[0], "since checkpoint "+lc.Name+" ") {
		t.Errorf("%d CheckpointSkipped Events after two unchanged looks (%q), want 1 naming checkpoint %s", n, msgs, lc.Name)
	}
	// Changed: the next one is taken.
	if err := os.WriteFile(filepath.Join(h.Spec.Workspace, "work.txt"), []byte("progress\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := waitFor(t, e.c, "tick", 15*time.Second, func(h *v1.Hook) bool {
		return h.Status.LastCheckpoint != nil && h.Status.LastCheckpoint.Seq > lc.Seq
	})
	cp := &v1.Checkpoint{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: second.Status.LastCheckpoint.Name}, cp); err != nil {
		t.Fatal(err)
	}
	if len(cp.Spec.Files) != 1 || cp.Spec.Files[0].Path != "work.txt" || cp.Spec.Files[0].Change != v1.FileAdded {
		t.Errorf("second interval checkpoint files %+v, want work.txt added", cp.Spec.Files)
	}
	// A step that no longer runs gets no interval checkpoints.
	agent(t, e.c, "tick", hookfsm.Input{Event: hookfsm.Await, Message: "question"})
	time.Sleep(2 * interval)
	after := &v1.Hook{}
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "tick"}, after); err != nil {
		t.Fatal(err)
	}
	if after.Status.CheckpointSeq != second.Status.CheckpointSeq {
		t.Errorf("checkpoint taken while awaiting a human: seq %d → %d", second.Status.CheckpointSeq, after.Status.CheckpointSeq)
	}
}

func TestIntervalDue(t *testing.T) {
	at := func(s int) *metav1.Time { return &metav1.Time{Time: t0.Add(time.Duration(s) * time.Second)} }
	tests := []struct {
		name string
		st   v1.HookStatus
		want time.Time
	}{
		{"from the step's start", v1.HookStatus{CurrentStep: &v1.CurrentStep{StartedAt: at(0)}}, t0.Add(time.Minute)},
		{"from a later checkpoint", v1.HookStatus{CurrentStep: &v1.CurrentStep{StartedAt: at(0)}, LastCheckpoint: &v1.LastCheckpoint{Time: *at(30)}}, t0.Add(90 * time.Second)},
		{"from the step's start after an older checkpoint", v1.HookStatus{CurrentStep: &v1.CurrentStep{StartedAt: at(30)}, LastCheckpoint: &v1.LastCheckpoint{Time: *at(10)}}, t0.Add(90 * time.Second)},
		{"from the last look that took nothing", v1.HookStatus{CurrentStep: &v1.CurrentStep{StartedAt: at(0)}, LastCheckpoint: &v1.LastCheckpoint{Time: *at(10)}, IntervalCheckedAt: at(70)}, t0.Add(130 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := controllers.IntervalDue(&v1.Hook{Status: tt.st}, time.Minute); !got.Equal(tt.want) {
				t.Errorf("IntervalDue = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestCheckpointsOnKubeAPIServer runs the Checkpoint reconciler against a
// real kube-apiserver: pruning goes through the finalizer, which deletes
// the refs, and the spec stays immutable while the finalizer is edited.
// (envtest runs no garbage collector, so the owner cascade is proven on
// the file store only.)
func TestCheckpointsOnKubeAPIServer(t *testing.T) {
	env := testenv.Start(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Client.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.SetupAll(mgr, controllers.Options{Config: testConfig(t), SkipNameValidation: true, CheckpointVerifyPeriod: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	c := env.Client
	h := newHook("kube", time.Hour, "build")
	h.Spec.Workspace = gitRepo(t)
	h.Spec.MaxCheckpoints = 2
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	var last *v1.Checkpoint
	for i := range 4 {
		if err := os.WriteFile(filepath.Join(h.Spec.Workspace, "f"), []byte(strings.Repeat("y", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := checkpoint.Take(ctx, c, client.ObjectKeyFromObject(h), checkpoint.Request{Trigger: v1.TriggerManual})
		if err != nil {
			t.Fatal(err)
		}
		last = out.Checkpoint
	}
	eventually(t, "pruned to 2 checkpoints and refs", 30*time.Second, func() bool {
		return slices.Equal(checkpointNames(t, c, "kube"), []string{"kube-3", "kube-4"}) &&
			slices.Equal(refSeqs(t, h.Spec.Workspace, "kube"), []int64{3, 4})
	})
	// The Checkpoint reconciler may write the object meanwhile: a conflict
	// is retried, so that the answer is the one to the spec change.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &v1.Checkpoint{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(last), got); err != nil {
			return err
		}
		got.Spec.Description = "rewritten"
		return c.Update(ctx, got)
	})
	if err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("updating a Checkpoint's spec: %v, want the immutability rule", err)
	}
}

// TestCheckpointFinalizerLeavesForeignRefs: a Checkpoint whose ref is not
// tether's (outside refs/tether/, or no valid ref name) is deleted at once
// with an Event naming the ref, which stays: no retry could delete it.
func TestCheckpointFinalizerLeavesForeignRefs(t *testing.T) {
	e := newStore(t)
	e.startCheckpointManager(t, testConfig(t))
	h := checkpointHook(t, e, "foreign", nil)
	base := take(t, e, "foreign", 1)[0]
	out, err := exec.Command("git", "-C", h.Spec.Workspace, "symbolic-ref", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	branch := strings.TrimSpace(string(out))
	for i, ref := range []string{branch, "refs/tether/../" + strings.TrimPrefix(branch, "refs/")} {
		cp := &v1.Checkpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("foreign-x%d", i),
			Finalizers: base.Finalizers, OwnerReferences: base.OwnerReferences}, Spec: *base.Spec.DeepCopy()}
		cp.Spec.Git.SnapshotRef = ref
		if err := e.c.Create(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Delete(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the checkpoint with ref "+ref+" deleted at once", 10*time.Second, func() bool {
			err := e.c.Get(context.Background(), client.ObjectKeyFromObject(cp), &v1.Checkpoint{})
			return apierrors.IsNotFound(err)
		})
		eventually(t, "an Event names "+ref, 5*time.Second, func() bool {
			events := &corev1.EventList{}
			_ = e.c.List(context.Background(), events, client.InNamespace("default"))
			for _, ev := range events.Items {
				if ev.Reason == "SnapshotRefNotDeleted" && strings.Contains(ev.Message, ref) && strings.Contains(ev.Message, "not a tether ref") {
					return true
				}
			}
			return false
		})
	}
	if out, err := exec.Command("git", "-C", h.Spec.Workspace, "rev-parse", "--verify", branch).CombinedOutput(); err != nil {
		t.Errorf("the branch a foreign Checkpoint named is gone: %v %s", err, out)
	}
}

// TestIntervalCheckpointsOfAWorkspaceNotOwned runs the operator on
// kube-apiserver beside a workspace it cannot read: owned by another user
// (git refuses it) when the test runs as root, else with no permissions
// for anyone but root. The Hook gets IntervalCheckpoints=False with a
// typed reason and a message naming the workspace and the users, not
// git's text, and one Warning Event; once the workspace is readable again
// the next interval takes a checkpoint and the condition turns True.
func TestIntervalCheckpointsOfAWorkspaceNotOwned(t *testing.T) {
	env := testenv.Start(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Client.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.SetupAll(mgr, controllers.Options{Config: testConfig(t), SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, mgr)
	c := env.Client
	ws := gitRepo(t)
	reason, want := controllers.ReasonWorkspaceNotOwned, "belongs to uid 4242 and this process runs as uid 0"
	refuse := func() error {
		return filepath.Walk(ws, func(p string, _ os.FileInfo, err error) error { return errors.Join(err, os.Lchown(p, 4242, 4242)) })
	}
	allow := func() error {
		return filepath.Walk(ws, func(p string, _ os.FileInfo, err error) error { return errors.Join(err, os.Lchown(p, 0, 0)) })
	}
	if os.Getuid() != 0 {
		reason, want = controllers.ReasonWorkspaceUnreadable, "permission denied to uid"
		refuse = func() error { return os.Chmod(ws, 0) }
		allow = func() error { return os.Chmod(ws, 0o755) }
	}
	if err := refuse(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = allow() })

	h := newHook("unowned", time.Hour, "build")
	h.Spec.Workspace = ws
	h.Spec.CheckpointInterval = &metav1.Duration{Duration: time.Second}
	if err := c.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "unowned", 10*time.Second, state(v1.HookStepPending))
	agent(t, c, "unowned", hookfsm.Input{Event: hookfsm.Begin})
	got := waitFor(t, c, "unowned", 15*time.Second, func(h *v1.Hook) bool {
		return meta.FindStatusCondition(h.Status.Conditions, controllers.ConditionIntervalCheckpoints) != nil
	})
	cond := meta.FindStatusCondition(got.Status.Conditions, controllers.ConditionIntervalCheckpoints)
	t.Logf("IntervalCheckpoints %s/%s: %s", cond.Status, cond.Reason, cond.Message)
	if cond.Status != metav1.ConditionFalse || cond.Reason != reason || !strings.Contains(cond.Message, ws) || !strings.Contains(cond.Message, want) ||
		strings.Contains(cond.Message, "dubious") || strings.Contains(cond.Message, "fatal:") {
		t.Errorf("IntervalCheckpoints %s/%s %q; want False/%s naming %s and %q, without git's text", cond.Status, cond.Reason, cond.Message, reason, ws, want)
	}
	// Later looks keep the condition and add no Event.
	looked := waitFor(t, c, "unowned", 15*time.Second, func(h *v1.Hook) bool { return h.Status.IntervalCheckedAt != nil })
	waitFor(t, c, "unowned", 15*time.Second, func(h *v1.Hook) bool {
		return h.Status.IntervalCheckedAt.After(looked.Status.IntervalCheckedAt.Time)
	})
	events := &corev1.EventList{}
	if err := c.List(context.Background(), events, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, ev := range events.Items {
		if ev.InvolvedObject.Name == "unowned" && ev.Type == corev1.EventTypeWarning {
			warnings = append(warnings, ev.Reason+": "+ev.Message)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], reason+": ") {
		t.Errorf("Warning Events %q; want one %s", warnings, reason)
	}

	if err := allow(); err != nil {
		t.Fatal(err)
	}
	got = waitFor(t, c, "unowned", 15*time.Second, func(h *v1.Hook) bool { return h.Status.LastCheckpoint != nil })
	if got.Status.LastCheckpoint.Trigger != v1.TriggerInterval {
		t.Errorf("last checkpoint %+v, want an interval one", got.Status.LastCheckpoint)
	}
	got = waitFor(t, c, "unowned", 15*time.Second, func(h *v1.Hook) bool {
		c := meta.FindStatusCondition(h.Status.Conditions, controllers.ConditionIntervalCheckpoints)
		return c != nil && c.Status == metav1.ConditionTrue
	})
	if cond := meta.FindStatusCondition(got.Status.Conditions, controllers.ConditionIntervalCheckpoints); cond.Reason != controllers.ReasonWorkspaceReadable {
		t.Errorf("IntervalCheckpoints %+v once readable, want True/%s", cond, controllers.ReasonWorkspaceReadable)
	}
}

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
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/hook/claim"
)

// waitWorker polls the stored Worker until cond holds.
func waitWorker(t *testing.T, c client.Client, name string, cond func(*v1.Worker) bool) *v1.Worker {
	t.Helper()
	var w *v1.Worker
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		w = &v1.Worker{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, w); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(w), nil
	})
	if err != nil {
		t.Fatalf("worker %s: condition not reached; last status %+v", name, w.Status)
	}
	return w
}

// TestRestartedWorkerLosesItsHook covers a Worker whose crash and restart
// are one status write, so it is Running again when the Hook reconciler
// looks: the Hook the dead process held is freed (recovering,
// assignee_lost, assignee cleared) by the Hook's own reconciler, and a
// claim the restarted Worker makes afterwards is kept.
func TestRestartedWorkerLosesItsHook(t *testing.T) {
	env := newStore(t)
	ctx := context.Background()
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"}}
	w.Spec.Command = []string{"sleep", "100008"}
	w.Spec.Restart = v1.RestartPolicy{Auto: true, MaxCrashes: 10, Window: &metav1.Duration{Duration: time.Minute}}
	if err := env.c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := env.c.Create(ctx, newHook("task", time.Hour, "one")); err != nil {
		t.Fatal(err)
	}
	env.startManager(t, testConfig(t))
	t.Cleanup(func() {
		got := &v1.Worker{}
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(w), got); err == nil && got.Status.PID != 0 {
			_ = syscall.Kill(int(got.Status.PID), syscall.SIGKILL)
		}
	})
	running := func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning && w.Status.PID != 0 }
	w = waitWorker(t, env.c, "agent", running)
	claimTask := func() {
		t.Helper()
		// The Hook reconciler may write the Hook's status between the
		// claim's read and write: retry as `tether claim` users do.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			_, err := claim.One(ctx, env.c, client.ObjectKey{Namespace: "default", Name: "task"}, "agent")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, env.c, "task", 10*time.Second, state(v1.HookStepPending))
	claimTask()
	claimed := waitFor(t, env.c, "task", 10*time.Second, func(h *v1.Hook) bool { return h.Spec.Assignee == "agent" })

	old := w.Status.PID
	if err := syscall.Kill(int(old), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w = waitWorker(t, env.c, "agent", func(w *v1.Worker) bool { return running(w) && w.Status.PID != old })
	if c := w.Status.Crashes; len(c) != 1 || !c[0].Restarted || len(c[0].Held) != 1 || c[0].Held[0] != (v1.HeldHook{Name: "task", Generation: claimed.Generation}) {
		t.Fatalf("crash records %+v; want one, restarted, holding task at generation %d", c, claimed.Generation)
	}
	freed := waitFor(t, env.c, "task", 10*time.Second, func(h *v1.Hook) bool { return h.Spec.Assignee == "" })
	if rec := freed.Status.Recovery; freed.Status.State != v1.HookRecovering || rec == nil || rec.CrashType != v1.CrashAssigneeLost {
		t.Fatalf("freed hook: state %s, recovery %+v; want recovering with assignee_lost", freed.Status.State, rec)
	}
	if last := freed.Status.History[len(freed.Status.History)-1]; last.Actor != controllers.HookControllerName {
		t.Fatalf("the interrupt was written by %q, want the hook controller", last.Actor)
	}

	// The restarted Worker claims the Hook back: that claim is kept, even
	// though the crash record still names the Hook.
	claimTask()
	kept := waitFor(t, env.c, "task", 10*time.Second, func(h *v1.Hook) bool { return h.Status.ObservedGeneration == h.Generation })
	if kept.Spec.Assignee != "agent" || kept.Status.State != v1.HookRecovering {
		t.Fatalf("after the reclaim the hook controller left assignee %q, state %s; want agent, recovering", kept.Spec.Assignee, kept.Status.State)
	}
}

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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// heldStates drives a Hook, one input after another, into each state a
// Worker can hold it in when it ends.
var heldStates = []struct {
	state v1.HookState
	ins   []hookfsm.Input
}{
	{v1.HookStepRunning, []hookfsm.Input{{Event: hookfsm.Begin}}},
	{v1.HookRecovering, []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashManual}}}},
	{v1.HookAwaitingHuman, []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Await, Message: "which database?"}}},
	{v1.HookCompleted, []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Validate}, {Event: hookfsm.Pass}}},
	{v1.HookFailed, []hookfsm.Input{{Event: hookfsm.Begin}, {Event: hookfsm.Fail, Message: "cannot be done"}}},
	{v1.HookAbandoned, []hookfsm.Input{{Event: hookfsm.Abandon, Message: "not needed"}}},
}

// TestLostAssigneeInEveryHeldState ends the Worker holding a Hook, by a
// clean exit (phase Stopped) and by deleting it, in every state the Hook
// can be held in. The reconcile never fails: a Hook at work is
// interrupted; one recovering, awaiting a person or finished keeps its
// state and history, with no transition attempted. In every case the
// assignee is released, so that the Worker's finalizer can complete.
func TestLostAssigneeInEveryHeldState(t *testing.T) {
	for _, held := range heldStates {
		for _, end := range []string{"stopped", "deleted"} {
			t.Run(string(held.state)+"/"+end, func(t *testing.T) {
				env := newStore(t)
				ctx := context.Background()
				w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", Finalizers: []string{controllers.WorkerFinalizer}}}
				if err := env.c.Create(ctx, w); err != nil {
					t.Fatal(err)
				}
				h := newHook("task", time.Hour, "only")
				h.Spec.Assignee = "agent"
				if err := env.c.Create(ctx, h); err != nil {
					t.Fatal(err)
				}
				for _, in := range held.ins {
					h = agent(t, env.c, "task", in)
				}
				if h.Status.State != held.state {
					t.Fatalf("driven to %s, want %s", h.Status.State, held.state)
				}
				switch end {
				case "stopped":
					w.Status.Phase = v1.WorkerStopped
					if err := env.c.Status().Update(ctx, w); err != nil {
						t.Fatal(err)
					}
				case "deleted":
					if err := env.c.Delete(ctx, w); err != nil {
						t.Fatal(err)
					}
				}
				r := &controllers.HookReconciler{
					Client: env.c, Events: env.mgr.GetEventRecorder(controllers.HookControllerName), Config: testConfig(t),
				}
				req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "task"}}
				for range 2 {
					if _, err := r.Reconcile(ctx, req); err != nil {
						t.Fatalf("reconcile of a hook held in %s by a %s worker: %v", held.state, end, err)
					}
				}
				got := &v1.Hook{}
				if err := env.c.Get(ctx, req.NamespacedName, got); err != nil {
					t.Fatal(err)
				}
				if got.Spec.Assignee != "" {
					t.Fatalf("assignee %q kept; want it released", got.Spec.Assignee)
				}
				interrupted := held.state == v1.HookStepRunning
				switch {
				case interrupted:
					if rec := got.Status.Recovery; got.Status.State != v1.HookRecovering || rec == nil || rec.CrashType != v1.CrashAssigneeLost {
						t.Fatalf("state %s, recovery %+v; want recovering with assignee_lost", got.Status.State, rec)
					}
				case got.Status.State != held.state || len(got.Status.History) != len(h.Status.History):
					t.Fatalf("state %s with %d history entries; want %s with %d: no transition", got.Status.State,
						len(got.Status.History), held.state, len(h.Status.History))
				}
				if ready := condition(got, v1.ConditionReady); ready.Reason == v1.ReasonInvalidStatus {
					t.Fatalf("Ready = %s: %s", ready.Reason, ready.Message)
				}
				if err := env.mgr.Close(); err != nil {
					t.Fatal(err)
				}
				reason, typ := controllers.EventAssigneeLost, corev1.EventTypeWarning
				if held.state.IsTerminal() {
					reason, typ = controllers.EventAssigneeReleased, corev1.EventTypeNormal
				}
				var events corev1.EventList
				if err := env.c.List(ctx, &events, client.InNamespace("default")); err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, e := range events.Items {
					if e.InvolvedObject.Name != "task" || (e.Reason != controllers.EventAssigneeLost && e.Reason != controllers.EventAssigneeReleased) {
						continue
					}
					n++
					if e.Reason != reason || e.Type != typ {
						t.Errorf("event %s %s: %s; want %s %s", e.Type, e.Reason, e.Message, typ, reason)
					}
				}
				if n != 1 {
					t.Errorf("%d assignee events, want 1", n)
				}
			})
		}
	}
}

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

package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestNoticedCrashFreesTheHookBeforeItsRecord drives the Hook reconciler
// alone, on a store whose Worker still shows its process running (its
// crash record is not stored yet), with the exit notices the Worker
// reconciler posts. A notice frees the Hook it holds at the generation it
// lists, by the same rule as the stored record would, and nothing else.
func TestNoticedCrashFreesTheHookBeforeItsRecord(t *testing.T) {
	crash := func(gen int64, clears bool) *v1.Worker {
		w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"}}
		if !clears {
			w.Spec.ClearAssigneeOnCrash = ptr.To(false)
		}
		w.Status.Phase = v1.WorkerRunning
		w.Status.Restarts = 1
		w.Status.Crashes = []v1.CrashRecord{{
			Time: metav1.Now(), PID: 4242, Reason: "Signaled", Signal: ptr.To[int32](9), Restarted: true,
			Hook: "task", Held: []v1.HeldHook{{Name: "task", Generation: gen}},
		}}
		return w
	}
	tests := []struct {
		name string
		// post posts the notices, given the Hook's generation when claimed.
		post func(n *exitNotices, gen int64)
		// claimAgain claims the Hook again after the crash, as the
		// restarted process does, and the reconciler's cache has not
		// seen it.
		claimAgain bool
		freed      bool
	}{
		{"noticed at the held generation", func(n *exitNotices, gen int64) {
			n.publish(crash(gen, true), 4242, []v1.HeldHook{{Name: "task", Generation: gen}})
		}, false, true},
		{"nothing noticed", func(*exitNotices, int64) {}, false, false},
		{"noticed at an older generation: claimed since", func(n *exitNotices, gen int64) {
			n.publish(crash(gen-1, true), 4242, nil)
		}, false, false},
		{"noticed, but the worker keeps its hooks", func(n *exitNotices, gen int64) {
			n.publish(crash(gen, false), 4242, nil)
		}, false, false},
		{"withdrawn once recorded", func(n *exitNotices, gen int64) {
			n.publish(crash(gen, true), 4242, nil)
			n.withdraw(client.ObjectKey{Namespace: "default", Name: "agent"}, 4242)
		}, false, false},
		{"a newer notice outlives the withdrawal of an older one", func(n *exitNotices, gen int64) {
			n.publish(crash(gen-1, true), 4141, nil)
			n.publish(crash(gen, true), 4242, nil)
			n.withdraw(client.ObjectKey{Namespace: "default", Name: "agent"}, 4141)
		}, false, true},
		{"forgotten with its worker", func(n *exitNotices, gen int64) {
			n.publish(crash(gen, true), 4242, nil)
			n.forget(client.ObjectKey{Namespace: "default", Name: "agent"})
		}, false, false},
		{"claimed again since, cache behind", func(n *exitNotices, gen int64) {
			n.publish(crash(gen, true), 4242, nil)
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := testsupport.Store(t, "")
			c := st.Client()
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"}}
			w.Spec.Command = []string{"sleep", "1000"}
			if err := c.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			w.Status.Phase, w.Status.PID = v1.WorkerRunning, 4343
			if err := c.Status().Update(ctx, w); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKey{Namespace: "default", Name: "task"}
			h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
			h.Spec.Goal, h.Spec.Steps = "g", []v1.Step{{Name: "one"}}
			if err := c.Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			h, _, err := hookwrite.Transition(ctx, c, key, hookwrite.Input(hookfsm.Input{Event: hookfsm.Begin}), hookwrite.Options{Actor: "test-agent"})
			if err != nil {
				t.Fatal(err)
			}
			h.Spec.Assignee = "agent"
			if err := c.Update(ctx, h); err != nil {
				t.Fatal(err)
			}
			cached := h.DeepCopy()
			reader := client.Client(c)
			if tt.claimAgain {
				h.Spec.Goal = "g, claimed again"
				if err := c.Update(ctx, h); err != nil {
					t.Fatal(err)
				}
				reader = interceptor.NewClient(c, interceptor.Funcs{
					Get: func(ctx context.Context, cl client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if hk, ok := obj.(*v1.Hook); ok && k == key {
							cached.DeepCopyInto(hk)
							return nil
						}
						return cl.Get(ctx, k, obj, opts...)
					},
				})
			}
			before := &v1.Hook{}
			if err := c.Get(ctx, key, before); err != nil {
				t.Fatal(err)
			}
			t.Setenv(config.HomeEnv, t.TempDir())
			cfg, err := config.Load("")
			if err != nil {
				t.Fatal(err)
			}
			rec := events.NewFakeRecorder(16)
			r := &HookReconciler{Client: reader, Reader: reader, Events: rec, Config: cfg, exits: newExitNotices()}
			tt.post(r.exits, cached.Generation)
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			got := &v1.Hook{}
			if err := c.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			stored := &v1.Worker{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(w), stored); err != nil {
				t.Fatal(err)
			}
			if len(stored.Status.Crashes) != 0 {
				t.Fatalf("the hook reconciler wrote the worker: crashes %+v", stored.Status.Crashes)
			}
			if !tt.freed {
				if got.Spec.Assignee != "agent" || got.Status.State != before.Status.State {
					t.Fatalf("hook: assignee %q, state %s; want it kept by agent, %s", got.Spec.Assignee, got.Status.State, before.Status.State)
				}
				return
			}
			if got.Spec.Assignee != "" || got.Status.State != v1.HookRecovering || got.Status.Recovery == nil || got.Status.Recovery.CrashType != v1.CrashAssigneeLost {
				t.Fatalf("hook: assignee %q, state %s, recovery %+v; want freed, recovering with assignee_lost", got.Spec.Assignee, got.Status.State, got.Status.Recovery)
			}
			select {
			case e := <-rec.Events:
				if !strings.Contains(e, EventAssigneeLost) || !strings.Contains(e, "pid 4242 killed by signal 9") {
					t.Fatalf("event %q; want %s naming the dead process", e, EventAssigneeLost)
				}
			case <-time.After(time.Second):
				t.Fatal("no AssigneeLost event")
			}
		})
	}
}

// TestExitNoticeRequestsItsHooks checks that a notice asks for a reconcile
// of each Hook the dead process held, and that a full queue never blocks
// the Worker reconciler that posts it.
func TestExitNoticeRequestsItsHooks(t *testing.T) {
	n := newExitNotices()
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"}}
	n.publish(w, 1, []v1.HeldHook{{Name: "a", Generation: 1}, {Name: "b", Generation: 2}})
	var got []string
	for range 2 {
		e := <-n.hooks
		got = append(got, e.Object.GetNamespace()+"/"+e.Object.GetName())
	}
	if strings.Join(got, " ") != "ns/a ns/b" {
		t.Fatalf("requests %v; want ns/a ns/b", got)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range cap(n.hooks) + 10 {
			n.publish(w, 2, []v1.HeldHook{{Name: "a", Generation: 1}})
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("publish blocked on a full queue")
	}
	if p := n.lookup(client.ObjectKey{Namespace: "ns", Name: "agent"}); p == nil || p.Name != "agent" {
		t.Fatalf("lookup = %v; want the posted worker", p)
	}
}

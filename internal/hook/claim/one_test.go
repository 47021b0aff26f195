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

package claim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/claim"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// TestOneRacingWrites: a claim whose write loses to a reconciler's status
// write decides again and wins; one that loses to another claimer is a
// Conflict naming the holder.
func TestOneRacingWrites(t *testing.T) {
	tests := []struct {
		name string
		// meanwhile changes the stored Hook between the claim's read and
		// its write.
		meanwhile func(h *v1.Hook) (status bool)
		wantErr   string
		wantHeld  string
	}{
		{name: "no race", wantHeld: "agent"},
		{name: "a reconciler's status write", wantHeld: "agent",
			meanwhile: func(h *v1.Hook) bool { h.Status.State = v1.HookRecovering; return true }},
		{name: "another claimer", wantErr: "held by worker other", wantHeld: "other",
			meanwhile: func(h *v1.Hook) bool { h.Spec.Assignee = "other"; return false }},
		{name: "abandoned meanwhile", wantErr: "nothing to claim",
			meanwhile: func(h *v1.Hook) bool { h.Status.State = v1.HookAbandoned; return true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			key := client.ObjectKey{Namespace: "default", Name: "task"}
			hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"}}
			hook.Spec.Goal, hook.Spec.Steps = "g", []v1.Step{{Name: "one"}}
			hook.Status.State = v1.HookStepPending
			worker := func(name string) *v1.Worker {
				w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
				w.Status.Phase = v1.WorkerRunning
				return w
			}
			raced := false
			c := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Hook{}, &v1.Worker{}).
				WithObjects(hook, worker("agent"), worker("other")).
				WithInterceptorFuncs(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if tt.meanwhile != nil && !raced {
						raced = true
						stored := &v1.Hook{}
						if err := c.Get(ctx, key, stored); err != nil {
							return err
						}
						write := c.Update
						if tt.meanwhile(stored) {
							write = func(ctx context.Context, obj client.Object, _ ...client.UpdateOption) error {
								return c.Status().Update(ctx, obj)
							}
						}
						if err := write(ctx, stored); err != nil {
							return err
						}
					}
					return c.Update(ctx, obj, opts...)
				}}).Build()

			_, err = claim.One(ctx, c, key, "agent")
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("One: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("One: %v; want an error saying %q", err, tt.wantErr)
			case strings.Contains(tt.wantErr, "held by") && !apierrors.IsConflict(err):
				t.Errorf("One: %v is not a Conflict", err)
			}
			got := &v1.Hook{}
			if err := c.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.Assignee != tt.wantHeld {
				t.Errorf("assignee %q, want %q", got.Spec.Assignee, tt.wantHeld)
			}
		})
	}
}

// TestOneAfterACrashOfItsWorker: a process restarted after a crash that
// claims its Hook at once finds it still held by its own Worker, while a
// crash record lists it at its present generation; the Hook reconciler is
// about to free it. The claim must wait for the free and claim the Hook
// anew, not return the hold that is about to go. With no reconciler to
// free it, the claim stands after FreeingWait.
func TestOneAfterACrashOfItsWorker(t *testing.T) {
	for _, tc := range []struct {
		name    string
		freeing bool
	}{
		{name: "the reconciler frees it", freeing: true},
		{name: "no reconciler runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claim.FreeingWait = 300 * time.Millisecond
			defer func() { claim.FreeingWait = 5 * time.Second }()
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			key := client.ObjectKey{Namespace: "default", Name: "task"}
			hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task", Generation: 2}}
			hook.Spec.Goal, hook.Spec.Steps, hook.Spec.Assignee = "g", []v1.Step{{Name: "one"}}, "agent"
			hook.Status.State = v1.HookStepPending
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent"}}
			w.Status.Phase = v1.WorkerRunning
			w.Status.Crashes = []v1.CrashRecord{{PID: 41, Reason: "Exited", Held: []v1.HeldHook{{Name: "task", Generation: 2}}}}
			c := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Hook{}, &v1.Worker{}).
				WithObjects(hook, w).Build()
			freed := make(chan struct{})
			if tc.freeing {
				go func() {
					defer close(freed)
					time.Sleep(50 * time.Millisecond)
					h := &v1.Hook{}
					if err := c.Get(ctx, key, h); err != nil {
						t.Error(err)
						return
					}
					h.Spec.Assignee = ""
					h.Generation++
					if err := c.Update(ctx, h); err != nil {
						t.Error(err)
					}
				}()
			} else {
				close(freed)
			}
			start := time.Now()
			got, err := claim.One(ctx, c, key, "agent")
			if err != nil {
				t.Fatalf("One: %v", err)
			}
			<-freed
			stored := &v1.Hook{}
			if err := c.Get(ctx, key, stored); err != nil {
				t.Fatal(err)
			}
			if stored.Spec.Assignee != "agent" || got.Spec.Assignee != "agent" {
				t.Errorf("assignee %q (returned %q) after the claim, want agent: the claim returned before the free", stored.Spec.Assignee, got.Spec.Assignee)
			}
			if waited := time.Since(start); !tc.freeing && waited < claim.FreeingWait {
				t.Errorf("the claim returned after %v, before FreeingWait", waited)
			}
		})
	}
}

// TestOneBeforeTheCrashRecordOfItsPredecessor: a process restarted after a
// crash starts before its predecessor's crash record is written, and may
// claim at once, finding the Hook held by its own Worker with no record
// listing it. A claimer inside that launch (its launch token counts one
// restart more than the status) waits for the record and the free, and
// claims anew; a claimer outside it does not wait.
func TestOneBeforeTheCrashRecordOfItsPredecessor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		token    string
		wantWait bool
	}{
		{name: "the restarted process", token: "uid-1.1", wantWait: true},
		{name: "the recorded process", token: "uid-1.0"},
		{name: "another worker's launch", token: "uid-2.1"},
		{name: "no launch token"},
		{name: "a damaged token", token: "uid-1.x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claim.FreeingWait = 2 * time.Second
			defer func() { claim.FreeingWait = 5 * time.Second }()
			t.Setenv(supervise.LaunchTokenEnv, tc.token)
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			key := client.ObjectKey{Namespace: "default", Name: "task"}
			hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task", Generation: 2}}
			hook.Spec.Goal, hook.Spec.Steps, hook.Spec.Assignee = "g", []v1.Step{{Name: "one"}}, "agent"
			hook.Status.State = v1.HookStepPending
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent", UID: "uid-1"}}
			w.Status.Phase = v1.WorkerRunning
			c := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Hook{}, &v1.Worker{}).
				WithObjects(hook, w).Build()
			// The Worker reconciler records the crash and the restart in one
			// write; the Hook reconciler then frees the Hook.
			done := make(chan struct{})
			go func() {
				defer close(done)
				time.Sleep(100 * time.Millisecond)
				stored := &v1.Worker{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(w), stored); err != nil {
					t.Error(err)
					return
				}
				stored.Status.Restarts = 1
				stored.Status.Crashes = []v1.CrashRecord{{PID: 41, Reason: "Exited", Restarted: true, Held: []v1.HeldHook{{Name: "task", Generation: 2}}}}
				if err := c.Status().Update(ctx, stored); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(100 * time.Millisecond)
				h := &v1.Hook{}
				if err := c.Get(ctx, key, h); err != nil {
					t.Error(err)
					return
				}
				if h.Spec.Assignee != "agent" || h.Generation != 2 {
					return // claimed anew already: the record no longer applies
				}
				h.Spec.Assignee = ""
				h.Generation++
				if err := c.Update(ctx, h); err != nil {
					t.Error(err)
				}
			}()
			start := time.Now()
			if _, err := claim.One(ctx, c, key, "agent"); err != nil {
				t.Fatalf("One: %v", err)
			}
			waited := time.Since(start)
			<-done
			stored := &v1.Hook{}
			if err := c.Get(ctx, key, stored); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantWait && stored.Spec.Assignee != "agent":
				t.Errorf("assignee %q after the claim and the free, want agent: the claim returned before its predecessor's record", stored.Spec.Assignee)
			case !tc.wantWait && waited >= 100*time.Millisecond:
				t.Errorf("the claim waited %v outside the unrecorded launch", waited)
			}
		})
	}
}

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

package hookwrite_test

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestReadModifyWrite holds Update and UpdateStatus to one contract: a
// write that loses to another change reads again and decides again; an
// error of the mutation, a Conflict among them, ends it and writes
// nothing; nothing changed writes nothing; and a status write that
// changes status.state outside a transition is refused.
func TestReadModifyWrite(t *testing.T) {
	held := apierrors.NewConflict(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "hooks"}, "task", errors.New("held by worker w"))
	type write func(ctx context.Context, c client.Client, key client.ObjectKey, m hookwrite.Mutate) (*v1.Hook, error)
	writes := map[string]write{"Update": hookwrite.Update, "UpdateStatus": hookwrite.UpdateStatus}
	cases := []struct {
		name       string
		lostWrites int
		mutate     func(h *v1.Hook) (bool, error)
		wantErr    func(error) bool
		wantCalls  int
		wantWrites int
	}{
		{name: "a change is written", mutate: touch, wantCalls: 1, wantWrites: 1},
		{name: "a lost write reads and decides again", lostWrites: 2, mutate: touch, wantCalls: 3, wantWrites: 3},
		{name: "no change writes nothing", mutate: func(*v1.Hook) (bool, error) { return false, nil }, wantCalls: 1},
		{name: "a conflict the mutation decides is not retried", mutate: func(*v1.Hook) (bool, error) { return false, held },
			wantErr: func(err error) bool { return errors.Is(err, held) }, wantCalls: 1},
	}
	for wname, w := range writes {
		for _, c := range cases {
			t.Run(wname+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				base := testsupport.Store(t, "").Client()
				key := createHook(ctx, t, base)
				writesSeen, lost := 0, c.lostWrites
				countWrite := func() error {
					writesSeen++
					if lost > 0 {
						lost--
						return apierrors.NewConflict(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "hooks"}, key.Name, errors.New("lost"))
					}
					return nil
				}
				cl := interceptor.NewClient(base, interceptor.Funcs{
					Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
						if err := countWrite(); err != nil {
							return err
						}
						return cl.Update(ctx, obj, opts...)
					},
					SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
						if err := countWrite(); err != nil {
							return err
						}
						return cl.SubResource(sub).Update(ctx, obj, opts...)
					},
				})
				calls := 0
				_, err := w(ctx, cl, key, func(h *v1.Hook) (bool, error) { calls++; return c.mutate(h) })
				if c.wantErr == nil && err != nil || c.wantErr != nil && !c.wantErr(err) {
					t.Fatalf("error %v", err)
				}
				if calls != c.wantCalls || writesSeen != c.wantWrites {
					t.Fatalf("mutate ran %d times and %d writes were made; want %d and %d", calls, writesSeen, c.wantCalls, c.wantWrites)
				}
			})
		}
	}
}

// TestUpdateStatusRefusesAStateChange: only a transition changes
// status.state; UpdateStatus writes nothing that does.
func TestUpdateStatusRefusesAStateChange(t *testing.T) {
	ctx := context.Background()
	cl := testsupport.Store(t, "").Client()
	key := createHook(ctx, t, cl)
	if _, _, err := hookwrite.Transition(ctx, cl, key, hookwrite.Input(hookfsm.Input{Event: hookfsm.Initialize}), hookwrite.Options{Actor: "tester"}); err != nil {
		t.Fatal(err)
	}
	before := &v1.Hook{}
	if err := cl.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}
	_, err := hookwrite.UpdateStatus(ctx, cl, key, func(h *v1.Hook) (bool, error) {
		h.Status.State = v1.HookCompleted
		return true, nil
	})
	var se *hookwrite.StateChangeError
	if !errors.As(err, &se) || se.From != before.Status.State || se.To != v1.HookCompleted {
		t.Fatalf("UpdateStatus changing the state: %v; want a StateChangeError from %s to completed", err, before.Status.State)
	}
	after := &v1.Hook{}
	if err := cl.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || after.Status.State != before.Status.State {
		t.Fatalf("the refused write changed the Hook: %s at %s, was %s at %s", after.Status.State, after.ResourceVersion, before.Status.State, before.ResourceVersion)
	}
}

// TestConcurrentWritesAllLand: writers of one Hook that keep losing to each
// other (24 at once, as agents, checkpoints and the reconciler on a busy
// Hook) each land every write, none lost and none refused.
func TestConcurrentWritesAllLand(t *testing.T) {
	ctx := context.Background()
	cl := testsupport.Store(t, "").Client()
	key := createHook(ctx, t, cl)
	const writers, each = 24, 4
	var g errgroup.Group
	for range writers {
		g.Go(func() error {
			for range each {
				if _, err := hookwrite.UpdateStatus(ctx, cl, key, touch); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("a write lost to the others for good: %v", err)
	}
	h := &v1.Hook{}
	if err := cl.Get(ctx, key, h); err != nil {
		t.Fatal(err)
	}
	if h.Status.CheckpointSeq != writers*each {
		t.Errorf("checkpointSeq %d after %d increments", h.Status.CheckpointSeq, writers*each)
	}
}

func touch(h *v1.Hook) (bool, error) {
	if h.Annotations == nil {
		h.Annotations = map[string]string{}
	}
	h.Annotations["touched"] += "x"
	h.Status.CheckpointSeq++
	return true, nil
}

func createHook(ctx context.Context, t *testing.T, cl client.Client) client.ObjectKey {
	t.Helper()
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"},
		Spec: v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}}}
	if err := cl.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(h)
}

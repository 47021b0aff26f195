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

package cli

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/cobra"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/scheme"
)

// TestTransitionRetriesConflicts proves the optimistic-concurrency loop:
// another writer's update between our read and write gives a 409, and the
// verb re-reads and re-applies its event on top of that writer's status.
func TestTransitionRetriesConflicts(t *testing.T) {
	tests := []struct {
		name      string
		conflicts int
		event     hookfsm.Event
		wantState v1.HookState
		wantErr   func(error) bool
	}{
		{"no conflict", 0, hookfsm.Begin, v1.HookStepRunning, nil},
		{"two conflicts", 2, hookfsm.Begin, v1.HookStepRunning, nil},
		{"a rejected event is not retried", 0, hookfsm.Resume, "", func(err error) bool {
			var te *hookfsm.TransitionError
			return errors.As(err, &te)
		}},
		{"conflicts beyond the retry budget", 100, hookfsm.Begin, "", apierrors.IsConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			hook := &v1.Hook{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"},
				Spec:       v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}},
			}
			updates, left := 0, tt.conflicts
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(hook).WithStatusSubresource(hook).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
						updates++
						if left > 0 {
							left--
							return apierrors.NewConflict(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "hooks"}, obj.GetName(), errors.New("modified"))
						}
						return c.SubResource(sub).Update(ctx, obj, opts...)
					},
				}).Build()
			b := &Backend{Client: c, Scheme: s, Namespace: "default"}
			got, err := transition(context.Background(), b, "task", func(*v1.Hook) (hookfsm.Input, error) {
				return hookfsm.Input{Event: tt.event}, nil
			})
			stored := &v1.Hook{}
			if gerr := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "task"}, stored); gerr != nil {
				t.Fatal(gerr)
			}
			if tt.wantErr != nil {
				if err == nil || !tt.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				if stored.Status.State != "" {
					t.Fatalf("a failed transition wrote state %s", stored.Status.State)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != tt.wantState || stored.Status.State != tt.wantState {
				t.Fatalf("returned %s, stored %s, want %s", got.Status.State, stored.Status.State, tt.wantState)
			}
			if updates != tt.conflicts+1 {
				t.Fatalf("%d status updates for %d conflicts", updates, tt.conflicts)
			}
			if n := len(stored.Status.History); n != 2 {
				t.Fatalf("history has %d entries after retries, want initialize and begin once each", n)
			}
		})
	}
}

func TestActorNamesTheVerb(t *testing.T) {
	tests := []struct {
		name, argv0, env string
		args             []string
		want             string
	}{
		{"a verb", "tether", "", []string{"probe"}, "tether probe"},
		{"a nested verb", "tether", "", []string{"step", "probe"}, "tether step probe"},
		{"as a kubectl plugin", "kubectl-tether", "", []string{"step", "probe"}, "tether step probe"},
		{"TETHER_ACTOR wins", "tether", "worker/agent", []string{"step", "probe"}, "worker/agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(ActorEnv, tt.env)
			root := NewRootCommand()
			root.Annotations[cobra.CommandDisplayNameAnnotation] = displayName(tt.argv0)
			var got string
			probe := func() *cobra.Command {
				return &cobra.Command{Use: "probe", RunE: func(cmd *cobra.Command, _ []string) error {
					got = actor(cmd.Context())
					return nil
				}}
			}
			root.AddCommand(probe())
			step, _, err := root.Find([]string{"step"})
			if err != nil || step == root {
				t.Fatalf("no step command: %v", err)
			}
			step.AddCommand(probe())
			root.SetArgs(tt.args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("actor %q, want %q", got, tt.want)
			}
		})
	}
	if got := actor(context.Background()); got != ActorDefault {
		t.Errorf("actor without a verb %q, want %q", got, ActorDefault)
	}
}

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

package retention_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/retention"
)

// TestCollect checks tether gc's choice and deletions: only terminal Hooks
// past their time-to-live, of the namespace or of all, sorted; none
// deleted in a dry run; one gone meanwhile is "already gone", one that
// cannot be deleted says why and the others still go.
func TestCollect(t *testing.T) {
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	hook := func(ns, name string, state v1.HookState, age time.Duration) *v1.Hook {
		at := metav1.NewTime(now.Add(-age))
		return &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: v1.HookStatus{State: state, TerminalAt: &at}}
	}
	month := 31 * 24 * time.Hour
	objs := []client.Object{
		hook("b", "old-done", v1.HookCompleted, month),
		hook("a", "old-failed", v1.HookFailed, month),
		hook("a", "new-done", v1.HookCompleted, time.Hour),
		hook("a", "running", v1.HookStepRunning, month),
		hook("a", "gone", v1.HookAbandoned, month),
		hook("a", "stuck", v1.HookAbandoned, month),
	}
	cases := []struct {
		name      string
		namespace string
		dryRun    bool
		want      []string
		wantLeft  int
	}{
		{name: "one namespace", namespace: "a", want: []string{"a/gone already gone", "a/old-failed deleted", "a/stuck not deleted: locked"}, wantLeft: 5},
		{name: "every namespace", want: []string{"a/gone already gone", "a/old-failed deleted", "a/stuck not deleted: locked", "b/old-done deleted"}, wantLeft: 4},
		{name: "dry run", dryRun: true, want: []string{"a/gone would be deleted (dry run)", "a/old-failed would be deleted (dry run)", "a/stuck would be deleted (dry run)", "b/old-done would be deleted (dry run)"}, wantLeft: 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := v1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			copies := make([]client.Object, len(objs))
			for i, o := range objs {
				copies[i] = o.DeepCopyObject().(client.Object)
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(copies...).WithInterceptorFuncs(interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					switch obj.GetName() {
					case "gone":
						return apierrors.NewNotFound(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "hooks"}, "gone")
					case "stuck":
						return errors.New("locked")
					}
					return c.Delete(ctx, obj, opts...)
				},
			}).Build()
			got, err := retention.Collect(context.Background(), c, tc.namespace, config.Default(""), now, tc.dryRun)
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, r := range got {
				rows = append(rows, r.Hook.Namespace+"/"+r.Hook.Name+" "+r.Result)
				if (r.Err != nil) != (r.Hook.Name == "stuck" && !tc.dryRun) {
					t.Errorf("%s: err %v", r.Hook.Name, r.Err)
				}
			}
			if !slices.Equal(rows, tc.want) {
				t.Errorf("collected %q, want %q", rows, tc.want)
			}
			left := &v1.HookList{}
			if err := c.List(context.Background(), left); err != nil {
				t.Fatal(err)
			}
			if len(left.Items) != tc.wantLeft {
				t.Errorf("%d Hooks left, want %d", len(left.Items), tc.wantLeft)
			}
		})
	}
}

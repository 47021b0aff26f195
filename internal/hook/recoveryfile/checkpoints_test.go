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

package recoveryfile_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

// countingReader counts the Checkpoint lists a reader serves, whether
// one listed the namespace without the index, and how many asked for the
// cache's own objects instead of copies.
type countingReader struct {
	client.Reader
	refuseField bool
	lists       int
	wide        int
	uncopied    int
}

func (r *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.lists++
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	if o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy {
		r.uncopied++
	}
	if o.FieldSelector == nil || o.FieldSelector.Empty() {
		r.wide++
	} else if r.refuseField {
		return errors.New("field label not supported: spec.hookName")
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestHookCheckpointsThroughTheIndex: a cache indexed by spec.hookName
// answers with the Hook's Checkpoints in one list that never reads the
// namespace whole; a reader without the index gives the same Checkpoints
// through a list of the namespace.
func TestHookCheckpointsThroughTheIndex(t *testing.T) {
	sch := runtime.NewScheme()
	if err := v1.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, hook := range []string{"task", "other", "task-2"} {
		for seq := 1; seq <= 3; seq++ {
			objs = append(objs, &v1.Checkpoint{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-cp-%d", hook, seq)},
				Spec:       v1.CheckpointSpec{HookName: hook, Seq: int64(seq)},
			})
		}
	}
	objs = append(objs, &v1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "task-cp-9"},
		Spec:       v1.CheckpointSpec{HookName: "task", Seq: 9},
	})
	hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"}}
	want := []string{"task-cp-1", "task-cp-2", "task-cp-3"}

	for _, tt := range []struct {
		name             string
		indexed, refuse  bool
		lists, wideLists int
	}{
		{"indexed cache", true, false, 1, 0},
		{"store or API server client", false, true, 2, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(sch).WithObjects(objs...)
			if tt.indexed {
				b = b.WithIndex(&v1.Checkpoint{}, recoveryfile.CheckpointHookNameField, recoveryfile.IndexCheckpointHookName)
			}
			r := &countingReader{Reader: b.Build(), refuseField: tt.refuse}
			got, err := recoveryfile.HookCheckpoints(context.Background(), r, hook)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, cp := range got {
				names = append(names, cp.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("HookCheckpoints = %v, want %v", names, want)
			}
			if r.lists != tt.lists || r.wide != tt.wideLists || r.uncopied != 0 {
				t.Errorf("%d lists, %d of the whole namespace, %d uncopied; want %d, %d and 0", r.lists, r.wide, r.uncopied, tt.lists, tt.wideLists)
			}

			// A summary reads the cache's own objects, on either path.
			r.lists, r.wide = 0, 0
			sums, err := recoveryfile.ListCheckpoints(context.Background(), r, hook)
			if err != nil {
				t.Fatal(err)
			}
			names = names[:0]
			for _, s := range sums {
				names = append(names, s.Name)
			}
			if want := []string{"task-cp-3", "task-cp-2", "task-cp-1"}; !slices.Equal(names, want) {
				t.Errorf("ListCheckpoints = %v, want %v", names, want)
			}
			if r.lists != tt.lists || r.wide != tt.wideLists || r.uncopied != tt.lists {
				t.Errorf("ListCheckpoints: %d lists, %d of the whole namespace, %d uncopied; want %d, %d and %d", r.lists, r.wide, r.uncopied, tt.lists, tt.wideLists, tt.lists)
			}
		})
	}
}

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

package storemanager

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// TestListerWatcherHandsTheStoreItsTransform lists and watches Hooks as an
// informer of the file store's Manager does, with a transform and without:
// given one, the store applies it to every object it lists or sends, and
// the informer's own pass then finds nothing to do.
func TestListerWatcherHandsTheStoreItsTransform(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	store, err := filestore.Open(filepath.Join(t.TempDir(), "store"), filestore.Options{Scheme: s, CRDs: crds, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	c := store.Client()
	ctx := context.Background()
	create := func(name string) {
		h := &agentsv1alpha1.Hook{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec:       agentsv1alpha1.HookSpec{Goal: "g", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
		}
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		create(fmt.Sprintf("h-%03d", i))
	}
	for _, tc := range []struct {
		name      string
		transform bool
	}{{name: "with a transform", transform: true}, {name: "without"}} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			var transform func(any) (any, error)
			if tc.transform {
				transform = func(o any) (any, error) {
					calls.Add(1)
					o.(client.Object).SetAnnotations(map[string]string{"transformed": "yes"})
					return o, nil
				}
			}
			lw, err := newListerWatcher(c, &agentsv1alpha1.Hook{}, transform)
			if err != nil {
				t.Fatal(err)
			}
			list, err := lw.List(metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			w, err := lw.Watch(metav1.ListOptions{ResourceVersion: list.(client.ObjectList).GetResourceVersion()})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			name := "new-" + fmt.Sprint(tc.transform)
			create(name)
			select {
			case ev := <-w.ResultChan():
				items = append(items, ev.Object)
			case <-time.After(20 * time.Second):
				t.Fatal("no watch event within 20s")
			}
			for _, item := range items {
				o := item.(client.Object)
				if got := o.GetAnnotations()["transformed"] == "yes"; got != tc.transform {
					t.Errorf("%s: transformed by the store: %v, want %v", o.GetName(), got, tc.transform)
				}
			}
			if want := int64(len(items)); tc.transform && calls.Load() != want {
				t.Errorf("the transform ran %d times for %d objects", calls.Load(), want)
			}
		})
	}
}

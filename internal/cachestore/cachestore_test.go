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

package cachestore

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// storeless is an informer that offers no store.
type storeless struct{ cache.Informer }

// TestObjects: the objects come from the informer's store itself, not
// copies, only those of the asked type; an informer without a store is an
// error, not an empty answer.
func TestObjects(t *testing.T) {
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &v1.Checkpoint{}, 0, toolscache.Indexers{})
	held := map[string]*v1.Checkpoint{}
	for _, name := range []string{"a", "b", "c"} {
		cp := &v1.Checkpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		held[name] = cp
		if err := inf.GetStore().Add(cp); err != nil {
			t.Fatal(err)
		}
	}
	if err := inf.GetStore().Add(&v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}}); err != nil {
		t.Fatal(err)
	}
	got, err := Objects[*v1.Checkpoint](inf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(held) {
		t.Fatalf("got %d Checkpoints, want %d", len(got), len(held))
	}
	for _, cp := range got {
		if held[cp.Name] != cp {
			t.Errorf("%s is a copy, not the cached object", cp.Name)
		}
	}
	if _, ok := Of(storeless{}); ok {
		t.Error("Of found a store in an informer without one")
	}
	if objs, err := Objects[*v1.Checkpoint](storeless{}); err == nil {
		t.Errorf("Objects of an informer without a store = %d objects, no error", len(objs))
	}
}

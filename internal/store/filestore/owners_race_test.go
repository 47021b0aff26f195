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

package filestore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestConcurrentDeletesShareTheOwnerIndex: deletions run side by side
// under the shared lock, each reading the owner index on from where the
// last left it and listing an owner's dependents; the race detector holds
// them to the index's own mutex, and every dependent is collected.
func TestConcurrentDeletesShareTheOwnerIndex(t *testing.T) {
	s := openCoreStore(t)
	ctx := context.Background()
	c := s.Client()
	event := func(name string, owner *unstructured.Unstructured) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "Event",
			"metadata": map[string]interface{}{"name": name, "namespace": "default"},
			"message":  name,
		}}
		if owner != nil {
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Event", Name: owner.GetName(), UID: owner.GetUID()}})
		}
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	const owners, dependents = 8, 3
	var all []*unstructured.Unstructured
	for i := range owners {
		o := event(fmt.Sprintf("owner-%d", i), nil)
		all = append(all, o)
		for j := range dependents {
			event(fmt.Sprintf("owner-%d-dep-%d", i, j), o)
		}
	}
	var wg sync.WaitGroup
	for _, o := range all {
		wg.Go(func() {
			if err := c.Delete(ctx, o); err != nil {
				t.Errorf("delete %s: %v", o.GetName(), err)
			}
		})
	}
	wg.Wait()
	for i := range owners {
		for j := range dependents {
			name := fmt.Sprintf("owner-%d-dep-%d", i, j)
			err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "Event"}})
			if !apierrors.IsNotFound(err) {
				t.Errorf("%s outlived its owner: %v", name, err)
			}
		}
	}
}

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
	"fmt"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestConsoleWatchStartReadsNoField lists, as the console starts a watch
// on the local store, enough Hooks and Checkpoints that the store takes
// them from its journal, and checks that the list has the store's
// resourceVersion, as a whole list has, with no object's spec or status
// decoded.
func TestConsoleWatchStartReadsNoField(t *testing.T) {
	ctx := context.Background()
	c := testsupport.Store(t, filepath.Join(t.TempDir(), "store")).Client()
	for i := range 300 {
		h := &agentsv1alpha1.Hook{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("hook-%03d", i)},
			Spec:       agentsv1alpha1.HookSpec{Goal: "goal", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
		}
		must(t, c.Create(ctx, h))
		cp := &agentsv1alpha1.Checkpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cp-%03d", i)},
			Spec:       agentsv1alpha1.CheckpointSpec{HookName: h.Name, Trigger: agentsv1alpha1.TriggerManual, Seq: 1, Description: "d"},
		}
		must(t, c.Create(ctx, cp))
	}
	for _, kind := range []string{"HookList", "CheckpointList"} {
		t.Run(kind, func(t *testing.T) {
			whole := &unstructured.UnstructuredList{}
			whole.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind(kind))
			must(t, c.List(ctx, whole))
			start := &unstructured.UnstructuredList{}
			start.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind(kind))
			must(t, c.List(ctx, start, append([]client.ListOption{client.Limit(1)}, consoleWatchStart...)...))
			if start.GetResourceVersion() == "" || start.GetResourceVersion() != whole.GetResourceVersion() {
				t.Fatalf("resourceVersion %q, want the whole list's %q", start.GetResourceVersion(), whole.GetResourceVersion())
			}
			for _, u := range start.Items {
				for _, field := range []string{"spec", "status"} {
					if _, ok := u.Object[field]; ok {
						t.Fatalf("%s: %s decoded for a watch's start", u.GetName(), field)
					}
				}
			}
		})
	}
}

// BenchmarkConsoleWatchStart is what one watch's start costs the console
// on a local store of 10,000 Checkpoints like the fleet's: the list it
// made before (typed, every object read whole) and the one it makes now
// (unstructured, filestore.Fields{}). See -benchmem's B/op.
func BenchmarkConsoleWatchStart(b *testing.B) {
	ctx := context.Background()
	c := testsupport.Store(b, filepath.Join(b.TempDir(), "store"), testsupport.WithoutFsync).Client()
	for i := range 10000 {
		cp := &agentsv1alpha1.Checkpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cp-%05d", i), Labels: map[string]string{"tether.dev/hook": "hook"}},
			Spec: agentsv1alpha1.CheckpointSpec{HookName: fmt.Sprintf("hook-%05d", i/5), Trigger: agentsv1alpha1.TriggerStepComplete, Seq: int64(i % 5),
				Step: "build", Description: "step build passed", Workspace: "/home/dev/project"},
		}
		if err := c.Create(ctx, cp); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.List(ctx, &agentsv1alpha1.CheckpointList{}, client.Limit(1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			start := &unstructured.UnstructuredList{}
			start.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind("CheckpointList"))
			if err := c.List(ctx, start, append([]client.ListOption{client.Limit(1)}, consoleWatchStart...)...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

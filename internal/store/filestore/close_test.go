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

package filestore_test

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestCloseStopsWatches closes a store under watches nobody stopped, one
// still listing and one waiting for writes: Close ends them before it
// releases the files they read (the race detector saw a watch open a file
// beneath the closed store directory), their result channels close, and a
// watch asked for afterwards is refused.
func TestCloseStopsWatches(t *testing.T) {
	s, err := newStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := s.Client()
	ctx := context.Background()
	for i := range 20 {
		h := hook("h" + string(rune('a'+i)))
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	var watches []<-chan struct{}
	for range 4 {
		w, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace("default"))
		if err != nil {
			t.Fatal(err)
		}
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			for range w.ResultChan() {
			}
		}()
		watches = append(watches, drained)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, drained := range watches {
		select {
		case <-drained:
		case <-time.After(30 * time.Second):
			t.Fatal("a watch's result channel stayed open after Close")
		}
	}
	if _, err := c.Watch(ctx, &agentsv1alpha1.HookList{}); err == nil {
		t.Fatal("a watch of a closed store was started")
	}
}

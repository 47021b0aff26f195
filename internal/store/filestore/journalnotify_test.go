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
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// inotifyInstances counts the inotify instances this process holds.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// TestWatchesShareOneInotifyInstance runs many watches of one store, of
// each kind, typed and unstructured, selective or not: they hold one
// inotify instance between them, each still sees every change, and the
// instance is gone when the last one stops, and back for the next.
func TestWatchesShareOneInotifyInstance(t *testing.T) {
	before := inotifyInstances(t)
	c := openStore(t, t.TempDir()).Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unstructuredHooks := &unstructured.UnstructuredList{}
	unstructuredHooks.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind("HookList"))
	watches := []struct {
		name string
		list client.ObjectList
		opts []client.ListOption
	}{
		{name: "hooks", list: &agentsv1alpha1.HookList{}},
		{name: "hooks again", list: &agentsv1alpha1.HookList{}},
		{name: "hooks by label", list: &agentsv1alpha1.HookList{}, opts: []client.ListOption{client.MatchingLabels{"team": "a"}}},
		{name: "unstructured hooks", list: unstructuredHooks},
		{name: "workers", list: &agentsv1alpha1.WorkerList{}},
		{name: "checkpoints", list: &agentsv1alpha1.CheckpointList{}},
	}
	var running []watch.Interface
	stopAll := func() {
		for _, w := range running {
			w.Stop()
		}
		running = nil
	}
	defer stopAll()
	for round := range 2 {
		for _, tc := range watches {
			w, err := c.Watch(ctx, tc.list, tc.opts...)
			if err != nil {
				t.Fatalf("round %d, %s: %v", round, tc.name, err)
			}
			running = append(running, w)
		}
		// At most: an instance an earlier test left closing may close now.
		if got := inotifyInstances(t) - before; got > 1 {
			t.Errorf("round %d: %d watches hold %d inotify instances, want 1", round, len(watches), got)
		}
		name := "round-" + string(rune('a'+round))
		h := hook(name)
		h.Labels = map[string]string{"team": "a"}
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
		for i, tc := range watches {
			if tc.name == "workers" || tc.name == "checkpoints" {
				continue
			}
			// A watch from now sends the current objects first (ADDED);
			// the last one sent is the Hook just created.
			for {
				ev := nextEvent(t, running[i])
				o, ok := ev.Object.(client.Object)
				if !ok || ev.Type != watch.Added {
					t.Fatalf("round %d, %s: got %s %T, want ADDED", round, tc.name, ev.Type, ev.Object)
				}
				if o.GetName() == name {
					break
				}
			}
		}
		stopAll()
		if got := inotifyInstances(t) - before; got > 0 {
			t.Errorf("round %d: %d inotify instances left after every watch stopped, want 0", round, got)
		}
	}
}

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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// sedInPlace edits a file the way `sed -i` does: a new file renamed over the old.
func sedInPlace(t *testing.T, path, expr string) {
	t.Helper()
	if out, err := exec.Command("sed", "-i", expr, path).CombinedOutput(); err != nil {
		t.Fatalf("sed: %v: %s", err, out)
	}
}

func TestHandEdits(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		edit func(t *testing.T, path string)
		// want checks the object in effect afterwards; nil means it is gone.
		want      func(t *testing.T, before, after *agentsv1alpha1.Hook)
		keepsFile bool
	}{
		{
			name: "sed -i of the spec is adopted as an update",
			edit: func(t *testing.T, path string) { sedInPlace(t, path, "s/goal: g$/goal: edited by hand/") },
			want: func(t *testing.T, before, after *agentsv1alpha1.Hook) {
				if after.Spec.Goal != "edited by hand" || after.Generation != before.Generation+1 || after.UID != before.UID {
					t.Fatalf("goal %q generation %d uid %s", after.Spec.Goal, after.Generation, after.UID)
				}
				if rvOf(t, after) <= rvOf(t, before) {
					t.Fatalf("resourceVersion %s not after %s", after.ResourceVersion, before.ResourceVersion)
				}
			},
		},
		{
			name: "a label edit keeps the generation",
			edit: func(t *testing.T, path string) {
				sedInPlace(t, path, "s/^  name: edited$/  name: edited\\n  labels: {team: core}/")
			},
			want: func(t *testing.T, before, after *agentsv1alpha1.Hook) {
				if after.Labels["team"] != "core" || after.Generation != before.Generation {
					t.Fatalf("labels %v generation %d", after.Labels, after.Generation)
				}
			},
		},
		{
			name: "broken YAML leaves the last valid version in effect and the file untouched",
			edit: func(t *testing.T, path string) { sedInPlace(t, path, `s/goal: g$/goal: "unterminated/`) },
			want: func(t *testing.T, before, after *agentsv1alpha1.Hook) {
				if after.Spec.Goal != "g" || after.ResourceVersion != before.ResourceVersion {
					t.Fatalf("goal %q rv %s, want the last valid version", after.Spec.Goal, after.ResourceVersion)
				}
			},
			keepsFile: true,
		},
		{
			name: "a schema violation leaves the last valid version in effect",
			edit: func(t *testing.T, path string) { sedInPlace(t, path, "s/maxAttempts: 3/maxAttempts: 0/") },
			want: func(t *testing.T, before, after *agentsv1alpha1.Hook) {
				if after.Spec.MaxAttempts != 3 || after.ResourceVersion != before.ResourceVersion {
					t.Fatalf("maxAttempts %d rv %s, want the last valid version", after.Spec.MaxAttempts, after.ResourceVersion)
				}
			},
			keepsFile: true,
		},
		{
			name: "a changed metadata.name is refused and the file kept",
			edit: func(t *testing.T, path string) { sedInPlace(t, path, "s/^  name: edited$/  name: renamed/") },
			want: func(t *testing.T, before, after *agentsv1alpha1.Hook) {
				if after.Name != "edited" || after.ResourceVersion != before.ResourceVersion {
					t.Fatalf("name %q rv %s, want the last valid version", after.Name, after.ResourceVersion)
				}
			},
			keepsFile: true,
		},
		{
			name: "a changed metadata.namespace is refused and the file kept",
			edit: func(t *testing.T, path string) {
				sedInPlace(t, path, "s/^  namespace: default$/  namespace: elsewhere/")
			},
			want: func(t *testing.T, before, after *agentsv1alpha1.Hook) {
				if after.Namespace != "default" || after.ResourceVersion != before.ResourceVersion {
					t.Fatalf("namespace %q rv %s, want the last valid version", after.Namespace, after.ResourceVersion)
				}
			},
			keepsFile: true,
		},
		{
			name: "rm deletes the object",
			edit: func(t *testing.T, path string) {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			c := s.Client()
			before := hook("edited")
			if err := c.Create(ctx, before); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "hooks", "default", "edited.yaml")
			tt.edit(t, path)
			edited, _ := os.ReadFile(path)
			after := &agentsv1alpha1.Hook{}
			err := c.Get(ctx, client.ObjectKeyFromObject(before), after)
			if tt.want == nil {
				if err == nil {
					t.Fatal("the object is still there")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want(t, before, after)
			list := &agentsv1alpha1.HookList{}
			if err := c.List(ctx, list); err != nil || len(list.Items) != 1 || list.Items[0].ResourceVersion != after.ResourceVersion {
				t.Fatalf("list disagrees with get: %v %v", err, list.Items)
			}
			now, _ := os.ReadFile(path)
			if tt.keepsFile && string(now) != string(edited) {
				t.Fatalf("the store rewrote a refused edit:\n%s", now)
			}
			if !tt.keepsFile && !strings.HasPrefix(string(now), "# Managed by tether") {
				t.Fatalf("an adopted edit was not rewritten in the store's form:\n%s", now)
			}
		})
	}
}

func rvOf(t *testing.T, obj client.Object) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCopiedFileBecomesANewObject(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	orig := hook("original")
	if err := c.Create(ctx, orig); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "hooks", "default", "original.yaml")
	if out, err := exec.Command("cp", src, filepath.Join(dir, "hooks", "default", "copy.yaml")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	cp := &agentsv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "copy"}, cp); err != nil {
		t.Fatal(err)
	}
	if cp.UID == orig.UID || cp.Name != "copy" || cp.Generation != 1 || cp.Spec.Goal != "g" {
		t.Fatalf("copy: uid %s (original %s) name %s generation %d goal %q", cp.UID, orig.UID, cp.Name, cp.Generation, cp.Spec.Goal)
	}
}

// TestLastValidVersionFromALargeJournal refuses an edit of the oldest of
// many objects, whose last valid version lies megabytes back in the journal.
func TestLastValidVersionFromALargeJournal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	for i := 0; i < 1200; i++ {
		h := hook(fmt.Sprintf("bulk-%04d", i))
		h.Spec.Goal = strings.Repeat("g", 1000)
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "journal")); err != nil || fi.Size() < 1<<20 {
		t.Fatalf("journal is too small for this test: %v", err)
	}
	path := filepath.Join(dir, "hooks", "default", "bulk-0000.yaml")
	sedInPlace(t, path, "s/maxAttempts: 3/maxAttempts: 0/")
	got := &agentsv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "bulk-0000"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.MaxAttempts != 3 || len(got.Spec.Goal) != 1000 {
		t.Fatalf("got maxAttempts %d, goal of %d bytes; want the last valid version", got.Spec.MaxAttempts, len(got.Spec.Goal))
	}
}

// TestUpdateKeepsAPersonsUnadoptedFile updates an object whose file holds a
// refused edit: the update takes effect and the person's file stays as written.
func TestUpdateKeepsAPersonsUnadoptedFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	h := hook("kept")
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hooks", "default", "kept.yaml")
	sedInPlace(t, path, `s/goal: g$/goal: "half typed/`)
	edited, _ := os.ReadFile(path)
	h.Labels = map[string]string{"updated": "yes"}
	if err := c.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	now, _ := os.ReadFile(path)
	if string(now) != string(edited) {
		t.Fatalf("the update overwrote the person's file:\n%s", now)
	}
	got := &agentsv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["updated"] != "yes" || got.Spec.Goal != "g" {
		t.Fatalf("object in effect: labels %v goal %q", got.Labels, got.Spec.Goal)
	}
}

// TestDeleteKeepsAPersonsUnadoptedFile deletes objects through the API: a
// file the store wrote goes with its object, and a file holding a person's
// refused edit is kept beside it, byte for byte.
func TestDeleteKeepsAPersonsUnadoptedFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	tests := []struct {
		name  string
		edit  string
		keeps bool
	}{
		{name: "plain", keeps: false},
		{name: "edited", edit: `s/goal: g$/goal: "half typed/`, keeps: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hook(tt.name)
			if err := c.Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "hooks", "default", tt.name+".yaml")
			if tt.edit != "" {
				sedInPlace(t, path, tt.edit)
			}
			edited, _ := os.ReadFile(path)
			if err := c.Delete(ctx, h); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(h), &agentsv1alpha1.Hook{}); !apierrors.IsNotFound(err) {
				t.Fatalf("after delete, get: %v", err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("the object's file is still in place: %v", err)
			}
			kept, _ := filepath.Glob(path + ".unsaved-*")
			if !tt.keeps {
				if len(kept) != 0 {
					t.Fatalf("a store-written file was kept: %v", kept)
				}
				return
			}
			if len(kept) != 1 {
				t.Fatalf("kept files %v, want one", kept)
			}
			if data, _ := os.ReadFile(kept[0]); string(data) != string(edited) {
				t.Fatalf("the kept file differs from the person's:\n%s", data)
			}
			var list agentsv1alpha1.HookList
			if err := c.List(ctx, &list); err != nil {
				t.Fatal(err)
			}
			for _, item := range list.Items {
				if item.Name == tt.name {
					t.Fatal("the kept file came back as an object")
				}
			}
		})
	}
}

// TestWatcherLeavesTheStoresOwnWritesUnlocked checks that the hand-edit
// watcher tells the files the store wrote from hand edits without the
// write lock: each store write renames a file into place, and taking the
// lock for each of those events stalled every reader and writer once per
// write. A hand edit made meanwhile is adopted all the same.
func TestWatcherLeavesTheStoresOwnWritesUnlocked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	h := hook("watched")
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.WatchHandEdits(ctx, events.NewFakeRecorder(10)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	path := filepath.Join(dir, "hooks", "default", "watched.yaml")
	// The watcher starts with a scan, which locks nothing for store files.
	// Store writes go on until one of them is surely seen by the watch.
	for i := range 20 {
		h.Spec.Goal = fmt.Sprintf("written by the store %d", i)
		if err := c.Update(ctx, h); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.LockedAdoptions(); n != 0 {
		t.Fatalf("the watcher took the write lock %d times for the store's own writes", n)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(before), "\n")
	sedInPlace(t, path, "s/goal: written by the store 19$/goal: edited by hand/")
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Adopted edits are rewritten in the store's form, with a header of
		// their own: sed kept the old one, whose checksum no longer matches.
		if first, _, _ := strings.Cut(string(data), "\n"); strings.HasPrefix(first, "# Managed by tether") && first != header &&
			strings.Contains(string(data), "goal: edited by hand") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hand edit was not adopted by the watcher:\n%s", data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.LockedAdoptions() == 0 {
		t.Fatal("the hand edit was adopted without the write lock")
	}
}

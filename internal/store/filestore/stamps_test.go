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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// stampedObjects is enough Hooks for a list to read from the journal and
// use file stamps (journalReadMin).
const stampedObjects = 300

// stampedStore creates stampedObjects Hooks in dir and lists them once
// with stamping at once allowed, so that every file is stamped; it
// returns the list, and the store is closed.
func stampedStore(t *testing.T, dir string) []agentsv1alpha1.Hook {
	t.Helper()
	s := openStore(t, dir)
	s.SetStampSettle(0)
	c := s.Client()
	for i := range stampedObjects {
		must(t, c.Create(context.Background(), hook(fmt.Sprintf("h-%03d", i))))
	}
	list := &agentsv1alpha1.HookList{}
	must(t, c.List(context.Background(), list))
	if got := s.ObjectReads(); got < stampedObjects {
		t.Fatalf("the first list read %d object files, want all %d", got, stampedObjects)
	}
	must(t, s.Close())
	if _, err := os.Stat(filepath.Join(dir, ".stamps-hooks")); err != nil {
		t.Fatalf("no stamps were saved: %v", err)
	}
	return list.Items
}

// listHooks opens the store at dir, lists its Hooks and returns them with
// the number of object files the list read.
func listHooks(t *testing.T, dir string) ([]agentsv1alpha1.Hook, uint64) {
	t.Helper()
	s := openStore(t, dir)
	s.SetStampSettle(0)
	list := &agentsv1alpha1.HookList{}
	must(t, s.Client().List(context.Background(), list))
	return list.Items, s.ObjectReads()
}

// editInPlace rewrites one character of the file at path in place, on
// the same inode, at the same size, and puts its modification time back,
// as an editor or a script may: only its ctime shows the change.
func editInPlace(t *testing.T, path, from, to string) {
	t.Helper()
	fi, err := os.Stat(path)
	must(t, err)
	data, err := os.ReadFile(path)
	must(t, err)
	edited := bytes.Replace(data, []byte(from), []byte(to), 1)
	if len(from) != len(to) || bytes.Equal(edited, data) {
		t.Fatalf("%q → %q is not a same-size edit of %s", from, to, path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt(edited, 0)
	must(t, err)
	must(t, f.Close())
	must(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
}

// TestStampsSkipUnchangedFiles checks that a large list reads no file its
// stamp shows unchanged, and that every kind of change to a file, however
// disguised, makes the list read it again.
func TestStampsSkipUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	want := stampedStore(t, dir)
	got, reads := listHooks(t, dir)
	if reads != 0 {
		t.Errorf("a list of unchanged stamped files read %d of them, want 0", reads)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("the list from stamps differs from the list that read every file")
	}
	file := func(name string) string { return filepath.Join(dir, "hooks", "default", name+".yaml") }
	cases := []struct {
		name   string
		change func(t *testing.T)
		check  func(t *testing.T, h *agentsv1alpha1.Hook)
	}{
		{
			name:   "an edit in place at the same size, modification time put back",
			change: func(t *testing.T) { editInPlace(t, file("h-150"), "goal: g\n", "goal: x\n") },
			check: func(t *testing.T, h *agentsv1alpha1.Hook) {
				if h.Spec.Goal != "x" {
					t.Errorf("goal = %q, want the hand edit's \"x\"", h.Spec.Goal)
				}
			},
		},
		{
			name: "mode changed and changed back",
			change: func(t *testing.T) {
				must(t, os.Chmod(file("h-151"), 0o640))
				must(t, os.Chmod(file("h-151"), 0o600))
			},
		},
		{
			name: "replaced by a copy of itself, times kept",
			change: func(t *testing.T) {
				if out, err := exec.Command("cp", "-p", file("h-152"), file("h-152")+".copy").CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
				must(t, os.Rename(file("h-152")+".copy", file("h-152")))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.change(t)
			got, reads := listHooks(t, dir)
			if reads == 0 || reads > 4 {
				t.Errorf("the list read %d object files, want the changed one (and at most an adoption's few)", reads)
			}
			if len(got) != stampedObjects {
				t.Fatalf("listed %d Hooks, want %d", len(got), stampedObjects)
			}
			if tc.check != nil {
				for i := range got {
					if got[i].Name == "h-150" {
						tc.check(t, &got[i])
					}
				}
			}
		})
	}
}

// TestStampsOfRecentChangesAreNotKept checks that a file changed within
// the settle time is not stamped: a change right after it could carry the
// same ctime, from a clock that ticks coarsely. The settle time is made an
// hour, so that every file is recent.
func TestStampsOfRecentChangesAreNotKept(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	// Every file is then as recent as a change within the tick before.
	s.SetStampSettle(time.Hour)
	c := s.Client()
	for i := range stampedObjects {
		must(t, c.Create(context.Background(), hook(fmt.Sprintf("h-%03d", i))))
	}
	must(t, c.List(context.Background(), &agentsv1alpha1.HookList{}))
	must(t, s.Close())
	if _, reads := listHooks(t, dir); reads != stampedObjects {
		t.Errorf("the second list read %d object files, want all %d: none had settled when the first read them", reads, stampedObjects)
	}
}

// TestDamagedStamps checks that a stamps file that is damaged, stale,
// linked elsewhere or of another copy of the store only costs reads: the
// list is the same, reads every file, and the stamps are saved anew,
// never through a link.
func TestDamagedStamps(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere")
	cases := []struct {
		name   string
		damage func(t *testing.T, dir, stamps string) string // returns the store to list
	}{
		{name: "truncated", damage: func(t *testing.T, dir, stamps string) string {
			fi, err := os.Stat(stamps)
			must(t, err)
			must(t, os.Truncate(stamps, fi.Size()/2))
			return dir
		}},
		{name: "empty", damage: func(t *testing.T, dir, stamps string) string {
			must(t, os.WriteFile(stamps, nil, 0o600))
			return dir
		}},
		{name: "a digit changed", damage: func(t *testing.T, dir, stamps string) string {
			data, err := os.ReadFile(stamps)
			must(t, err)
			i := bytes.Index(data, []byte("default/h-100 ")) + len("default/h-100 ")
			data[i] = '0' + (data[i]-'0'+1)%10
			must(t, os.WriteFile(stamps, data, 0o600))
			return dir
		}},
		{name: "a symbolic link to a copy elsewhere", damage: func(t *testing.T, dir, stamps string) string {
			data, err := os.ReadFile(stamps)
			must(t, err)
			must(t, os.WriteFile(outside, data, 0o600))
			must(t, os.Remove(stamps))
			must(t, os.Symlink(outside, stamps))
			return dir
		}},
		{name: "the store copied elsewhere, times kept", damage: func(t *testing.T, dir, stamps string) string {
			copied := filepath.Join(t.TempDir(), "copy")
			if out, err := exec.Command("cp", "-a", dir, copied).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			return copied
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := stampedStore(t, dir)
			store := tc.damage(t, dir, filepath.Join(dir, ".stamps-hooks"))
			outsideBefore, _ := os.ReadFile(outside)
			got, reads := listHooks(t, store)
			if reads != stampedObjects {
				t.Errorf("the list read %d object files, want all %d", reads, stampedObjects)
			}
			for i := range want {
				want[i].ResourceVersion, got[i].ResourceVersion = "", ""
			}
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("the list differs from the list before the damage")
			}
			fi, err := os.Lstat(filepath.Join(store, ".stamps-hooks"))
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the stamps were not saved anew as a file: %v, %v", fi, err)
			}
			if outsideAfter, _ := os.ReadFile(outside); !bytes.Equal(outsideBefore, outsideAfter) {
				t.Errorf("the file a link pointed to was written")
			}
			if _, reads := listHooks(t, store); reads != 0 {
				t.Errorf("the list after the stamps were saved anew read %d object files, want 0", reads)
			}
		})
	}
}

// TestStampsHandEditScan checks the hand-edit watcher's start-up scan: it
// reads no stamped file that is unchanged, and adopts a disguised edit
// made while nothing watched.
func TestStampsHandEditScan(t *testing.T) {
	dir := t.TempDir()
	stampedStore(t, dir)
	last := fmt.Sprintf("h-%03d", stampedObjects-1)
	editInPlace(t, filepath.Join(dir, "hooks", "default", last+".yaml"), "goal: g\n", "goal: x\n")
	s := openStore(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.WatchHandEdits(ctx, events.NewFakeRecorder(100)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// The reader bypasses the list, which would adopt the edit itself.
	h := &agentsv1alpha1.Hook{}
	deadline := time.Now().Add(20 * time.Second)
	for {
		must(t, s.Client().Get(ctx, client.ObjectKey{Namespace: "default", Name: last}, h))
		if h.Spec.Goal == "x" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scan did not adopt the edit of %s", last)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The edited file was the last the scan came to, so it is done.
	if reads := s.ObjectReads(); reads > 4 {
		t.Errorf("the scan read %d object files, want the edited one and the adoption's few", reads)
	}
}

// TestStampsGoWithDeletedObjects checks that the stamps of deleted
// objects are not kept: an object created again under the same name is
// read, never taken for the one before.
func TestStampsGoWithDeletedObjects(t *testing.T) {
	dir := t.TempDir()
	stampedStore(t, dir)
	s := openStore(t, dir)
	s.SetStampSettle(0)
	c := s.Client()
	for i := range 100 {
		h := hook(fmt.Sprintf("h-%03d", i))
		must(t, c.Delete(context.Background(), h))
		h.Spec.Goal = "again"
		must(t, c.Create(context.Background(), h))
	}
	list := &agentsv1alpha1.HookList{}
	must(t, c.List(context.Background(), list))
	must(t, s.Close())
	got, reads := listHooks(t, dir)
	// The deletions' garbage collection lists, and saves stamps when enough
	// changed: the last few changes may not be saved yet.
	if reads > 16 {
		t.Errorf("the list after the stamps were saved anew read %d object files, want at most the few changed since", reads)
	}
	for _, h := range got {
		var n int
		if _, err := fmt.Sscanf(h.Name, "h-%d", &n); err == nil && n < 100 && h.Spec.Goal != "again" {
			t.Errorf("%s has goal %q, want the one it was created again with", h.Name, h.Spec.Goal)
		}
	}
}

// TestCascadeDeletionAmongMany deletes an owner among many objects, its
// dependents found through the owner index: every dependent must go, of
// every kind, including one whose owner reference is a hand edit not yet
// adopted (collected when adopted), and nothing else: not an object that
// holds the uid elsewhere, one whose hand edit removed its owner reference,
// or one in another namespace naming the same uid.
func TestCascadeDeletionAmongMany(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	owner := hook("owner")
	must(t, c.Create(ctx, owner))
	ref := metav1.OwnerReference{APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "Hook", Name: owner.Name, UID: owner.UID}
	dependents := map[string]bool{}
	for i := range stampedObjects {
		h := hook(fmt.Sprintf("h-%03d", i))
		switch {
		case i%50 == 7:
			h.OwnerReferences = []metav1.OwnerReference{ref}
			dependents[h.Name] = true
		case i == 11:
			h.Annotations = map[string]string{"note": "not owned by " + string(owner.UID)}
		}
		must(t, c.Create(ctx, h))
	}
	edited := filepath.Join(dir, "hooks", "default", "h-200.yaml")
	data, err := os.ReadFile(edited)
	must(t, err)
	withRef := bytes.Replace(data, []byte("\n  name: h-200\n"), []byte(fmt.Sprintf("\n  name: h-200\n  ownerReferences:\n  - apiVersion: %s\n    kind: Hook\n    name: owner\n    uid: %s\n", ref.APIVersion, owner.UID)), 1)
	if bytes.Equal(withRef, data) {
		t.Fatalf("no name line to add an owner reference after in\n%s", data)
	}
	must(t, os.WriteFile(edited, withRef, 0o600))
	dependents["h-200"] = true
	// h-207 is a dependent in the journal whose file no longer says so.
	released := filepath.Join(dir, "hooks", "default", "h-207.yaml")
	data, err = os.ReadFile(released)
	must(t, err)
	withoutRef := regexp.MustCompile(`(?s)\n  ownerReferences:\n.*?\n  (resourceVersion|uid)`).ReplaceAll(data, []byte("\n  $1"))
	if bytes.Equal(withoutRef, data) {
		t.Fatalf("no owner reference to remove in\n%s", data)
	}
	must(t, os.WriteFile(released, withoutRef, 0o600))
	delete(dependents, "h-207")
	for i := range 3 {
		cp := &agentsv1alpha1.Checkpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("owner-%d", i), OwnerReferences: []metav1.OwnerReference{ref}},
			Spec:       agentsv1alpha1.CheckpointSpec{HookName: owner.Name, Trigger: agentsv1alpha1.TriggerManual},
		}
		must(t, c.Create(ctx, cp))
	}
	elsewhere := hook("h-elsewhere")
	elsewhere.Namespace, elsewhere.OwnerReferences = "team", []metav1.OwnerReference{ref}
	must(t, c.Create(ctx, elsewhere))
	if n, byIndex := s.CollectingByIndex(string(owner.UID), "default"); !byIndex || n != len(dependents)-1+3+1 {
		t.Errorf("the owner index names %d dependents (by index: %v), want the %d in the journal", n, byIndex, len(dependents)-1+3+1)
	}

	must(t, c.Delete(ctx, owner))
	list := &agentsv1alpha1.HookList{}
	must(t, c.List(ctx, list))
	left := map[string]bool{}
	for _, h := range list.Items {
		left[h.Name] = true
	}
	for name := range dependents {
		if left[name] {
			t.Errorf("dependent %s was not deleted with its owner", name)
		}
	}
	if want := stampedObjects - len(dependents) + 1; len(list.Items) != want { // h-elsewhere
		t.Errorf("%d Hooks left, want %d", len(list.Items), want)
	}
	if !left["h-011"] {
		t.Errorf("h-011, which only mentions the owner's uid, was deleted")
	}
	if !left["h-207"] {
		t.Errorf("h-207, whose hand edit removed its owner reference, was deleted")
	}
	if cps := &(agentsv1alpha1.CheckpointList{}); c.List(ctx, cps) != nil || len(cps.Items) != 0 {
		t.Errorf("Checkpoints of the owner left: %d", len(cps.Items))
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(elsewhere), elsewhere))
}

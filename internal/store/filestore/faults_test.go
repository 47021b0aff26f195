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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// faultyIO is the filesystem's IO, except that while armed the write or
// fsync it is set for, on a file whose name matches, fails with ENOSPC.
type faultyIO struct {
	mu    sync.Mutex
	armed bool
	op    string // "write" or "sync"
	match func(name string) bool
	fired int
}

func (f *faultyIO) fail(op string, file *os.File) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed && f.op == op && f.match(file.Name()) {
		f.fired++
		return true
	}
	return false
}

func (f *faultyIO) Write(file *os.File, b []byte) (int, error) {
	if f.fail("write", file) {
		// A full disk takes part of the write.
		n, _ := atomicfs.Real.Write(file, b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return atomicfs.Real.Write(file, b)
}

func (f *faultyIO) Sync(file *os.File) error {
	if f.fail("sync", file) {
		return syscall.ENOSPC
	}
	return atomicfs.Real.Sync(file)
}

func (f *faultyIO) arm(on bool) {
	f.mu.Lock()
	f.armed = on
	f.mu.Unlock()
}

// TestFailedWriteNeverTakesEffect makes each write and fsync of a store
// write fail in turn (ENOSPC), for a create, an update, a status update
// and a delete, and checks that the failed write is not visible, neither
// at once nor after the store is opened again, and that the journal holds
// no entry for it.
func TestFailedWriteNeverTakesEffect(t *testing.T) {
	isJournal := func(n string) bool { return filepath.Base(n) == "journal" }
	isTemp := func(n string) bool { return strings.HasPrefix(filepath.Base(n), ".tmp-") }
	isDir := func(n string) bool { return filepath.Base(n) == "default" }
	points := []struct {
		name  string
		op    string
		match func(string) bool
	}{
		{"journal write", "write", isJournal},
		{"journal fsync", "sync", isJournal},
		{"temp file write", "write", isTemp},
		{"temp file fsync", "sync", isTemp},
		{"directory fsync", "sync", isDir},
	}
	writes := []struct {
		name  string
		write func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error
		// deletes tells whether a write that took effect removes the object.
		deletes bool
	}{
		{name: "create", write: func(ctx context.Context, c client.Client, _ *agentsv1alpha1.Hook) error {
			return c.Create(ctx, hook("created"))
		}},
		{name: "update", write: func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
			h.Spec.Goal = "failed update"
			return c.Update(ctx, h)
		}},
		{name: "status update (a heartbeat)", write: func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
			h.Status.State = "step_pending"
			return c.Status().Update(ctx, h)
		}},
		{name: "delete", deletes: true, write: func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error { return c.Delete(ctx, h) }},
	}
	for _, w := range writes {
		for _, p := range points {
			if w.deletes && p.match("/x/.tmp-x") {
				continue // a delete writes no temp file
			}
			t.Run(w.name+", "+p.name+" fails", func(t *testing.T) {
				ctx := context.Background()
				dir := t.TempDir()
				faults := &faultyIO{op: p.op, match: p.match}
				s := openStore(t, dir, func(o *filestore.Options) { o.IO = faults })
				c := s.Client()
				h := hook("existing")
				if err := c.Create(ctx, h); err != nil {
					t.Fatal(err)
				}
				journalBefore := readFile(t, filepath.Join(dir, "journal"))
				faults.arm(true)
				err := w.write(ctx, c, h.DeepCopy())
				faults.arm(false)
				if faults.fired == 0 {
					t.Fatalf("the write made no %s", p.name)
				}
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("write: %v, want ENOSPC", err)
				}
				check := func(when string, c client.Client) {
					t.Helper()
					if got := readFile(t, filepath.Join(dir, "journal")); got != journalBefore {
						t.Fatalf("%s: the journal changed:\n%s\nwant\n%s", when, got, journalBefore)
					}
					got := &agentsv1alpha1.Hook{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
						t.Fatalf("%s: %v, the object is gone", when, err)
					}
					if got.ResourceVersion != h.ResourceVersion || got.Spec.Goal != h.Spec.Goal || got.Status.State != h.Status.State {
						t.Fatalf("%s: rv %s goal %q state %q, want the version before the failed write", when, got.ResourceVersion, got.Spec.Goal, got.Status.State)
					}
					if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "created"}, &agentsv1alpha1.Hook{}); err == nil {
						t.Fatalf("%s: the failed create is visible", when)
					}
				}
				check("at once", c)
				_ = s.Close()
				// Another writer opens the store: nothing is rolled forward.
				s2 := openStore(t, dir)
				if err := s2.Client().Create(ctx, hook("later")); err != nil {
					t.Fatal(err)
				}
				journalBefore = readFile(t, filepath.Join(dir, "journal"))
				check("after a restart", s2.Client())
			})
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestResourceVersionsNeverGoBack deletes or empties the journal and
// checks that the next write's resourceVersion is beyond every one issued
// before, the newest of which belonged to a deleted object.
func TestResourceVersionsNeverGoBack(t *testing.T) {
	tests := []struct {
		name string
		lose func(t *testing.T, journal string)
		// keepLock keeps the lock file, which holds the resourceVersion mark;
		// without it the object files' headers are all that is left.
		keepLock bool
	}{
		{name: "journal deleted", keepLock: true, lose: func(t *testing.T, j string) { must(t, os.Remove(j)) }},
		{name: "journal emptied", keepLock: true, lose: func(t *testing.T, j string) { must(t, os.Truncate(j, 0)) }},
		{name: "journal and lock file deleted", lose: func(t *testing.T, j string) { must(t, os.Remove(j)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			s := openStore(t, dir)
			c := s.Client()
			for _, name := range []string{"a", "b", "c"} {
				must(t, c.Create(ctx, hook(name)))
			}
			gone := hook("gone")
			must(t, c.Create(ctx, gone))
			must(t, c.Delete(ctx, gone))
			// rv 5 was the deletion; the newest object file left holds rv 3.
			_ = s.Close()
			tt.lose(t, filepath.Join(dir, "journal"))
			if !tt.keepLock {
				must(t, os.Remove(filepath.Join(dir, ".lock")))
			}
			s = openStore(t, dir)
			h := hook("after")
			must(t, s.Client().Create(ctx, h))
			floor := uint64(5)
			if !tt.keepLock {
				floor = 3
			}
			if rvOf(t, h) <= floor {
				t.Fatalf("resourceVersion %s after losing the journal, want more than %d", h.ResourceVersion, floor)
			}
		})
	}
}

// TestLeftoverTempFilesAreRemovedOnOpen checks that temp files of dead
// writers go when a store opens, and those of a live one stay.
func TestLeftoverTempFilesAreRemovedOnOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	must(t, s.Client().Create(ctx, hook("h")))
	_ = s.Close()
	nsDir := filepath.Join(dir, "hooks", "default")
	dead := filepath.Join(nsDir, ".tmp-h.yaml-999999999-abc")
	legacy := filepath.Join(nsDir, ".tmp-h.yaml-123456789")
	live := filepath.Join(nsDir, ".tmp-h.yaml-1-abc") // PID 1 is always alive
	for _, p := range []string{dead, legacy, live} {
		must(t, os.WriteFile(p, []byte("x"), 0o600))
	}
	_ = openStore(t, dir)
	for _, p := range []string{dead, legacy} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("the temp file of a live writer was removed: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

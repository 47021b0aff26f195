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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// faultyIO is the filesystem's IO, except that while armed the
// operations in ops ("write", "sync", "truncate", "rename"), on a file
// whose name matches, fail with ENOSPC (EIO for a truncate). It records
// every fsync of a file whose fsync failed before: after a failed fsync
// the kernel may have dropped the pages, so a retry on that descriptor
// would succeed and prove nothing (fsyncgate).
type faultyIO struct {
	mu    sync.Mutex
	armed bool
	ops   []string
	match func(name string) bool
	// cutJournal makes every cut of the journal fail while armed, whatever ops and match say.
	cutJournal bool
	fired      int
	// failedSync holds the files whose fsync failed; resynced names those
	// fsynced again afterwards.
	failedSync map[*os.File]bool
	resynced   []string
}

func (f *faultyIO) fail(op, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed && slices.Contains(f.ops, op) && f.match(name) {
		f.fired++
		return true
	}
	return false
}

func (f *faultyIO) Write(file *os.File, b []byte) (int, error) {
	if f.fail("write", file.Name()) {
		// A full disk takes part of the write.
		n, _ := atomicfs.Real.Write(file, b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return atomicfs.Real.Write(file, b)
}

func (f *faultyIO) Sync(file *os.File) error {
	f.mu.Lock()
	if f.failedSync[file] {
		f.resynced = append(f.resynced, file.Name())
	}
	f.mu.Unlock()
	if f.fail("sync", file.Name()) {
		f.mu.Lock()
		if f.failedSync == nil {
			f.failedSync = map[*os.File]bool{}
		}
		f.failedSync[file] = true
		f.mu.Unlock()
		return syscall.ENOSPC
	}
	return atomicfs.Real.Sync(file)
}

func (f *faultyIO) Truncate(file *os.File, size int64) error {
	f.mu.Lock()
	cut := f.armed && f.cutJournal && filepath.Base(file.Name()) == "journal"
	f.mu.Unlock()
	if cut || f.fail("truncate", file.Name()) {
		return syscall.EIO
	}
	return file.Truncate(size)
}

func (f *faultyIO) Renameat2(dir *os.File, from, to string, flags uint) error {
	if f.fail("rename", filepath.Join(dir.Name(), to)) {
		return syscall.ENOSPC
	}
	return unix.Renameat2(int(dir.Fd()), from, int(dir.Fd()), to, flags)
}

func (f *faultyIO) arm(on bool) {
	f.mu.Lock()
	f.armed = on
	f.mu.Unlock()
}

// noResync fails the test when a file was fsynced again after its fsync failed.
func (f *faultyIO) noResync(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.resynced) > 0 {
		t.Fatalf("fsynced again on the descriptor whose fsync failed (fsyncgate): %v", f.resynced)
	}
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
		{"rename", "rename", func(n string) bool { return filepath.Base(n) != "journal" }},
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
			if w.deletes && (p.match("/x/.tmp-x") || p.op == "rename") {
				continue // a delete writes no temp file, and renames its file aside itself
			}
			t.Run(w.name+", "+p.name+" fails", func(t *testing.T) {
				ctx := context.Background()
				dir := t.TempDir()
				faults := &faultyIO{ops: []string{p.op}, match: p.match}
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
				faults.noResync(t)
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

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFailedRollbackNeverTakesEffect makes a write fail after its journal
// entry is durable, and then the cut that takes the entry back fail too.
// The failed write must not be visible: not to a watch while the entry is
// still in the journal, not after a restart (whose roll-forward would
// apply an entry newer than the object's file), and a failed fsync is
// never retried on its descriptor.
func TestFailedRollbackNeverTakesEffect(t *testing.T) {
	isTemp := func(n string) bool { return strings.HasPrefix(filepath.Base(n), ".tmp-") }
	isObject := func(n string) bool { return strings.HasSuffix(n, ".yaml") }
	isJournal := func(n string) bool { return filepath.Base(n) == "journal" }
	tests := []struct {
		name  string
		ops   []string
		match func(string) bool
		// deletes: the failed write is a delete, else an update.
		deletes bool
	}{
		{name: "temp fsync then truncate fail", ops: []string{"sync", "truncate"}, match: func(n string) bool { return isTemp(n) || isJournal(n) }},
		{name: "rename then truncate fail", ops: []string{"rename", "truncate"}, match: func(n string) bool { return isObject(n) || isJournal(n) }},
		{name: "directory fsync of a delete then truncate fail", deletes: true, ops: []string{"sync", "truncate"}, match: func(n string) bool { return filepath.Base(n) == "default" || isJournal(n) }},
		{name: "rename and truncate fail, then the next write", ops: []string{"rename", "truncate"}, match: func(n string) bool { return isObject(n) || isJournal(n) }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			faults := &faultyIO{ops: tt.ops, match: tt.match}
			s := openStore(t, dir, func(o *filestore.Options) { o.IO = faults })
			c := s.Client()
			h := hook("h")
			must(t, c.Create(ctx, h))
			journalBefore := readFile(t, filepath.Join(dir, "journal"))

			faults.arm(true)
			var err error
			if tt.deletes {
				err = c.Delete(ctx, h.DeepCopy())
			} else {
				u := h.DeepCopy()
				u.Spec.Goal = "failed update"
				err = c.Update(ctx, u)
			}
			if err == nil || faults.fired < 2 {
				t.Fatalf("write: %v after %d faults, want a failure and a failed cut", err, faults.fired)
			}
			if readFile(t, filepath.Join(dir, "journal")) == journalBefore {
				t.Fatal("the journal was cut back: the truncate fault did not fire")
			}
			if i == 3 {
				// The next write, still on the broken disk, fails too.
				if err := c.Create(ctx, hook("refused")); err == nil {
					t.Fatal("a write after an entry that could not be taken back succeeded")
				}
			}
			faults.arm(false)
			faults.noResync(t)

			// A watch from the last acknowledged version sees nothing.
			w, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace("default"), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: h.ResourceVersion}})
			must(t, err)
			select {
			case ev := <-w.ResultChan():
				if ev.Type != watch.Error {
					t.Fatalf("a watch saw the failed write: %s %v", ev.Type, ev.Object)
				}
			case <-time.After(300 * time.Millisecond):
			}
			w.Stop()

			check := func(when string, c client.Client) {
				t.Helper()
				got := &agentsv1alpha1.Hook{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
					t.Fatalf("%s: %v, the object is gone", when, err)
				}
				if got.ResourceVersion != h.ResourceVersion || got.Spec.Goal != h.Spec.Goal {
					t.Fatalf("%s: rv %s goal %q, want the version before the failed write", when, got.ResourceVersion, got.Spec.Goal)
				}
			}
			check("at once", c)
			_ = s.Close()
			// Until a writer cuts the entries, Inspect (tether doctor)
			// names the mark in the lock file.
			lock := filepath.Join(dir, ".lock")
			if problems := inspect(t, dir); !slices.ContainsFunc(problems, func(p filestore.Problem) bool {
				return p.Path == lock && strings.Contains(p.Reason, "failed write")
			}) {
				t.Fatalf("Inspect: %+v, want the void mark in %s", problems, lock)
			}
			s2 := openStore(t, dir)
			check("after a restart", s2.Client())
			if got := readFile(t, filepath.Join(dir, "journal")); got != journalBefore {
				t.Fatalf("after a restart the journal is\n%s\nwant\n%s", got, journalBefore)
			}
			later := hook("later")
			must(t, s2.Client().Create(ctx, later))
			check("after a later write", s2.Client())
			_ = s2.Close()
			if problems := inspect(t, dir); slices.ContainsFunc(problems, func(p filestore.Problem) bool { return p.Path == lock }) {
				t.Fatalf("Inspect: %+v after the cut, want no problem with %s", problems, lock)
			}
			// The mark is cleared: a third opening keeps the later write.
			s3 := openStore(t, dir)
			must(t, s3.Client().Get(ctx, client.ObjectKeyFromObject(later), &agentsv1alpha1.Hook{}))
		})
	}
}

// TestFailedWritesInAGroup runs concurrent writers, so that group commits
// form, while the temp file fsyncs of one object fail (and, in the second
// case, every cut of the journal too). Each failed write must be
// invisible and each acknowledged one durable, after a restart as well,
// with one journal entry per acknowledged write.
func TestFailedWritesInAGroup(t *testing.T) {
	for _, cutFails := range []bool{false, true} {
		t.Run("cut fails "+strconv.FormatBool(cutFails), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			// Only the temp fsyncs of w3 fail, and the journal's cuts.
			faults := &faultyIO{ops: []string{"sync"}, cutJournal: cutFails, match: func(n string) bool {
				return strings.HasPrefix(filepath.Base(n), ".tmp-w3.yaml")
			}}
			s := openStore(t, dir, func(o *filestore.Options) { o.IO = faults })
			c := s.Client()
			const writers, rounds = 8, 6
			for i := range writers {
				must(t, c.Create(ctx, hook("w"+strconv.Itoa(i))))
			}
			lines := func() int { return strings.Count(readFile(t, filepath.Join(dir, "journal")), "\n") }
			linesBefore := lines()
			faults.arm(true)
			acked := make([]int, writers)
			failed := make([]int, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() {
					for r := 1; r <= rounds; r++ {
						cur := &agentsv1alpha1.Hook{}
						if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "w" + strconv.Itoa(i)}, cur); err != nil {
							t.Error(err)
							return
						}
						cur.Annotations = map[string]string{countAnnotation: strconv.Itoa(r)}
						if err := c.Update(ctx, cur); err != nil {
							failed[i]++
							continue
						}
						acked[i] = r
					}
				})
			}
			wg.Wait()
			faults.arm(false)
			faults.noResync(t)
			okCount := 0
			for i := range writers {
				okCount += rounds - failed[i]
			}
			if failed[3] != rounds {
				t.Fatalf("w3: %d of %d writes failed, want all", failed[3], rounds)
			}
			t.Logf("%d writes acknowledged, %d failed %v", okCount, writers*rounds-okCount, failed)
			check := func(when string, c client.Client) {
				t.Helper()
				for i := range writers {
					got := &agentsv1alpha1.Hook{}
					must(t, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "w" + strconv.Itoa(i)}, got))
					want := ""
					if acked[i] > 0 {
						want = strconv.Itoa(acked[i])
					}
					if v := got.Annotations[countAnnotation]; v != want {
						t.Fatalf("%s: w%d has count %q, want %q, its last acknowledged write", when, i, v, want)
					}
				}
			}
			check("at once", c)
			_ = s.Close()
			// Inspect (tether doctor) names the void mark exactly when a
			// cut failed and no writer has made it since.
			lock := filepath.Join(dir, ".lock")
			if marked := slices.ContainsFunc(inspect(t, dir), func(p filestore.Problem) bool {
				return p.Path == lock && strings.Contains(p.Reason, "failed write")
			}); marked != cutFails {
				t.Fatalf("Inspect reports a void mark in %s: %v, want %v", lock, marked, cutFails)
			}
			s2 := openStore(t, dir)
			check("after a restart", s2.Client())
			must(t, s2.Client().Create(ctx, hook("later")))
			if n := lines() - linesBefore - 1; n != okCount {
				t.Fatalf("the journal gained %d entries for %d acknowledged writes", n, okCount)
			}
		})
	}
}

// slowFailIO is faultyIO whose failing fsyncs take a while, as a disk's
// do, so that a watch woken by the failed write's append reads the
// journal before the write is taken back.
type slowFailIO struct{ *faultyIO }

func (s slowFailIO) Sync(file *os.File) error {
	err := s.faultyIO.Sync(file)
	if err != nil {
		time.Sleep(300 * time.Millisecond)
	}
	return err
}

// TestWatchNeverSeesAFailedWrite watches while an update fails at its
// temp file's fsync after its journal entry was appended: the watch must
// deliver the next, successful update and never the failed one.
func TestWatchNeverSeesAFailedWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	faults := &faultyIO{ops: []string{"sync"}, match: func(n string) bool { return strings.HasPrefix(filepath.Base(n), ".tmp-") }}
	s := openStore(t, dir, func(o *filestore.Options) { o.IO = slowFailIO{faults} })
	c := s.Client()
	h := hook("h")
	must(t, c.Create(ctx, h))
	w, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace("default"), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: h.ResourceVersion}})
	must(t, err)
	defer w.Stop()
	failed := h.DeepCopy()
	failed.Spec.Goal = "failed"
	faults.arm(true)
	if err := c.Update(ctx, failed); err == nil {
		t.Fatal("the update did not fail")
	}
	faults.arm(false)
	ok := h.DeepCopy()
	ok.Spec.Goal = "acknowledged"
	must(t, c.Update(ctx, ok))
	select {
	case ev := <-w.ResultChan():
		got, _ := ev.Object.(*agentsv1alpha1.Hook)
		if got == nil || got.Spec.Goal != "acknowledged" {
			t.Fatalf("the watch delivered %s %+v first, want the acknowledged update", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch delivered nothing")
	}
}

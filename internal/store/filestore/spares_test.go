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
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/atomicfs"
)

// tempFiles lists the temp files below dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range storeFiles(t, dir) {
		if strings.HasPrefix(filepath.Base(f), atomicfs.TempPrefix) {
			out = append(out, f)
		}
	}
	return out
}

// TestWritesRefillReplacedFiles: the store's writes, updates and creates,
// spec and status, one after another and side by side, put the files they
// replace back to use instead of creating a file each (see
// atomicfs.Spares), every object ends with its last write, and Close
// leaves no temp file behind.
func TestWritesRefillReplacedFiles(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	ctx := context.Background()
	const writers, rounds = 6, 15
	inodes := map[uint64]bool{}
	// Each file seen is held open to the end, so that a file the store
	// removed cannot give its inode to a file it creates, which would
	// look like a refill.
	var held []*os.File
	t.Cleanup(func() {
		for _, f := range held {
			_ = f.Close()
		}
	})
	record := func(name string) {
		f, err := os.Open(filepath.Join(dir, "hooks", "default", name+".yaml"))
		if err != nil {
			t.Error(err)
			return
		}
		held = append(held, f)
		fi, err := f.Stat()
		if err != nil {
			t.Error(err)
			return
		}
		inodes[fi.Sys().(*syscall.Stat_t).Ino] = true
	}
	for i := range writers {
		if err := c.Create(ctx, hook(fmt.Sprintf("h%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range writers {
		name := fmt.Sprintf("h%d", i)
		wg.Go(func() {
			for r := range rounds {
				h := &agentsv1alpha1.Hook{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
					t.Error(err)
					return
				}
				var err error
				if r%2 == 0 {
					h.Spec.Goal = fmt.Sprintf("goal %d", r)
					err = c.Update(ctx, h)
				} else {
					h.Status.ObservedGeneration = int64(r)
					err = c.Status().Update(ctx, h)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				record(name)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Each write replaced a file; with the replaced ones refilled, the
	// files in use are about the objects plus the writes in flight, not
	// the writes made.
	if limit := 3 * writers; len(inodes) > limit {
		t.Errorf("%d writes went through %d files; want at most %d", writers*rounds, len(inodes), limit)
	}
	for i := range writers {
		h := &agentsv1alpha1.Hook{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("h%d", i)}, h); err != nil {
			t.Fatal(err)
		}
		if h.Spec.Goal != fmt.Sprintf("goal %d", rounds-1) || h.Status.ObservedGeneration != rounds-2 {
			t.Errorf("%s ends with goal %q and status observedGeneration %d", h.Name, h.Spec.Goal, h.Status.ObservedGeneration)
		}
	}
	// A create in the same directory takes a spare too.
	before := len(inodes)
	if err := c.Create(ctx, hook("late")); err != nil {
		t.Fatal(err)
	}
	record("late")
	if len(inodes) != before {
		t.Error("a create made a new file while replaced ones were kept")
	}
	if len(tempFiles(t, dir)) == 0 {
		t.Error("no spare was kept")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("Close left temp files: %v", left)
	}
}

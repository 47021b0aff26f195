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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// mountTmpfs mounts a tmpfs of size at a new directory, or skips the test
// when this process may not mount (not root, or no mount namespace).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; the fault-injecting TestFailedWriteNeverTakesEffect covers the same without")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	return mnt
}

// TestFullAndReadOnlyDisk runs heartbeats (annotation updates) on a store
// on a full 1 MiB tmpfs: each either succeeds or fails with ENOSPC, reads
// keep working, and after space is freed and the store opened again,
// exactly the acknowledged writes took effect, with one journal entry
// each. Then the filesystem is made read-only: reads still work and writes
// fail.
func TestFullAndReadOnlyDisk(t *testing.T) {
	mnt := mountTmpfs(t, "1m")
	ctx := context.Background()
	dir := filepath.Join(mnt, "store")
	s := openStore(t, dir)
	c := s.Client()
	h := hook("beating")
	must(t, c.Create(ctx, h))
	must(t, c.Create(ctx, hook("other")))
	// fill fills the disk. The journal's last page keeps what room it has,
	// so a write can append its entry and then fail on its temp file: the
	// entry must then be taken back.
	fill := func() {
		ballast, err := os.OpenFile(filepath.Join(mnt, "ballast"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		must(t, err)
		chunk := make([]byte, 4096)
		for {
			if _, err := ballast.Write(chunk); err != nil {
				break
			}
		}
		_ = ballast.Close()
	}
	fill()
	journalLines := func() int {
		data, err := os.ReadFile(filepath.Join(dir, "journal"))
		must(t, err)
		return strings.Count(string(data), "\n")
	}
	linesBefore := journalLines()
	// ok counts the writes that returned no error: the journal's growth is
	// checked against it, never taken as the count of acknowledged writes.
	acked, ok, failed := 0, 0, 0
	for i := 1; i <= 24; i++ {
		cur := &agentsv1alpha1.Hook{}
		must(t, c.Get(ctx, client.ObjectKeyFromObject(h), cur))
		cur.Annotations = map[string]string{countAnnotation: strconv.Itoa(i)}
		err := c.Update(ctx, cur)
		switch {
		case err == nil:
			acked = i
			ok++
		case errors.Is(err, syscall.ENOSPC):
			failed++
		default:
			t.Fatalf("heartbeat %d: %v, want success or ENOSPC", i, err)
		}
		// Reads work on the full disk.
		list := &agentsv1alpha1.HookList{}
		if err := c.List(ctx, list); err != nil || len(list.Items) != 2 {
			t.Fatalf("list on a full disk: %v, %d items", err, len(list.Items))
		}
		// Free a little now and then, so that some writes get through; fill
		// again otherwise, taking the pages the replaced files freed.
		if i%6 == 0 {
			must(t, os.Truncate(filepath.Join(mnt, "ballast"), max(0, fileSize(t, filepath.Join(mnt, "ballast"))-8192)))
		} else {
			fill()
		}
	}
	if failed == 0 {
		t.Fatal("no heartbeat failed: the disk was not full")
	}
	t.Logf("on a full disk: %d heartbeats failed with ENOSPC, %d acknowledged, the last %d", failed, ok, acked)
	if n := journalLines() - linesBefore; n != ok {
		t.Fatalf("the journal gained %d entries for %d acknowledged writes", n, ok)
	}
	_ = s.Close()
	must(t, os.Remove(filepath.Join(mnt, "ballast")))
	s = openStore(t, dir)
	c = s.Client()
	must(t, c.Create(ctx, hook("after")))
	got := &agentsv1alpha1.Hook{}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(h), got))
	if v, _ := strconv.Atoi(got.Annotations[countAnnotation]); v != acked {
		t.Fatalf("after freeing space: count %d, want %d, the last acknowledged heartbeat (%d failed)", v, acked, failed)
	}
	if n := journalLines() - linesBefore - 1; n != ok {
		t.Fatalf("after a restart the journal gained %d entries for %d acknowledged writes", n, ok)
	}
	visible := &agentsv1alpha1.HookList{}
	must(t, c.List(ctx, visible))
	if len(visible.Items) != 3 {
		t.Fatalf("after a restart: %d Hooks, want the 3 created", len(visible.Items))
	}
	_ = s.Close()

	// Read-only: reads work, writes fail.
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	s = openStore(t, dir)
	c = s.Client()
	list := &agentsv1alpha1.HookList{}
	if err := c.List(ctx, list); err != nil || len(list.Items) != 3 {
		t.Fatalf("list on a read-only filesystem: %v, %d items", err, len(list.Items))
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(h), got))
	if err := c.Create(ctx, hook("refused")); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("create on a read-only filesystem: %v, want EROFS", err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	must(t, err)
	return fi.Size()
}

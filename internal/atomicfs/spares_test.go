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

package atomicfs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// inode returns the inode number of the file at path, not following a link.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// replaceKeeping replaces name in dir with data as the store does (temp
// file, fsync, exchange, directory fsync) and gives what is left to
// spares, returning the temp name the replaced file was left under.
func replaceKeeping(t *testing.T, spares *Spares, dir *os.File, name, data string) string {
	t.Helper()
	left := replaceKeepingUnsynced(t, spares, dir, name, data)
	mark := spares.Mark()
	if err := SyncDir(dir.Name()); err != nil {
		t.Fatal(err)
	}
	spares.Synced(dir.Name(), mark)
	return left
}

// replaceKeepingUnsynced is replaceKeeping without the directory fsync
// after the spare was kept.
func replaceKeepingUnsynced(t *testing.T, spares *Spares, dir *os.File, name, data string) string {
	t.Helper()
	tmp, err := spares.WriteTempAtUnsynced(dir, name, []byte(data), 0o600, Real)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := tmp.PlaceIf(func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	left := tmp.Name()
	if !spares.Keep(tmp) {
		tmp.Discard()
	}
	return left
}

func TestSparesRefillReplacedFiles(t *testing.T) {
	d := t.TempDir()
	dir, err := OpenDir(d, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dir.Close() }()
	spares := NewSpares(4, 8)
	target := filepath.Join(d, "a.yaml")
	if err := os.WriteFile(target, []byte("v0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	replaced := inode(t, target)
	left := replaceKeeping(t, spares, dir, "a.yaml", "v1\n")
	wantContent(t, target, "v1\n")
	if spares.Len() != 1 || inode(t, left) != replaced {
		t.Fatalf("the replaced file was not kept as a spare: %d spares, %s", spares.Len(), left)
	}

	// The next write in the directory, for another file, refills it: the
	// same inode, emptied, 0600, under a temp name of its new target.
	tmp, err := spares.CreateTempAt(dir, "b.yaml", Real)
	if err != nil {
		t.Fatal(err)
	}
	if got := inode(t, tmp.Name()); got != replaced {
		t.Errorf("the write created inode %d instead of refilling %d", got, replaced)
	}
	if !strings.HasPrefix(filepath.Base(tmp.Name()), TempPrefix+"b.yaml-") {
		t.Errorf("a refilled spare is named %s, not after its new target", tmp.Name())
	}
	if fileExists(left) {
		t.Errorf("the spare's old name %s is still there", left)
	}
	if err := tmp.FillUnsynced([]byte("b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Sync(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != 2 {
		t.Errorf("the refilled spare has mode %v and %d bytes; want 0600 and only the new content", fi.Mode().Perm(), fi.Size())
	}
	if err := tmp.Install(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, filepath.Join(d, "b.yaml"), "b\n")
	if spares.Len() != 0 {
		t.Errorf("%d spares left after the refill", spares.Len())
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestSparesNeverRefillWhatChanged: a spare that is no longer the file
// this process left (linked elsewhere, replaced by a link or a directory,
// removed, its mode changed) is never written through; the write gets a
// file of its own, and whatever is at the spare's name is left as it was
// or removed, never followed.
func TestSparesNeverRefillWhatChanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change alters the spare at path; check verifies, after the
		// write, that nothing outside the spare was touched.
		change func(t *testing.T, path, outside string)
		check  func(t *testing.T, outside string)
		// refilled tells whether the spare's inode may be refilled.
		refilled bool
	}{
		{
			name: "linked elsewhere",
			change: func(t *testing.T, path, outside string) {
				if err := os.Link(path, outside); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, outside string) { wantContent(t, outside, "v0\n") },
		},
		{
			name: "replaced by a symbolic link",
			change: func(t *testing.T, path, outside string) {
				if err := os.WriteFile(outside, []byte("theirs\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, path); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, outside string) { wantContent(t, outside, "theirs\n") },
		},
		{
			name: "replaced by a directory",
			change: func(t *testing.T, path, outside string) {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "removed",
			change: func(t *testing.T, path, outside string) {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "made readable by others",
			change: func(t *testing.T, path, outside string) {
				if err := os.Chmod(path, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			refilled: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, elsewhere := t.TempDir(), t.TempDir()
			dir, err := OpenDir(d, false)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = dir.Close() }()
			spares := NewSpares(4, 8)
			if err := os.WriteFile(filepath.Join(d, "a.yaml"), []byte("v0\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			spare := replaceKeeping(t, spares, dir, "a.yaml", "v1\n")
			sparedInode := inode(t, spare)
			// Held open, the spare's inode cannot be freed and given to
			// the write's new file, which would look like a refill.
			held, err := os.Open(spare)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = held.Close() }()
			outside := filepath.Join(elsewhere, "theirs")
			tc.change(t, spare, outside)

			tmp, err := spares.WriteTempAtUnsynced(dir, "b.yaml", []byte("b\n"), 0o600, Real)
			if err != nil {
				t.Fatal(err)
			}
			defer tmp.Discard()
			if got := inode(t, tmp.Name()); (got == sparedInode) != tc.refilled {
				t.Errorf("refilled the spare: %v, want %v", got == sparedInode, tc.refilled)
			}
			if err := tmp.Sync(); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(tmp.Name()); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the temp file: %v, %v; want mode 0600", fi, err)
			}
			if tc.check != nil {
				tc.check(t, outside)
			}
			if fi, err := os.Lstat(spare); err == nil && fi.Mode().IsRegular() {
				t.Errorf("a spare that could not be refilled is still at %s", spare)
			}
			if spares.Len() != 0 {
				t.Errorf("%d spares kept", spares.Len())
			}
		})
	}
}

func TestSparesAreBounded(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	spares := NewSpares(2, 3)
	kept := 0
	for i, d := range []string{a, a, a, b, b} {
		dir, err := OpenDir(d, false)
		if err != nil {
			t.Fatal(err)
		}
		name := "f" + string(rune('0'+i)) + ".yaml"
		if err := os.WriteFile(filepath.Join(d, name), []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		tmp, err := WriteTempAtUnsynced(dir, name, []byte("new\n"), 0o600, Real)
		if err != nil {
			t.Fatal(err)
		}
		if err := tmp.InstallIf(func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		if spares.Keep(tmp) {
			kept++
		} else {
			tmp.Discard()
		}
		_ = dir.Close()
	}
	// a keeps 2 of its 3 (per directory), b 1 of its 2 (in all).
	if kept != 3 || spares.Len() != 3 {
		t.Fatalf("kept %d (Len %d), want 3", kept, spares.Len())
	}
	var removed []string
	spares.Drain(func(path string) {
		removed = append(removed, path)
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
	})
	if len(removed) != 3 || spares.Len() != 0 {
		t.Fatalf("Drain removed %v, %d left", removed, spares.Len())
	}
	for _, d := range []string{a, b} {
		if slices.ContainsFunc(entries(t, d), func(n string) bool { return strings.HasPrefix(n, TempPrefix) }) {
			t.Errorf("temp files left in %s: %v", d, entries(t, d))
		}
	}

	// A Temp whose file went into place leaves nothing to keep.
	dir, err := OpenDir(a, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dir.Close() }()
	tmp, err := WriteTempAt(dir, "g.yaml", []byte("g\n"), 0o600, Real)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.Install(); err != nil {
		t.Fatal(err)
	}
	if spares.Keep(tmp) || spares.Len() != 0 {
		t.Error("kept a Temp that had been renamed into place")
	}
}

// TestSparesWaitForTheirDirectoryFsync: a spare is refilled only once an
// fsync of its directory, begun after it was kept, has made its leaving
// the replaced target's name durable; before that a power loss could
// bring the name back, pointing at the refilled content.
func TestSparesWaitForTheirDirectoryFsync(t *testing.T) {
	d := t.TempDir()
	dir, err := OpenDir(d, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dir.Close() }()
	spares := NewSpares(4, 8)
	if err := os.WriteFile(filepath.Join(d, "a.yaml"), []byte("v0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	early := spares.Mark()
	spare := replaceKeepingUnsynced(t, spares, dir, "a.yaml", "v1\n")
	sparedInode := inode(t, spare)
	held, err := os.Open(spare)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Close() }()
	refills := func() bool {
		t.Helper()
		tmp, err := spares.CreateTempAt(dir, "b.yaml", Real)
		if err != nil {
			t.Fatal(err)
		}
		defer tmp.Discard()
		return inode(t, tmp.Name()) == sparedInode
	}
	if refills() {
		t.Fatal("refilled a spare whose directory was not fsynced since")
	}
	// An fsync that began before the spare was kept does not cover it.
	spares.Synced(d, early)
	if refills() {
		t.Fatal("refilled a spare after an fsync that began before it was kept")
	}
	spares.Synced(d, spares.Mark())
	if !refills() {
		t.Fatal("did not refill a spare whose directory was fsynced since")
	}
}

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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// wantOnly fails unless dir holds exactly the file name: no temp files.
func wantOnly(t *testing.T, dir, name string) {
	t.Helper()
	if got := entries(t, dir); len(got) != 1 || got[0] != name {
		t.Fatalf("directory holds %q, want only %q", got, name)
	}
}

// wantContent fails unless path holds want.
func wantContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("%s holds %q (%v), want %q", path, got, err, want)
	}
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name     string
		existing string // "" for no file yet
		mkdir    bool
		data     string
		perm     os.FileMode
	}{
		{name: "creates the missing directory and the file", data: "one", perm: 0o600},
		{name: "creates the file in an existing directory", mkdir: true, data: "one", perm: 0o600},
		{name: "replaces a file", mkdir: true, existing: "old", data: "new", perm: 0o600},
		{name: "sets a mode other than 0600", mkdir: true, existing: "old", data: "new", perm: 0o644},
		{name: "writes an empty file", mkdir: true, existing: "old", data: "", perm: 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b")
			path := filepath.Join(dir, "x.yaml")
			if tt.mkdir || tt.existing != "" {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, []byte(tt.data), tt.perm); err != nil {
				t.Fatal(err)
			}
			wantContent(t, path, tt.data)
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != tt.perm {
				t.Fatalf("mode %v (%v), want %v", fi.Mode().Perm(), err, tt.perm)
			}
			wantOnly(t, dir, "x.yaml")
		})
	}
}

func TestWriteFileIfChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.md")
	steps := []struct {
		data        string
		wantWritten bool
	}{
		{"one", true},
		{"one", false},
		{"two", true},
		{"two", false},
	}
	for i, s := range steps {
		written, err := WriteFileIfChanged(path, []byte(s.data), 0o600)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if written != s.wantWritten {
			t.Errorf("step %d: written = %v, want %v", i, written, s.wantWritten)
		}
		wantContent(t, path, s.data)
	}
	wantOnly(t, filepath.Dir(path), "x.md")
}

// TestFailedWriteKeepsTheOldFile makes each step of a replacement fail in
// turn and checks that the old file stays whole and no temp file is left.
func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	injected := errors.New("injected failure")
	tests := []struct {
		name   string
		sync   func(*os.File) error
		rename func(*os.File, string, string) error
		perm   os.FileMode
	}{
		{name: "fsync of the temp file fails", sync: func(*os.File) error { return injected }},
		{name: "rename fails", rename: func(*os.File, string, string) error { return injected }},
		{name: "fsync fails after a mode change", perm: 0o644, sync: func(*os.File) error { return injected }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			realRename := renameFile
			t.Cleanup(func() { syncFile, renameFile = (*os.File).Sync, realRename })
			if tt.sync != nil {
				syncFile = tt.sync
			}
			if tt.rename != nil {
				renameFile = tt.rename
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "x.yaml")
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			perm := tt.perm
			if perm == 0 {
				perm = 0o600
			}
			err := WriteFile(path, []byte("new"), perm)
			if !errors.Is(err, injected) {
				t.Fatalf("WriteFile = %v, want the injected failure", err)
			}
			wantContent(t, path, "old")
			wantOnly(t, dir, "x.yaml")
		})
	}
}

func TestWriteFileIntoAFileFails(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(parent, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(parent, "x.yaml"), []byte("new"), 0o600); err == nil {
		t.Fatal("writing below a regular file succeeded")
	}
	wantContent(t, parent, "not a directory")
}

func TestCreateFile(t *testing.T) {
	tests := []struct {
		name      string
		existing  string
		wantExist bool
		want      string
	}{
		{name: "creates a missing file", want: "first"},
		{name: "keeps an existing file", existing: "earlier", wantExist: true, want: "earlier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "key")
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := CreateFile(path, []byte("first"), 0o600)
			if got := errors.Is(err, fs.ErrExist); got != tt.wantExist || err != nil && !tt.wantExist {
				t.Fatalf("CreateFile = %v, want exists=%v", err, tt.wantExist)
			}
			wantContent(t, path, tt.want)
			wantOnly(t, dir, "key")
		})
	}
}

// save replaces path with a new file holding content, as an editor does.
func save(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// isFile tells whether path is still the file described by fi.
func isFile(path string, fi os.FileInfo) bool {
	cur, err := os.Lstat(path)
	return err == nil && os.SameFile(cur, fi)
}

// installIf writes data for path and installs it with InstallIf.
func installIf(t *testing.T, path, data string, stillWanted func(string) bool) error {
	t.Helper()
	tmp, err := WriteTemp(path, []byte(data), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Discard()
	return tmp.InstallIf(stillWanted)
}

// TestInstallIfNeverLosesANewerSave checks the exchange that rewrites a
// file read earlier: when someone saved again after it was read, their save
// stays; otherwise the new content replaces it.
func TestInstallIfNeverLosesANewerSave(t *testing.T) {
	tests := []struct {
		name      string
		saveAgain bool
		removed   bool
		want      string
	}{
		{name: "unchanged since read: the new content replaces it", want: "store form\n"},
		{name: "saved again since read: the newer save stays", saveAgain: true, want: "newer save\n"},
		{name: "removed since read: nothing is written", removed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "obj.yaml")
			save(t, path, "first edit\n")
			read, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.saveAgain {
				save(t, path, "newer save\n")
			}
			if tt.removed {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			if err := installIf(t, path, "store form\n", func(replaced string) bool { return isFile(replaced, read) }); err != nil {
				t.Fatal(err)
			}
			if tt.removed {
				if got := entries(t, dir); len(got) != 0 {
					t.Fatalf("directory holds %q, want nothing", got)
				}
				return
			}
			wantContent(t, path, tt.want)
			wantOnly(t, dir, "obj.yaml")
		})
	}
}

// TestInstallIfKeepsASaveThatLandsDuringTheGiveBack covers saves that land
// while InstallIf hands a newer save back: each one replaces the new
// content at the path, and the give-back must not carry it away.
func TestInstallIfKeepsASaveThatLandsDuringTheGiveBack(t *testing.T) {
	for _, during := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("%d saves during the give-back", during), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "obj.yaml")
			save(t, path, "first edit\n")
			read, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			save(t, path, "second edit\n")
			checks := 0
			err = installIf(t, path, "store form\n", func(replaced string) bool {
				checks++
				for i := range during {
					save(t, path, fmt.Sprintf("save %d during the give-back\n", i+1))
				}
				return isFile(replaced, read)
			})
			if err != nil {
				t.Fatal(err)
			}
			wantContent(t, path, fmt.Sprintf("save %d during the give-back\n", during))
			if checks != 1 {
				t.Fatalf("stillWanted called %d times, want 1", checks)
			}
			wantOnly(t, dir, "obj.yaml")
		})
	}
}

func TestExchange(t *testing.T) {
	tests := []struct {
		name       string
		makeB      bool
		wantErrnum error
	}{
		{name: "swaps two files", makeB: true},
		{name: "a missing file is an error", wantErrnum: unix.ENOENT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			save(t, a, "A")
			if tt.makeB {
				save(t, b, "B")
			}
			err := Exchange(a, b)
			if tt.wantErrnum != nil {
				if !errors.Is(err, tt.wantErrnum) {
					t.Fatalf("Exchange = %v, want %v", err, tt.wantErrnum)
				}
				wantContent(t, a, "A")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantContent(t, a, "B")
			wantContent(t, b, "A")
		})
	}
}

func TestRemoveDurable(t *testing.T) {
	tests := []struct {
		name  string
		exist bool
	}{
		{name: "removes a file", exist: true},
		{name: "a missing file is no error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x")
			if tt.exist {
				save(t, path, "x")
			}
			if err := RemoveDurable(path); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after RemoveDurable: %v, want not exist", err)
			}
		})
	}
}

func TestSyncDirOfAMissingDirectoryFails(t *testing.T) {
	if err := SyncDir(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SyncDir = %v, want not exist", err)
	}
}

// TestWriteThroughASymlinkedDirectoryIsRefused checks that no write lands
// outside through a symbolic link as the file's directory, and that a
// symbolic link as the file itself is replaced, not followed.
func TestWriteThroughASymlinkedDirectoryIsRefused(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "x.yaml")
	save(t, target, "outside\n")
	dir := t.TempDir()
	link := filepath.Join(dir, "linked")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(link, "x.yaml"), []byte("new\n"), 0o600); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("WriteFile through a symlinked directory: %v, want a refusal", err)
	}
	if err := CreateFile(filepath.Join(link, "y.yaml"), []byte("new\n"), 0o600); err == nil {
		t.Fatal("CreateFile through a symlinked directory succeeded")
	}
	if err := RemoveDurable(filepath.Join(link, "x.yaml")); err == nil {
		t.Fatal("RemoveDurable through a symlinked directory succeeded")
	}
	wantContent(t, target, "outside\n")
	wantOnly(t, outside, "x.yaml")
	// A symlink at the file's own name is replaced by the new file.
	leaf := filepath.Join(dir, "leaf.yaml")
	if err := os.Symlink(target, leaf); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(leaf, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantContent(t, target, "outside\n")
	wantContent(t, leaf, "new\n")
}

// countingIO is Real, counting the fsyncs of files and of directories.
type countingIO struct{ files, dirs int }

func (c *countingIO) Write(f *os.File, b []byte) (int, error) { return Real.Write(f, b) }

func (c *countingIO) Sync(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		c.dirs++
	} else {
		c.files++
	}
	return Real.Sync(f)
}

// TestPlaceIfLeavesTheFsyncsToTheCaller checks the steps of a group
// commit's write: content written without an fsync, fsynced by Sync, put
// in place by PlaceIf without a directory fsync, which SyncDir makes.
func TestPlaceIfLeavesTheFsyncsToTheCaller(t *testing.T) {
	tests := []struct {
		name        string
		existing    bool
		stillWanted func(string) bool
	}{
		{name: "create (rename)"},
		{name: "replace (exchange)", existing: true, stillWanted: func(string) bool { return true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "f")
			if tt.existing {
				if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			d, err := OpenDir(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = d.Close() }()
			io := &countingIO{}
			tmp, err := WriteTempAtUnsynced(d, "f", []byte("new"), 0o600, io)
			if err != nil {
				t.Fatal(err)
			}
			defer tmp.Discard()
			if io.files != 0 {
				t.Fatalf("%d fsyncs before Sync, want 0", io.files)
			}
			if err := tmp.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := tmp.Sync(); err != nil { // a second Sync does nothing
				t.Fatal(err)
			}
			if err := tmp.PlaceIf(tt.stillWanted); err != nil {
				t.Fatal(err)
			}
			if io.files != 1 || io.dirs != 0 {
				t.Fatalf("%d file and %d directory fsyncs after PlaceIf, want 1 and 0", io.files, io.dirs)
			}
			if got, _ := os.ReadFile(target); string(got) != "new" {
				t.Fatalf("target holds %q, want %q", got, "new")
			}
			if tmp.Dir() != dir {
				t.Fatalf("Dir() = %s, want %s", tmp.Dir(), dir)
			}
			if err := tmp.SyncDir(); err != nil {
				t.Fatal(err)
			}
			if io.dirs != 1 {
				t.Fatalf("%d directory fsyncs after SyncDir, want 1", io.dirs)
			}
		})
	}
}

// TestCreateTempAtThenFill: a temp file created empty and filled later
// installs like one written at once, and one never filled is removed by
// Discard, leaving the directory as it was.
func TestCreateTempAtThenFill(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	if err := os.WriteFile(filepath.Join(dir, "obj.yaml"), []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	used, err := CreateTempAt(d, "obj.yaml", Real)
	if err != nil {
		t.Fatal(err)
	}
	unused, err := CreateTempAt(d, "obj.yaml", Real)
	if err != nil {
		t.Fatal(err)
	}
	if err := used.FillUnsynced([]byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := used.FillUnsynced([]byte("again\n"), 0o600); err == nil {
		t.Error("a second fill was accepted")
	}
	if err := used.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := used.Install(); err != nil {
		t.Fatal(err)
	}
	unused.Discard()
	if got, err := os.ReadFile(filepath.Join(dir, "obj.yaml")); err != nil || string(got) != "new\n" {
		t.Fatalf("obj.yaml = %q, %v; want the filled content", got, err)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("the directory holds %v, want only obj.yaml", names)
	}
}

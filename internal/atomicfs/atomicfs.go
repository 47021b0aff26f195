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

// Package atomicfs holds tether's filesystem primitives: atomic replacement
// of a file, atomic exchange of two names (renameat2 RENAME_EXCHANGE),
// exclusive creation, directory fsync and flock.
//
// A replacement writes the new content to a temp file in the target's
// directory, fsyncs it, renames it over the target and fsyncs the
// directory, so that a reader sees the old content or the new, never a torn
// mix, and an acknowledged write survives a crash. Temp files are named
// ".tmp-NAME-RANDOM": they start with a dot, so directory scans that skip
// dot files never see them. A failed write leaves the target untouched and
// removes its temp file.
package atomicfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Hooks for the tests, which make each step of a write fail in turn.
var (
	syncFile   = (*os.File).Sync
	renameFile = os.Rename
)

// WriteFile replaces path with data atomically and durably, with mode perm.
// The directory is created with mode 0700 when missing.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	t, err := WriteTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer t.Discard()
	return t.Install()
}

// WriteFileIfChanged is WriteFile that writes nothing when path already
// holds data. It reports whether it wrote.
func WriteFileIfChanged(path string, data []byte, perm os.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := WriteFile(path, data, perm); err != nil {
		return false, err
	}
	return true, nil
}

// CreateFile makes data the content of path, which must not exist yet, with
// mode perm: the content is made durable in a temp file first and then
// linked into place, so concurrent creators agree on one file and a reader
// never sees it partly written. When path exists, CreateFile returns an
// error that matches fs.ErrExist and leaves path alone.
func CreateFile(path string, data []byte, perm os.FileMode) error {
	t, err := WriteTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(t.name) }()
	if err := os.Link(t.name, path); err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// Temp is new content for a path, durable in a temp file beside it and not
// yet in place. Install or InstallIf puts it in place; Discard removes what
// is left under the temp name.
type Temp struct {
	path, name string
	// renamed is set once a plain rename moved the temp file into place,
	// leaving nothing under its name.
	renamed bool
}

// WriteTemp writes data to a temp file in path's directory with mode perm
// and fsyncs it, creating the directory 0700 only when it is missing: every
// write would otherwise pay a stat for a directory that nearly always
// exists.
func WriteTemp(path string, data []byte, perm os.FileMode) (*Temp, error) {
	dir, pattern := filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*"
	f, err := os.CreateTemp(dir, pattern)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
		f, err = os.CreateTemp(dir, pattern)
	}
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	t := &Temp{path: path, name: f.Name()}
	if err := fill(f, data, perm); err != nil {
		_ = f.Close()
		t.Discard()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		t.Discard()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return t, nil
}

// fill writes data to f, sets its mode when it is not CreateTemp's 0600,
// and fsyncs it.
func fill(f *os.File, data []byte, perm os.FileMode) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if perm != 0o600 {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	return syncFile(f)
}

// Name is the temp file's path. After InstallIf it may hold the file that
// was replaced, or the new content given back; either way no reader of the
// target can reach it.
func (t *Temp) Name() string { return t.name }

// Install renames the temp file over its path and fsyncs the directory.
func (t *Temp) Install() error {
	if err := renameFile(t.name, t.path); err != nil {
		return fmt.Errorf("replacing %s: %w", t.path, err)
	}
	t.renamed = true
	return SyncDir(filepath.Dir(t.path))
}

// InstallIf exchanges the temp file with the file at its path, keeping the
// exchange only while stillWanted approves of the file it replaced, which
// then lies at the temp name passed to stillWanted. When stillWanted refuses
// (someone saved a newer version just before the exchange) the newer file is
// given back, and so is any save that lands during the give-back, so that a
// file saved by someone else at any moment is swapped back, never lost.
// When the path does not exist, InstallIf does nothing and returns nil: the
// file was removed meanwhile. When stillWanted is nil, InstallIf is Install.
// The temp name holds a file afterwards (Left reports true); Discard or
// remove it.
func (t *Temp) InstallIf(stillWanted func(replaced string) bool) error {
	if stillWanted == nil {
		return t.Install()
	}
	return exchangeIfWanted(t.name, t.path, stillWanted)
}

// Left tells whether a file may remain under the temp name: the temp file
// itself, or the file an exchange put there.
func (t *Temp) Left() bool { return !t.renamed }

// Discard removes the file under the temp name, if any.
func (t *Temp) Discard() {
	if t.Left() {
		_ = os.Remove(t.name)
	}
}

func exchangeIfWanted(tmp, path string, stillWanted func(replaced string) bool) error {
	// Files are told apart by inode, so each one compared is held open:
	// an unlinked inode that is still open cannot be reused by a new save.
	placed, err := os.Open(tmp)
	if err != nil {
		return err
	}
	held := []*os.File{placed}
	defer func() {
		for _, f := range held {
			_ = f.Close()
		}
	}()
	if err := Exchange(tmp, path); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // the file was removed meanwhile
		}
		return err
	}
	if stillWanted(tmp) {
		return SyncDir(filepath.Dir(path))
	}
	// Someone saved a newer version just before the exchange: give it back.
	// Another save may land at path meanwhile, replacing the file just put
	// there; the exchange would then carry that newest save to tmp, so it
	// is put back in turn, until what comes out is the file put in place
	// before, now superseded.
	for range maxGiveBacks {
		next, err := os.Open(tmp)
		if err != nil {
			return err
		}
		held = append(held, next)
		if err := Exchange(tmp, path); err != nil {
			return err
		}
		came, err := os.Lstat(tmp)
		if err != nil {
			return err
		}
		was, err := placed.Stat()
		if err != nil {
			return err
		}
		if os.SameFile(came, was) {
			return SyncDir(filepath.Dir(path))
		}
		placed = next
	}
	// The file keeps being saved; keep the one in hand beside it rather than lose it.
	aside := fmt.Sprintf("%s.unsaved-%d", path, time.Now().UnixNano())
	if err := os.Rename(tmp, aside); err != nil {
		return err
	}
	return fmt.Errorf("%s was saved %d times during one write; the version in hand is kept as %s", path, maxGiveBacks, aside)
}

// maxGiveBacks bounds how often InstallIf hands a newer save back in one write.
const maxGiveBacks = 64

// Exchange atomically swaps the files at a and b (renameat2 with
// RENAME_EXCHANGE). Both must exist; the error matches unix.ENOENT otherwise.
func Exchange(a, b string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "renameat2 exchange", Old: a, New: b, Err: err}
	}
	return nil
}

// RemoveDurable removes path, when it exists, and fsyncs its directory.
func RemoveDurable(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs the directory dir, making the renames, links and removals
// of entries in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

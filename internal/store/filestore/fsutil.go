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

package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// writeFileAtomic makes data the content of path so that a reader, or a
// crash at any moment, sees either the old or the new content: write a temp
// file in the same directory, fsync it, rename it into place, fsync the directory.
func writeFileAtomic(path string, data []byte) error {
	return writeFileAtomicIf(path, data, nil)
}

// writeFileAtomicIf is writeFileAtomic that replaces path only while it is
// still the file expected, as tested by stillWanted on the path where the
// replaced file then lies. The swap is an atomic exchange (renameat2
// RENAME_EXCHANGE), so a file saved by someone else at any moment is
// swapped back, never lost.
func writeFileAtomicIf(path string, data []byte, stillWanted func(replaced string) bool) error {
	tmp, err := writeTemp(path, data)
	if err != nil {
		return err
	}
	defer tmp.discard()
	return tmp.install(stillWanted)
}

// tempFile is new content for path, durable in a temp file beside it and
// not yet in place.
type tempFile struct {
	path, name string
	// renamed is set once a plain rename moved the temp file into place,
	// leaving nothing under its name.
	renamed bool
}

// writeTemp writes data to a temp file in path's directory and fsyncs it.
func writeTemp(path string, data []byte) (*tempFile, error) {
	f, err := createTemp(path)
	if err != nil {
		return nil, err
	}
	return fillTemp(path, f, data)
}

// createTemp creates an empty temp file in path's directory, making the
// directory first only when it is missing: every write would otherwise
// pay a stat for a directory that nearly always exists.
func createTemp(path string) (*os.File, error) {
	dir, pattern := filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*"
	f, err := os.CreateTemp(dir, pattern)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		f, err = os.CreateTemp(dir, pattern)
	}
	return f, err
}

// fillTemp writes data to f, a temp file from createTemp for path, fsyncs
// and closes it.
func fillTemp(path string, f *os.File, data []byte) (*tempFile, error) {
	t := &tempFile{path: path, name: f.Name()}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		t.discard()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		t.discard()
		return nil, err
	}
	if err := f.Close(); err != nil {
		t.discard()
		return nil, err
	}
	return t, nil
}

// install renames the temp file into place, or exchanges it with the file
// there while stillWanted approves, and fsyncs the directory.
func (t *tempFile) install(stillWanted func(replaced string) bool) error {
	if stillWanted != nil {
		return exchangeIfWanted(t.name, t.path, stillWanted)
	}
	if err := os.Rename(t.name, t.path); err != nil {
		return err
	}
	t.renamed = true
	return syncDir(filepath.Dir(t.path))
}

// left tells whether a file may remain under the temp name: the temp file
// itself, or the file an exchange put there.
func (t *tempFile) left() bool { return !t.renamed }

// discard removes the temp file if it was not installed.
func (t *tempFile) discard() {
	if t.left() {
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
	if err := exchange(tmp, path); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // the file was removed meanwhile; its removal is adopted on its own
		}
		return err
	}
	if stillWanted(tmp) {
		return syncDir(filepath.Dir(path))
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
		if err := exchange(tmp, path); err != nil {
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
			return syncDir(filepath.Dir(path))
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

// maxGiveBacks bounds how often exchangeIfWanted hands a person's newer
// save back in one write.
const maxGiveBacks = 64

func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// removeFileDurable removes path and fsyncs its directory.
func removeFileDurable(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// flock takes a lock on f: exclusive for writers, shared for readers. It is
// held by the open file description, so it works across processes and is
// released by the kernel when a holder dies, even by SIGKILL.
func flock(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("locking %s: %w", f.Name(), err)
			}
			return nil
		}
	}
}

func funlock(f *os.File) {
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// checkNotSymlink refuses a path that is a symbolic link, so that no store
// entry can point outside the store directory.
func checkNotSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; the store refuses symlinked entries", path)
	}
	return nil
}

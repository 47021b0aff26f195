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
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Hooks for the tests, which make each step of a write fail in turn.
var (
	syncFile   = (*os.File).Sync
	renameFile = func(dir *os.File, from, to string) error {
		return unix.Renameat(int(dir.Fd()), from, int(dir.Fd()), to)
	}
)

// IO makes the writes and fsyncs of a durable write. Real is the
// filesystem's; tests substitute one that fails at chosen points (a full
// disk, a failed fsync).
type IO interface {
	// Write writes b to f, as (*os.File).Write.
	Write(f *os.File, b []byte) (int, error)
	// Sync fsyncs f, as (*os.File).Sync.
	Sync(f *os.File) error
}

// RenameIO is an IO that also makes a Temp's renames and exchanges:
// renameat2 of from to to, both in dir, with flags (0 or
// RENAME_EXCHANGE). Tests make them fail.
type RenameIO interface {
	IO
	Renameat2(dir *os.File, from, to string, flags uint) error
}

// Real is the IO of the filesystem.
var Real IO = realIO{}

type realIO struct{}

func (realIO) Write(f *os.File, b []byte) (int, error) { return f.Write(b) }
func (realIO) Sync(f *os.File) error                   { return syncFile(f) }

// OpenDir opens the directory dir for the *At functions, refusing a
// symbolic link: a write through it could land outside the tree the
// caller meant. When create is set, a missing dir is created 0700 (its
// parents too).
func OpenDir(dir string, create bool) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
		fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) && isSymlink(dir) {
			return nil, fmt.Errorf("%s is a symbolic link; refusing to write through it", dir)
		}
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

func isSymlink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// WriteFile replaces path with data atomically and durably, with mode perm.
// The directory is created with mode 0700 when missing. A symbolic link as
// path's directory is refused; one at path itself is replaced, not followed.
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
	defer t.Discard()
	if err := unix.Linkat(t.dirfd(), t.tmp, t.dirfd(), t.target, 0); err != nil {
		return fmt.Errorf("creating %s: %w", path, &os.LinkError{Op: "link", Old: t.Name(), New: path, Err: err})
	}
	return t.syncDir()
}

// Temp is new content for a path, durable in a temp file beside it and not
// yet in place. Install or InstallIf puts it in place; Discard removes what
// is left under the temp name and releases the directory.
type Temp struct {
	// dir is the target's directory, open; every name below is in it.
	dir *os.File
	// ownDir tells whether the Temp opened dir, and so closes it.
	ownDir bool
	// dirPath names dir in messages and in Name.
	dirPath     string
	tmp, target string
	// renamed is set once a plain rename moved the temp file into place,
	// leaving nothing under its name.
	renamed bool
	// kept is set once an exchange put the new content in place and kept it.
	kept bool
	io   IO
	// unsynced is the temp file, still open, while its content awaits Sync.
	unsynced *os.File
	// empty is the temp file from CreateTempAt, open, until FillUnsynced.
	empty *os.File
	// deferDirSync is set by PlaceIf: the caller fsyncs the directory.
	deferDirSync bool
}

// WriteTemp writes data to a temp file in path's directory with mode perm
// and fsyncs it, creating the directory 0700 when it is missing. A symbolic
// link as path's directory is refused.
func WriteTemp(path string, data []byte, perm os.FileMode) (*Temp, error) {
	dir, err := OpenDir(filepath.Dir(path), true)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	t, err := WriteTempAt(dir, filepath.Base(path), data, perm, Real)
	if err != nil {
		_ = dir.Close()
		return nil, err
	}
	t.ownDir = true
	return t, nil
}

// TempPrefix starts the name of every temp file: ".tmp-NAME-PID-RANDOM".
// The dot keeps directory scans that skip dot files from seeing them; the
// PID tells a cleanup whether the writer is still alive.
const TempPrefix = ".tmp-"

// WriteTempAt is WriteTemp for the file name in the open directory dir,
// which the caller keeps open until the Temp is installed or discarded.
// Its writes and fsync go through io.
func WriteTempAt(dir *os.File, name string, data []byte, perm os.FileMode, io IO) (*Temp, error) {
	return writeTempAt(dir, name, data, perm, io, true)
}

// WriteTempAtUnsynced is WriteTempAt without the fsync of the content,
// which Sync makes later: a group commit fsyncs the content of several
// temp files and its journal at once, rather than one after the other.
func WriteTempAtUnsynced(dir *os.File, name string, data []byte, perm os.FileMode, io IO) (*Temp, error) {
	return writeTempAt(dir, name, data, perm, io, false)
}

func writeTempAt(dir *os.File, name string, data []byte, perm os.FileMode, io IO, sync bool) (*Temp, error) {
	t, f, err := createTemp(dir, name, io)
	if err != nil {
		return nil, err
	}
	if err := t.fill(f, data, perm, sync); err != nil {
		return nil, err
	}
	return t, nil
}

// CreateTempAt creates an empty temp file for the file name in the open
// directory dir, which the caller keeps open, for FillUnsynced to write
// later: creating a file (allocating its inode) is the costly part of a
// small write on some filesystems, and this way it can be done before a
// lock that the write needs. Discard removes it when it is not used.
func CreateTempAt(dir *os.File, name string, io IO) (*Temp, error) {
	t, f, err := createTemp(dir, name, io)
	if err != nil {
		return nil, err
	}
	t.empty = f
	return t, nil
}

// FillUnsynced writes data, with mode perm, to a temp file from
// CreateTempAt, as WriteTempAtUnsynced writes a new one; Sync makes it
// durable. On an error the Temp is discarded.
func (t *Temp) FillUnsynced(data []byte, perm os.FileMode) error {
	f := t.empty
	if f == nil {
		return fmt.Errorf("writing %s: the temp file is not an empty one from CreateTempAt", filepath.Join(t.dirPath, t.target))
	}
	t.empty = nil
	return t.fill(f, data, perm, false)
}

// fill writes data to f, the Temp's file, and closes it, or, unsynced,
// keeps it open for Sync.
func (t *Temp) fill(f *os.File, data []byte, perm os.FileMode, sync bool) error {
	path := filepath.Join(t.dirPath, t.target)
	if err := fill(f, data, perm, t.io, sync); err != nil {
		_ = f.Close()
		t.Discard()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !sync {
		t.unsynced = f
		return nil
	}
	if err := f.Close(); err != nil {
		t.Discard()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// createTemp creates a new, empty temp file for name in dir.
func createTemp(dir *os.File, name string, io IO) (*Temp, *os.File, error) {
	path := filepath.Join(dir.Name(), name)
	var f *os.File
	var tmp string
	for range 100 {
		tmp = fmt.Sprintf("%s%s-%d-%s", TempPrefix, name, os.Getpid(), strconv.FormatUint(uint64(rand.Uint32()), 36))
		fd, err := unix.Openat(int(dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("writing %s: %w", path, &os.PathError{Op: "open", Path: filepath.Join(dir.Name(), tmp), Err: err})
		}
		f = os.NewFile(uintptr(fd), filepath.Join(dir.Name(), tmp))
		break
	}
	if f == nil {
		return nil, nil, fmt.Errorf("writing %s: no free temp name", path)
	}
	return &Temp{dir: dir, dirPath: dir.Name(), tmp: tmp, target: name, io: io}, f, nil
}

// fill writes data to f, sets its mode when it is not 0600, and fsyncs it
// when sync is set.
func fill(f *os.File, data []byte, perm os.FileMode, io IO, sync bool) error {
	for len(data) > 0 {
		n, err := io.Write(f, data)
		if err != nil {
			return err
		}
		data = data[n:]
	}
	if perm != 0o600 {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if !sync {
		return nil
	}
	return io.Sync(f)
}

// Sync makes the content of a temp file from WriteTempAtUnsynced durable
// and closes it; for any other Temp it does nothing. A failed fsync is not
// retried (the kernel may have dropped the pages): discard the Temp.
func (t *Temp) Sync() error {
	f := t.unsynced
	if f == nil {
		return nil
	}
	t.unsynced = nil
	err := t.io.Sync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(t.dirPath, t.target), err)
	}
	return nil
}

// PlaceIf is InstallIf without the directory fsync, which the caller makes
// with SyncDir once for several Temps placed in the same directory. The
// content must have been synced (see Sync).
func (t *Temp) PlaceIf(stillWanted func(replaced string) bool) error {
	t.deferDirSync = true
	return t.InstallIf(stillWanted)
}

// Dir is the path of the directory the Temp's names are in.
func (t *Temp) Dir() string { return t.dirPath }

// SyncDir fsyncs the Temp's directory, making its renames durable.
func (t *Temp) SyncDir() error { return t.syncDir() }

// installed ends an installation: the directory is fsynced unless the
// caller does it (PlaceIf).
func (t *Temp) installed() error {
	if t.deferDirSync {
		return nil
	}
	return t.syncDir()
}

func (t *Temp) dirfd() int { return int(t.dir.Fd()) }

func (t *Temp) syncDir() error {
	if err := t.io.Sync(t.dir); err != nil {
		return fmt.Errorf("syncing %s: %w", t.dirPath, err)
	}
	return nil
}

// Name is the temp file's path. After InstallIf it may hold the file that
// was replaced, or the new content given back; either way no reader of the
// target can reach it.
func (t *Temp) Name() string { return filepath.Join(t.dirPath, t.tmp) }

// Install renames the temp file over its path and fsyncs the directory.
func (t *Temp) Install() error {
	rename := renameFile
	if r, ok := t.io.(RenameIO); ok {
		rename = func(dir *os.File, from, to string) error { return r.Renameat2(dir, from, to, 0) }
	}
	if err := rename(t.dir, t.tmp, t.target); err != nil {
		return fmt.Errorf("replacing %s: %w", filepath.Join(t.dirPath, t.target), err)
	}
	t.renamed = true
	return t.installed()
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
	return t.exchangeIfWanted(stillWanted)
}

// Left tells whether a file may remain under the temp name: the temp file
// itself, or the file an exchange put there.
func (t *Temp) Left() bool { return !t.renamed }

// Placed tells whether the new content reached the target path: Install
// renamed it there, or InstallIf's exchange was kept. It may be so even
// when they return an error (a failed directory fsync).
func (t *Temp) Placed() bool { return t.renamed && t.target != "" || t.kept }

// Undo takes a placement back after a later step failed, so that a write
// reported as failed is not visible: a kept exchange is exchanged again
// (the replaced file returns to the target path and the new content to the
// temp name), and a file renamed into place where there was none is
// removed. The directory is fsynced.
func (t *Temp) Undo() error {
	switch {
	case t.kept:
		if err := t.exchange(); err != nil {
			return err
		}
		t.kept = false
	case t.renamed:
		if err := unix.Unlinkat(t.dirfd(), t.target, 0); err != nil {
			return &os.PathError{Op: "remove", Path: filepath.Join(t.dirPath, t.target), Err: err}
		}
	default:
		return nil
	}
	return t.syncDir()
}

// Release closes the directory the Temp opened, leaving the temp name as
// it is (see Left).
func (t *Temp) Release() {
	if t.ownDir && t.dir != nil {
		_ = t.dir.Close()
		t.dir = nil
	}
}

// Discard removes the file under the temp name, if any, and releases the
// directory.
func (t *Temp) Discard() {
	for _, f := range []**os.File{&t.unsynced, &t.empty} {
		if *f != nil {
			_ = (*f).Close()
			*f = nil
		}
	}
	if t.dir == nil {
		return
	}
	if t.Left() {
		_ = unix.Unlinkat(t.dirfd(), t.tmp, 0)
	}
	t.Release()
}

// openNoFollow opens name in dir for reading, without following a symbolic
// link or blocking on a FIFO.
func openNoFollow(dir *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir.Name(), name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), nil
}

func (t *Temp) exchange() error {
	exchange := func() error { return unix.Renameat2(t.dirfd(), t.tmp, t.dirfd(), t.target, unix.RENAME_EXCHANGE) }
	if r, ok := t.io.(RenameIO); ok {
		exchange = func() error { return r.Renameat2(t.dir, t.tmp, t.target, unix.RENAME_EXCHANGE) }
	}
	if err := exchange(); err != nil {
		return &os.LinkError{Op: "renameat2 exchange", Old: t.Name(), New: filepath.Join(t.dirPath, t.target), Err: err}
	}
	return nil
}

func (t *Temp) exchangeIfWanted(stillWanted func(replaced string) bool) error {
	// Files are told apart by inode, so each one compared is held open:
	// an unlinked inode that is still open cannot be reused by a new save.
	placed, err := openNoFollow(t.dir, t.tmp)
	if err != nil {
		return err
	}
	held := []*os.File{placed}
	defer func() {
		for _, f := range held {
			_ = f.Close()
		}
	}()
	if err := t.exchange(); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // the file was removed meanwhile
		}
		return err
	}
	if stillWanted(t.Name()) {
		t.kept = true
		return t.installed()
	}
	// Someone saved a newer version just before the exchange: give it back.
	// Another save may land at path meanwhile, replacing the file just put
	// there; the exchange would then carry that newest save to tmp, so it
	// is put back in turn, until what comes out is the file put in place
	// before, now superseded.
	for range maxGiveBacks {
		next, err := openNoFollow(t.dir, t.tmp)
		if err != nil {
			return err
		}
		held = append(held, next)
		if err := t.exchange(); err != nil {
			return err
		}
		var came unix.Stat_t
		if err := unix.Fstatat(t.dirfd(), t.tmp, &came, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "lstat", Path: t.Name(), Err: err}
		}
		was, err := placed.Stat()
		if err != nil {
			return err
		}
		if st, ok := was.Sys().(*syscall.Stat_t); ok && st.Ino == came.Ino && st.Dev == came.Dev {
			return t.installed()
		}
		placed = next
	}
	// The file keeps being saved; keep the one in hand beside it rather than lose it.
	aside := fmt.Sprintf("%s.unsaved-%d", t.target, time.Now().UnixNano())
	if err := renameFile(t.dir, t.tmp, aside); err != nil {
		return err
	}
	t.renamed = true
	path := filepath.Join(t.dirPath, t.target)
	return fmt.Errorf("%s was saved %d times during one write; the version in hand is kept as %s", path, maxGiveBacks, filepath.Join(t.dirPath, aside))
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

// RemoveDurable removes path, when it exists, and fsyncs its directory. A
// symbolic link as path's directory is refused.
func RemoveDurable(path string) error {
	dir, err := OpenDir(filepath.Dir(path), false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }()
	if err := unix.Unlinkat(int(dir.Fd()), filepath.Base(path), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir.Name(), err)
	}
	return nil
}

// SyncDir fsyncs the directory dir, making the renames, links and removals
// of entries in it durable.
func SyncDir(dir string) error {
	d, err := OpenDir(dir, false)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

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
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// A store holds commands that `tether run` executes (a Worker's command),
// so it is guarded as ssh guards its keys: its directories are private to
// their owner, and no path inside it goes through a symbolic link. Every
// file is opened relative to the store directory, one component at a time
// with O_NOFOLLOW (writes) or with openat2's RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS (reads, one call), so that a symlinked kind or
// namespace directory, or a symlinked journal, can never lead a write or
// a read outside the store.

// rel returns path relative to the store directory.
func (s *Store) rel(path string) (string, error) {
	rel, err := filepath.Rel(s.dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the store %s", path, s.dir)
	}
	return rel, nil
}

// openBeneath opens path, inside the store, with flags, refusing with an
// *EntryError any symbolic link on the way or at the end.
func (s *Store) openBeneath(path string, flags int, mode uint32) (*os.File, error) {
	rel, err := s.rel(path)
	if err != nil {
		return nil, err
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Mode: uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(int(s.root.Fd()), rel, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), path), nil
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.ENOSYS):
			return s.openWalking(path, rel, flags, mode)
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
			return nil, symlinkError(s.firstSymlink(rel))
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
}

// openWalking is openBeneath for kernels without openat2 (before 5.6).
func (s *Store) openWalking(path, rel string, flags int, mode uint32) (*os.File, error) {
	dir, err := s.openStoreDir(filepath.Dir(rel), false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dir.Close() }()
	fd, err := unix.Openat(int(dir.Fd()), filepath.Base(rel), flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, mode)
	if errors.Is(err, unix.ELOOP) {
		return nil, symlinkError(path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// firstSymlink returns the path of the first symbolic link on rel, or rel's path.
func (s *Store) firstSymlink(rel string) string {
	p := s.dir
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, c)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return filepath.Join(s.dir, rel)
}

// openStoreDir opens the directory rel inside the store one component at a
// time, never following a symbolic link, and checks each directory as
// checkDir does. With create, missing directories are created 0700.
func (s *Store) openStoreDir(rel string, create bool) (*os.File, error) {
	fd, err := unix.Dup(int(s.root.Fd()))
	if err != nil {
		return nil, err
	}
	cur := os.NewFile(uintptr(fd), s.dir)
	if rel == "." || rel == "" {
		return cur, nil
	}
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		path := filepath.Join(cur.Name(), c)
		fd, err := unix.Openat(int(cur.Fd()), c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			merr := unix.Mkdirat(int(cur.Fd()), c, 0o700)
			if merr != nil && !errors.Is(merr, unix.EEXIST) {
				_ = cur.Close()
				return nil, &os.PathError{Op: "mkdir", Path: path, Err: merr}
			}
			// The new directory's name is durable only once its parent is
			// fsynced; without that a power loss could drop the directory
			// and every file written in it.
			if merr == nil {
				if err := s.io.Sync(cur); err != nil {
					_ = cur.Close()
					return nil, fmt.Errorf("syncing %s: %w", cur.Name(), err)
				}
			}
			fd, err = unix.Openat(int(cur.Fd()), c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		_ = cur.Close()
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) && isSymlink(path) {
				return nil, symlinkError(path)
			}
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		cur = os.NewFile(uintptr(fd), path)
		fi, err := cur.Stat()
		if err == nil {
			err = checkDir(path, fi)
		}
		if err != nil {
			_ = cur.Close()
			return nil, err
		}
	}
	return cur, nil
}

func isSymlink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// checkDir refuses, with an *EntryError, a store directory that group or
// others may write, or that another user owns: either could put a Worker,
// a command tether runs, into the store.
func checkDir(path string, fi os.FileInfo) error {
	if !fi.IsDir() {
		return &EntryError{Path: path, Reason: "is " + kindOf(fi.Mode()) + " where the store keeps a directory", Fix: "remove it: rm " + path}
	}
	if uid, ok := ownerOf(fi); ok && int(uid) != os.Geteuid() {
		return &EntryError{Path: path, Reason: fmt.Sprintf("is owned by uid %d, not by uid %d who runs tether; refusing to serve a store another user controls", uid, os.Geteuid()),
			Fix: fmt.Sprintf("chown -R %d %s, after checking its content", os.Geteuid(), path)}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &EntryError{Path: path, Reason: fmt.Sprintf("has mode %04o, which lets group or others write it; refusing to serve it, as a Worker in the store is a command tether runs", perm),
			Fix: "chmod 700 " + path}
	}
	return nil
}

// UnsafeStoreError is a store Open refuses to serve: a directory of it is
// writable by group or others, or owned by another user.
type UnsafeStoreError struct {
	// Problem names the directory, the reason and the fix.
	Problem Problem
}

func (e *UnsafeStoreError) Error() string {
	return fmt.Sprintf("%s %s (run: %s)", e.Problem.Path, e.Problem.Reason, e.Problem.Fix)
}

// dirProblems checks the store directory and every kind and namespace
// directory in it. Unsafe directories are returned as refusals; symbolic
// links where a directory belongs, and other entries that are not a
// directory there (a FIFO, a regular file), as quarantined: only what is
// beneath them is skipped.
func (s *Store) dirProblems() (refusals, links, notDirs []Problem) {
	check := func(path string) bool {
		fi, err := os.Lstat(path)
		if err != nil {
			return false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			links = append(links, problemOf(symlinkError(path)))
			return false
		}
		var ee *EntryError
		if err := checkDir(path, fi); errors.As(err, &ee) {
			if !fi.IsDir() && path != s.dir {
				notDirs = append(notDirs, problemOf(ee))
			} else {
				refusals = append(refusals, problemOf(ee))
			}
			return false
		}
		return true
	}
	if !check(s.dir) {
		return refusals, links, notDirs
	}
	for plural, r := range s.byPlural {
		kindDir := filepath.Join(s.dir, plural)
		if !check(kindDir) || !r.namespaced {
			continue
		}
		entries, _ := readDir(kindDir)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				check(filepath.Join(kindDir, e.Name()))
			}
		}
	}
	return refusals, links, notDirs
}

// readDir is os.ReadDir that neither follows a symbolic link nor blocks
// on a FIFO at path: either fails at once, with ELOOP or ENOTDIR.
func readDir(path string) ([]fs.DirEntry, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer func() { _ = f.Close() }()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// notDirProblem describes the entry at or above path, below the store
// directory, that is not a directory where the store keeps one, for a
// read of path that failed with ENOTDIR or ELOOP.
func (s *Store) notDirProblem(path string) (Problem, bool) {
	for p := path; strings.HasPrefix(p, s.dir+string(filepath.Separator)); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		switch {
		case err != nil, fi.IsDir():
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			return problemOf(symlinkError(p)), true
		default:
			var ee *EntryError
			if errors.As(checkDir(p, fi), &ee) {
				return problemOf(ee), true
			}
		}
	}
	return Problem{}, false
}

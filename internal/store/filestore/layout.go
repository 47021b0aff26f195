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
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/go-logr/logr"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// A store holds commands that `tether run` executes (a Worker's command),
// so it is guarded as ssh guards its keys: its directories are private to
// their owner, and no path inside it goes through a symbolic link. Every
// file is opened relative to the store directory, one component at a time
// with O_NOFOLLOW (writes) or with openat2's RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS (reads, one call), so that a symlinked kind or
// namespace directory, or a symlinked journal, can never lead a write or
// a read outside the store.

// layout is the lowest layer of the store: where each object's file is
// (paths and keys), how every entry is opened (relative to the open store
// directory, through no symbolic link, never blocking on a FIFO), the
// checks an entry must pass, the flock of the lock file, and the report
// of entries it skips (the quarantine). It knows nothing of the journal,
// object files' content or commits.
type layout struct {
	dir      string
	byGVK    map[schema.GroupVersionKind]*resource
	byPlural map[string]*resource
	log      logr.Logger
	// mu orders this process's readers and writers; the flock orders processes.
	mu sync.RWMutex
	// root is the store directory, open: every path is resolved from it.
	root *os.File
	// io makes the store's writes and fsyncs.
	io atomicfs.IO
	// quarantine holds the entries skipped because they cannot be read.
	quarantine *quarantine
}

// rel returns path relative to the store directory.
func (s *layout) rel(path string) (string, error) {
	rel, err := filepath.Rel(s.dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the store %s", path, s.dir)
	}
	return rel, nil
}

// openBeneath opens path, inside the store, with flags, refusing with an
// *EntryError any symbolic link on the way or at the end.
func (s *layout) openBeneath(path string, flags int, mode uint32) (*os.File, error) {
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
func (s *layout) openWalking(path, rel string, flags int, mode uint32) (*os.File, error) {
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
func (s *layout) firstSymlink(rel string) string {
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
func (s *layout) openStoreDir(rel string, create bool) (*os.File, error) {
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
func (s *layout) dirProblems() (refusals, links, notDirs []Problem) {
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
func (s *layout) notDirProblem(path string) (Problem, bool) {
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

// maxFileBytes bounds what the store reads of one object file. An object
// is limited to maxObjectBytes of JSON; its YAML is about as long, and a
// file beyond twice that cannot hold a valid object, so it is refused
// unread rather than loaded into memory.
const maxFileBytes = 2 * maxObjectBytes

// checkNotSymlink refuses a path that is a symbolic link, so that no store
// entry can point outside the store directory.
func checkNotSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return symlinkError(path)
	}
	return nil
}

// kindOf names a file type for a message.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode.IsDir():
		return "a directory"
	case mode.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// ownerOf returns the uid owning the file fi describes.
func ownerOf(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// checkRegular refuses, with an *EntryError, an entry that is not a regular
// file owned by this process's user and small enough to hold an object.
func checkRegular(path string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &EntryError{Path: path, Reason: "is " + kindOf(fi.Mode()) + ", not a regular file", Fix: "remove it: rm " + path}
	}
	if uid, ok := ownerOf(fi); ok && int(uid) != os.Geteuid() {
		return &EntryError{Path: path, Reason: fmt.Sprintf("is owned by uid %d, not by uid %d who runs tether; another user's file in the store could run commands as you", uid, os.Geteuid()),
			Fix: "check its content, then: chown " + fmt.Sprint(os.Geteuid()) + " " + path + ", or remove it"}
	}
	if fi.Size() > maxFileBytes {
		return &EntryError{Path: path, Reason: fmt.Sprintf("is %d bytes, beyond what an object of at most %d bytes can take", fi.Size(), maxObjectBytes), Fix: "shrink it or remove it"}
	}
	return nil
}

// openRegular opens a store file for reading without following a symbolic
// link and without blocking on a FIFO or a device, and refuses, with an
// *EntryError, what checkRegular refuses. The type is checked on the open
// file, so it cannot change between the check and the read.
func (s *layout) openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := s.openBeneath(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(path, fi)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readRegular reads a store file as openRegular opens it.
func (s *layout) readRegular(path string) ([]byte, error) {
	f, fi, err := s.openRegular(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return readAllSized(f, fi)
}

// readAllSized reads f, whose stat is fi, to its end, at most maxFileBytes.
func readAllSized(f *os.File, fi os.FileInfo) ([]byte, error) {
	buf := make([]byte, 0, fi.Size()+512)
	data, err := readAllLimited(f, buf, maxFileBytes+1)
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, &EntryError{Path: f.Name(), Reason: fmt.Sprintf("grew beyond %d bytes while read", maxFileBytes), Fix: "shrink it or remove it"}
	}
	return data, nil
}

func readAllLimited(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	lr := io.LimitReader(r, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// isDNS1123Subdomain answers as validation.IsDNS1123Subdomain does, without
// its regular expression: a list or a scan asks it of every file name, and
// the expression cost more than reading the object from its stamp.
// TestDNSNamesAgreeWithValidation and FuzzDNSNames hold the two together.
func isDNS1123Subdomain(s string) bool {
	if len(s) == 0 || len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	for start := 0; start <= len(s); {
		end := start
		for end < len(s) && s[end] != '.' {
			end++
		}
		if !isDNS1123LabelChars(s[start:end]) {
			return false
		}
		start = end + 1
	}
	return true
}

// isDNS1123Label answers as validation.IsDNS1123Label does.
func isDNS1123Label(s string) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && isDNS1123LabelChars(s)
}

// isDNS1123LabelChars tells whether s is one or more of [a-z0-9-],
// beginning and ending with an alphanumeric.
func isDNS1123LabelChars(s string) bool {
	if len(s) == 0 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// maxObjectBytes bounds the JSON size of one object, as etcd's default
// request limit (1.5 MiB) bounds it in a cluster.
const maxObjectBytes = 3 << 19

const (
	lockName    = ".lock"
	journalName = "journal"
	fileSuffix  = ".yaml"
)

// resource is what the store needs of one kind it serves, taken from the
// kinds registry.
type resource struct {
	gvk        schema.GroupVersionKind
	plural     string
	namespaced bool
	status     bool
	crd        bool
}

func (r *resource) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.gvk.Group, Resource: r.plural}
}

// readOnlyErr tells whether err says the store cannot be written at the
// moment: a read-only filesystem, a full disk, no write permission.
func readOnlyErr(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, fs.ErrPermission)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// syncParent fsyncs the directory holding dir. One the process cannot
// open (a parent it may not read) is left as it is: only the sync of an
// open directory can fail to be durable.
func (s *layout) syncParent(dir string) error {
	d, err := os.Open(filepath.Dir(dir))
	if err != nil {
		return nil
	}
	defer func() { _ = d.Close() }()
	return s.io.Sync(d)
}

// unlink removes the file at path inside the store, through no symbolic link.
func (s *layout) unlink(path string) error {
	rel, err := s.rel(filepath.Dir(path))
	if err != nil {
		return err
	}
	dir, err := s.openStoreDir(rel, false)
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }()
	if err := unix.Unlinkat(int(dir.Fd()), filepath.Base(path), 0); err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// openParent opens the directory of path inside the store (see openStoreDir).
func (s *layout) openParent(path string, create bool) (*os.File, error) {
	rel, err := s.rel(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return s.openStoreDir(rel, create)
}

// removeDurable removes the file at path inside the store, when it exists,
// and fsyncs its directory.
func (s *layout) removeDurable(path string) error {
	dir, err := s.openParent(path, false)
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
	return s.io.Sync(dir)
}

// writeTemp writes the content of the object file at path to a temp file
// beside it, durably, creating its directory when missing.
func (s *layout) writeTemp(path string, data []byte) (*atomicfs.Temp, func(), error) {
	dir, err := s.openParent(path, true)
	if err != nil {
		return nil, nil, err
	}
	tmp, err := atomicfs.WriteTempAt(dir, filepath.Base(path), data, 0o600, s.io)
	if err != nil {
		_ = dir.Close()
		return nil, nil, err
	}
	return tmp, func() { _ = dir.Close() }, nil
}

func (s *layout) resourceFor(gvk schema.GroupVersionKind) (*resource, error) {
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	r, ok := s.byGVK[gvk]
	if !ok {
		return nil, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return r, nil
}

// withReadLock runs fn holding the shared lock, so that what it reads is
// one consistent resourceVersion of the store.
func (s *layout) withReadLock(fn func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	// Read-only, so that reads work on a read-only filesystem too.
	lock, err := s.openBeneath(filepath.Join(s.dir, lockName), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Close() }()
	if err := atomicfs.Lock(lock, atomicfs.Shared); err != nil {
		return err
	}
	defer func() { _ = atomicfs.Unlock(lock) }()
	return fn()
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func (s *layout) objectDir(r *resource, namespace string) string {
	if !r.namespaced {
		return filepath.Join(s.dir, r.plural)
	}
	return filepath.Join(s.dir, r.plural, namespace)
}

func (s *layout) objectPath(r *resource, namespace, name string) string {
	return filepath.Join(s.objectDir(r, namespace), name+fileSuffix)
}

// keyOfPath maps a store file path to its resource, namespace and name.
func (s *layout) keyOfPath(path string) (*resource, string, string, bool) {
	// A path below the store's that names an object is already clean, as
	// no component of a key can be empty, "." or "..": filepath.Rel, a
	// tenth of a large list's time, would return its rest unchanged.
	if len(path) > len(s.dir) && path[len(s.dir)] == filepath.Separator && strings.HasPrefix(path, s.dir) {
		if r, ns, name, ok := s.keyOfRel(path[len(s.dir)+1:]); ok {
			return r, ns, name, true
		}
	}
	rel, err := filepath.Rel(s.dir, path)
	if err != nil {
		return nil, "", "", false
	}
	return s.keyOfRel(rel)
}

// keyOfRel is keyOfPath for a path relative to the store's directory.
func (s *layout) keyOfRel(rel string) (*resource, string, string, bool) {
	if !strings.HasSuffix(rel, fileSuffix) {
		return nil, "", "", false
	}
	// Cut, not Split: a large list names every file it reads so, and a
	// slice of parts each time would be garbage among what it keeps.
	const sep = string(filepath.Separator)
	plural, rest, _ := strings.Cut(rel, sep)
	namespace, _, _ := strings.Cut(rest, sep)
	name := strings.TrimSuffix(rel[strings.LastIndex(rel, sep)+1:], fileSuffix)
	if strings.HasPrefix(name, ".") || !isDNS1123Subdomain(name) {
		return nil, "", "", false
	}
	r, ok := s.byPlural[plural]
	parts := 1 + strings.Count(rel, sep)
	switch {
	case !ok:
		return nil, "", "", false
	case r.namespaced && parts == 3 && isDNS1123Label(namespace):
		return r, namespace, name, true
	case !r.namespaced && parts == 2:
		return r, "", name, true
	}
	return nil, "", "", false
}

// readStoreDir lists the store directory at path, opened one component
// at a time through no symbolic link, so that not even the names behind a
// symlinked directory are read. A missing directory lists as empty; a
// symlink, or an entry that is not a safe directory, is reported and
// lists as empty too, so that one bad entry never stops the rest.
func (s *layout) readStoreDir(path string) ([]os.DirEntry, error) {
	rel, err := s.rel(path)
	if err != nil {
		return nil, err
	}
	dir, err := s.openStoreDir(rel, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var ee *EntryError
	if errors.As(err, &ee) {
		s.quarantine.report(problemOf(ee), nil)
		return nil, nil
	}
	if err != nil {
		// A FIFO, file or link where the directory belongs holds no
		// object: it is reported, and the other objects are listed.
		if p, ok := s.notDirProblem(path); ok {
			s.quarantine.report(p, nil)
			return nil, nil
		}
		return nil, err
	}
	defer func() { _ = dir.Close() }()
	return dir.ReadDir(-1)
}

// sameFileInfo tells whether two stats describe the same, unmodified file.
func sameFileInfo(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// isFile tells whether path is still the file described by fi.
func (s *layout) isFile(path string, fi os.FileInfo) bool {
	f, err := s.openBeneath(path, unix.O_PATH, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	cur, err := f.Stat()
	return err == nil && sameFileInfo(cur, fi)
}

func (s *layout) isObjectDir(path string) bool {
	rel, err := filepath.Rel(s.dir, path)
	if err != nil {
		return false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	r, ok := s.byPlural[parts[0]]
	return ok && (len(parts) == 1 || r.namespaced && len(parts) == 2)
}

// reportUndecodable reports an object that does not decode into its Go type.
func (s *layout) reportUndecodable(r *resource, u *unstructured.Unstructured, err error) {
	path := s.objectPath(r, u.GetNamespace(), u.GetName())
	s.quarantine.report(Problem{Path: path, Reason: "does not decode into a " + r.gvk.Kind + ": " + err.Error(),
		Fix: "edit the file to a valid value (tether edit), or remove it"},
		&corev1.ObjectReference{APIVersion: r.gvk.GroupVersion().String(), Kind: r.gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID()})
}

// contextDone turns a cancelled context into the error a client expects.
func contextDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return apierrors.NewTimeoutError(err.Error(), 0)
	}
	return nil
}

func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

func fileInodeAt(path string) uint64 {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return inodeOf(fi)
}

func fileInode(f *os.File) uint64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return inodeOf(fi)
}

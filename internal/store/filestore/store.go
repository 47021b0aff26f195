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

// Package filestore is tether's embedded backend: a directory of YAML files,
// one per object, that behaves like a Kubernetes API server for the custom
// resources of agents.tether.dev and for core Events. It implements
// controller-runtime's client.WithWatch, so the same reconcilers run on it
// and on a cluster.
//
// Layout of a store directory (see docs/store.md):
//
//	.lock                          flock: exclusive for writers, shared for consistent lists
//	journal                        append-only log of committed mutations (resourceVersion source, watch resume)
//	<plural>/<namespace>/<name>.yaml   the objects, tool-owned, with a checksum header
package filestore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/kinds"
	"github.com/tether-dev/tether/internal/store/crdschema"
)

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

// Options configure a Store.
type Options struct {
	// Scheme maps Go types to kinds. It must include every kind of CRDs and core/v1.
	Scheme *runtime.Scheme
	// CRDs are the custom resources served, validated and defaulted by their
	// schemas. Open does not compile the schemas: the first write or hand
	// edit that needs them does, and fails with an internal error if they do
	// not compile.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// Log receives reports about hand edits and repairs.
	Log logr.Logger
	// JournalLimit is the journal size in bytes beyond which it is compacted
	// to its newest JournalKeep entries. Defaults: 64 MiB and 10,000.
	JournalLimit int64
	// JournalKeep is how many entries a compaction keeps.
	JournalKeep int
	// Observer, when set, is told of the store's writes and hand edits;
	// `tether run` passes its metrics. Nil observes nothing.
	Observer Observer
	// MustExist makes Open fail with an error matching ErrNoStore when dir
	// does not exist, rather than create it: read verbs never create a store.
	MustExist bool
	// IO makes the store's writes and fsyncs (object files, journal,
	// directories); nil is the filesystem's. Tests inject failures with it.
	// An IO that is also an atomicfs.RenameIO makes the renames of object
	// files, and one with a Truncate(f *os.File, size int64) error method
	// the cuts of the journal.
	IO atomicfs.IO
}

// Store is a file-backed object store with API-server semantics.
type Store struct {
	dir    string
	scheme *runtime.Scheme
	// validator compiles the CRDs' schemas on first use: a process that
	// only reads never needs them.
	validator func() (*crdschema.Validator, error)
	byGVK     map[schema.GroupVersionKind]*resource
	byPlural  map[string]*resource
	mapper    meta.RESTMapper
	journal   *journal
	now       func() time.Time
	log       logr.Logger
	limit     int64
	keep      int
	// mu orders this process's readers and writers; the flock orders processes.
	mu sync.RWMutex
	// removals are the background removals of replaced files, which Close awaits.
	removals sync.WaitGroup
	// watchMu guards closed and the start of a watch; watches are the
	// running watches, which Close stops and awaits before it closes the
	// files they read; life ends when Close begins.
	watchMu sync.Mutex
	closed  bool
	watches sync.WaitGroup
	life    context.Context
	endLife context.CancelFunc
	// lockedAdoptions counts the adoption checks made under the write lock.
	lockedAdoptions atomic.Uint64
	// objectReads counts the object files that large lists and the
	// hand-edit scan read (see stamps.go).
	objectReads atomic.Uint64
	// ownersMu guards owners, the owner index as this process last read
	// it (see owners.go); ownersLoads and ownersRebuilds count its loads
	// from disk and its rebuilds from the whole journal.
	ownersMu       sync.Mutex
	owners         *ownerIndex
	ownersLoads    atomic.Int64
	ownersRebuilds atomic.Int64
	// listDependents makes the collector list instead of using the owner
	// index (benchmarks compare the two).
	listDependents bool
	// orphans are objects deleted for naming only absent owners, whose own
	// dependents are still to be collected (see collectOrphans).
	orphansMu sync.Mutex
	orphans   []*unstructured.Unstructured
	// stampSettle is how long ago a file must have changed to be stamped.
	stampSettle time.Duration
	observer    Observer
	// quarantine holds the entries skipped because they cannot be read.
	quarantine *quarantine
	// root is the store directory, open: every path is resolved from it.
	root *os.File
	// io makes the store's writes and fsyncs.
	io atomicfs.IO
	// lock is the lock file while the write lock is held, nil otherwise;
	// it holds the resourceVersion mark and the void mark (see void.go).
	lock *os.File
	// markFile is the lock file, open read-only, for reading the void mark.
	markFile *os.File
	// writes queues this process's writes for the group commit (see groupcommit.go).
	writes writeQueue
	// group is the group commit running under the write lock, or nil.
	group *stagedGroup
	// applied identifies the journal as this process left it after its
	// last write, every entry applied; while the journal is still so, no
	// other writer has come since and the roll-forward has nothing to do.
	applied journalState
}

// ErrNoStore is returned by Open with Options.MustExist, and by Inspect,
// for a directory that does not exist.
var ErrNoStore = errors.New("there is no store")

// Open opens, creating it 0700 if needed, the store directory dir.
//
// A store whose files cannot be written (a full disk, a read-only
// filesystem) still opens, and reads work; writes fail with the
// filesystem's error.
func Open(dir string, opts Options) (*Store, error) {
	s, err := newStore(dir, &opts)
	if err != nil {
		return nil, err
	}
	if opts.MustExist {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s (create one with tether init, or name it with --store)", ErrNoStore, dir)
		}
	}
	newDir := !exists(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating store %s: %w", dir, err)
	}
	if newDir {
		// A new store's name is durable only once its parent is fsynced.
		if err := s.syncParent(dir); err != nil {
			return nil, fmt.Errorf("creating store %s: %w", dir, err)
		}
	}
	if err := checkNotSymlink(dir); err != nil {
		return nil, err
	}
	if s.root, err = atomicfs.OpenDir(dir, false); err != nil {
		return nil, err
	}
	refusals, links, notDirs := s.dirProblems()
	if len(refusals) > 0 {
		_ = s.root.Close()
		return nil, &UnsafeStoreError{Problem: refusals[0]}
	}
	for _, p := range append(links, notDirs...) {
		s.report(p, nil)
	}
	if err := ignoreInGit(dir); err != nil && !readOnlyErr(err) {
		_ = s.root.Close()
		return nil, err
	}
	created := !exists(filepath.Join(dir, lockName)) || !exists(filepath.Join(dir, journalName))
	lock, err := s.openBeneath(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if readOnlyErr(err) {
		lock, err = s.openBeneath(filepath.Join(dir, lockName), os.O_RDONLY, 0)
	}
	if err != nil {
		_ = s.root.Close()
		return nil, err
	}
	_ = lock.Close()
	if s.markFile, err = s.openBeneath(filepath.Join(dir, lockName), os.O_RDONLY, 0); err != nil {
		_ = s.root.Close()
		return nil, err
	}
	if s.journal, err = s.openJournal(); err != nil {
		_ = s.markFile.Close()
		_ = s.root.Close()
		return nil, err
	}
	if created {
		// The lock file and the journal a write appends to are in the
		// store only once the directory holding their names is fsynced:
		// an fsynced append to a journal whose name a power loss drops
		// is lost with it.
		if err := s.io.Sync(s.root); err != nil && !readOnlyErr(err) {
			_ = s.journal.close()
			_ = s.markFile.Close()
			_ = s.root.Close()
			return nil, fmt.Errorf("syncing store %s: %w", dir, err)
		}
	}
	s.journal.voidFrom, s.journal.markVoid = s.voidFrom, s.writeVoid
	s.journal.onCorrupt = func(c *corruptLine) { s.report(c.problem(s.journal.path), storeReference()) }
	if err := s.withWriteLock(func() error { s.cleanTemps(); return nil }); err != nil {
		if !readOnlyErr(err) {
			_ = s.journal.close()
			return nil, err
		}
		// Repairs wait for a writer that can write; readers do without.
		s.log.Info("the store cannot be written; serving reads", "store", dir, "error", err.Error())
	}
	return s, nil
}

// readOnlyErr tells whether err says the store cannot be written at the
// moment: a read-only filesystem, a full disk, no write permission.
func readOnlyErr(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, fs.ErrPermission)
}

// newStore builds a Store on dir from opts, filling in their defaults,
// without touching the filesystem.
func newStore(dir string, opts *Options) (*Store, error) {
	if opts.Scheme == nil {
		return nil, errors.New("filestore: Options.Scheme is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.JournalLimit <= 0 {
		opts.JournalLimit = 64 << 20
	}
	if opts.JournalKeep <= 0 {
		opts.JournalKeep = 10000
	}
	crds := opts.CRDs
	s := &Store{
		dir:         dir,
		scheme:      opts.Scheme,
		validator:   sync.OnceValues(func() (*crdschema.Validator, error) { return crdschema.New(crds) }),
		byGVK:       map[schema.GroupVersionKind]*resource{},
		byPlural:    map[string]*resource{},
		now:         opts.Now,
		stampSettle: defaultStampSettle,
		log:         opts.Log,
		limit:       opts.JournalLimit,
		keep:        opts.JournalKeep,
		quarantine:  newQuarantine(),
		io:          opts.IO,
		observer:    opts.Observer,
	}
	if s.io == nil {
		s.io = atomicfs.Real
	}
	s.life, s.endLife = context.WithCancel(context.Background())
	reg := kinds.FromCRDs(opts.CRDs)
	for _, k := range reg.All() {
		r := &resource{gvk: k.GVK, plural: k.Plural, namespaced: k.Namespaced, status: k.Status, crd: k.CRD != nil}
		s.byGVK[r.gvk] = r
		s.byPlural[r.plural] = r
	}
	s.mapper = reg.RESTMapper()
	return s, nil
}

// gitignoreName is the file that keeps a store inside a git working tree
// (tether init's DIR/.tether) out of git status, commits and checkpoint
// snapshots.
const gitignoreName = ".gitignore"

// ignoreInGit creates dir/.gitignore ignoring everything, unless a file (or
// a symlink) of that name is already there: that one is the user's.
func ignoreInGit(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, gitignoreName)); err == nil {
		return nil
	}
	err := atomicfs.CreateFile(filepath.Join(dir, gitignoreName), []byte("# tether's store: its files are not part of the repository.\n*\n"), 0o600)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("store %s: %w", dir, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// syncParent fsyncs the directory holding dir. One the process cannot
// open (a parent it may not read) is left as it is: only the sync of an
// open directory can fail to be durable.
func (s *Store) syncParent(dir string) error {
	d, err := os.Open(filepath.Dir(dir))
	if err != nil {
		return nil
	}
	defer func() { _ = d.Close() }()
	return s.io.Sync(d)
}

// Close stops the store's watches and releases its files, after the
// removals of replaced files.
func (s *Store) Close() error {
	s.watchMu.Lock()
	s.closed = true
	s.watchMu.Unlock()
	if s.endLife != nil {
		s.endLife()
	}
	s.watches.Wait()
	s.removals.Wait()
	err := s.journal.close()
	_ = s.markFile.Close()
	_ = s.root.Close()
	return err
}

// removeLater removes the file at path in the background. It is for files
// no reader can reach any longer: temp names holding replaced content. A
// process that exits without Close may leave such a file behind, as a
// crash at that moment always could; nothing reads dot files.
func (s *Store) removeLater(path string) {
	s.removals.Go(func() { _ = s.unlink(path) })
}

// unlink removes the file at path inside the store, through no symbolic link.
func (s *Store) unlink(path string) error {
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
func (s *Store) openParent(path string, create bool) (*os.File, error) {
	rel, err := s.rel(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return s.openStoreDir(rel, create)
}

// removeDurable removes the file at path inside the store, when it exists,
// and fsyncs its directory.
func (s *Store) removeDurable(path string) error {
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
func (s *Store) writeTemp(path string, data []byte) (*atomicfs.Temp, func(), error) {
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

// RESTMapper maps the served kinds to resources.
func (s *Store) RESTMapper() meta.RESTMapper { return s.mapper }

func (s *Store) resourceFor(gvk schema.GroupVersionKind) (*resource, error) {
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	r, ok := s.byGVK[gvk]
	if !ok {
		return nil, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return r, nil
}

// withWriteLock runs fn holding the store's exclusive lock, after repairing
// a torn journal tail and rolling forward a write whose process died
// between the journal append and the object file rename.
func (s *Store) withWriteLock(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lock, err := s.openBeneath(filepath.Join(s.dir, lockName), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Close() }()
	if err := atomicfs.Lock(lock, atomicfs.Exclusive); err != nil {
		return err
	}
	defer func() { _ = atomicfs.Unlock(lock) }()
	s.lock = lock
	defer func() { s.lock = nil }()
	if err := s.journal.refresh(); err != nil {
		return err
	}
	if err := s.cutVoid(); err != nil {
		return err
	}
	if err := s.journal.repairTail(); err != nil {
		return err
	}
	if err := s.rollForward(); err != nil {
		return err
	}
	return fn()
}

// withReadLock runs fn holding the shared lock, so that what it reads is
// one consistent resourceVersion of the store.
func (s *Store) withReadLock(fn func() error) error {
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

// rollForward completes the newest two group commits of the journal (see
// entry.Group and recentDirs): a writer may have died after appending its
// entries and before renaming their files into place, and a power loss may
// have dropped renames not yet fsynced. The journal is fsynced before any
// file is rolled forward, as a live writer would have done.
func (s *Store) rollForward() error {
	if s.applied.matches(s.journal.f) {
		return nil
	}
	entries, err := s.journal.lastGroups(2)
	if err != nil {
		return err
	}
	// Only the newest entry of each object counts.
	seen := map[string]bool{}
	var todo []*entry
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		key := e.Resource + "/" + e.Namespace + "/" + e.Name
		if e.RV == 0 || seen[key] {
			continue
		}
		seen[key] = true
		todo = append(todo, e)
	}
	synced := false
	for _, e := range slices.Backward(todo) {
		r, ok := s.byPlural[e.Resource]
		if !ok {
			continue
		}
		err := s.rollForwardEntry(r, e, func() error {
			if synced {
				return nil
			}
			synced = true
			return s.journal.sync()
		})
		if err != nil {
			return err
		}
	}
	s.rememberApplied()
	return nil
}

// journalState identifies the journal file's state: inode, size and
// modification time.
type journalState struct {
	ino  uint64
	size int64
	mod  time.Time
}

// matches tells whether f is still in state js.
func (js journalState) matches(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && js.ino != 0 && js.ino == fileInode(f) && fi.Size() == js.size && fi.ModTime().Equal(js.mod)
}

// rememberApplied records the journal's state as one with every entry
// applied. The caller holds the write lock.
func (s *Store) rememberApplied() {
	fi, err := s.journal.f.Stat()
	if err != nil {
		s.applied = journalState{}
		return
	}
	s.applied = journalState{ino: fileInode(s.journal.f), size: fi.Size(), mod: fi.ModTime()}
}

// rollForwardEntry puts the object file of e in e's state when its writer
// died before doing so, after calling durable.
func (s *Store) rollForwardEntry(r *resource, e *entry, durable func() error) error {
	path := s.objectPath(r, e.Namespace, e.Name)
	fileRV, ok := s.readHeaderRV(path)
	switch {
	case e.Type == Deleted && ok && fileRV < e.RV:
		if err := durable(); err != nil {
			return err
		}
		s.log.Info("rolling forward an interrupted delete", "file", path, "resourceVersion", e.RV)
		return s.removeDurable(path)
	case e.Type != Deleted && ok && fileRV < e.RV:
		if err := durable(); err != nil {
			return err
		}
		s.log.Info("rolling forward an interrupted write", "file", path, "resourceVersion", e.RV)
		return s.writeObjectFile(path, e.RV, e.Object)
	case e.Type != Deleted && !s.exists(path):
		// Either the writer died before renaming its file into place (its
		// complete temp file is still beside the path), or the write was
		// applied and a person removed the file since: that is a deletion,
		// which a roll-forward must not undo. (A power loss may also have
		// dropped the temp file of a write never acknowledged; recording
		// the deletion takes that write back.)
		if s.pendingTemp(path, e.RV) {
			if err := durable(); err != nil {
				return err
			}
			s.log.Info("rolling forward an interrupted write", "file", path, "resourceVersion", e.RV)
			return s.writeObjectFile(path, e.RV, e.Object)
		}
		last := &unstructured.Unstructured{}
		if err := last.UnmarshalJSON(e.Object); err != nil {
			return err
		}
		s.log.Info("a store file was removed by hand; recording the deletion", "file", path)
		return s.commit(r, Deleted, last)
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func (s *Store) objectDir(r *resource, namespace string) string {
	if !r.namespaced {
		return filepath.Join(s.dir, r.plural)
	}
	return filepath.Join(s.dir, r.plural, namespace)
}

func (s *Store) objectPath(r *resource, namespace, name string) string {
	return filepath.Join(s.objectDir(r, namespace), name+fileSuffix)
}

// headerPrefix and headerChecksum frame the first line of a store-written
// file: "# Managed by tether (resourceVersion N, sha256 HEX). ...".
const (
	headerPrefix   = "# Managed by tether (resourceVersion "
	headerChecksum = ", sha256 "
)

func fileHeader(rv uint64, body []byte) string {
	sum := sha256.Sum256(body)
	return fmt.Sprintf("# Managed by tether (resourceVersion %d, sha256 %s). Edits are picked up; the store rewrites this file.\n", rv, hex.EncodeToString(sum[:]))
}

func (s *Store) writeObjectFile(path string, rv uint64, objJSON []byte) error {
	return s.writeObjectFileIf(path, rv, objJSON, nil)
}

func (s *Store) writeObjectFileIf(path string, rv uint64, objJSON []byte, stillWanted func(replaced string) bool) error {
	body, err := yaml.JSONToYAML(objJSON)
	if err != nil {
		return err
	}
	tmp, done, err := s.writeTemp(path, append([]byte(fileHeader(rv, body)), body...))
	if err != nil {
		return err
	}
	defer done()
	defer tmp.Discard()
	return tmp.InstallIf(stillWanted)
}

// readHeaderRV returns the resourceVersion in a file's header when the
// header's checksum matches the content, that is when the store wrote it.
func (s *Store) readHeaderRV(path string) (uint64, bool) {
	data, err := s.readRegular(path)
	if err != nil {
		return 0, false
	}
	rv, _, ok := parseHeader(data)
	return rv, ok
}

// parseHeader splits a store file into its resourceVersion and body. ok
// is true when the header is the store's and its checksum matches the
// body; otherwise body is data after a header of the store's form, or all
// of data. It reads the line by hand: it runs for every file a list reads,
// and a regular expression cost more than the checksum.
func parseHeader(data []byte) (rv uint64, body []byte, ok bool) {
	line, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || !bytes.HasPrefix(line, []byte(headerPrefix)) {
		return 0, data, false
	}
	digits, line, found := bytes.Cut(line[len(headerPrefix):], []byte(headerChecksum))
	if !found || len(digits) == 0 || bytes.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) ||
		len(line) < sha256.Size*2+2 || string(line[sha256.Size*2:sha256.Size*2+2]) != ")." {
		return 0, data, false
	}
	sum := line[:sha256.Size*2]
	if bytes.ContainsFunc(sum, func(r rune) bool { return (r < '0' || r > '9') && (r < 'a' || r > 'f') }) {
		return 0, data, false
	}
	want := sha256.Sum256(rest)
	if hex.EncodeToString(want[:]) != string(sum) {
		return 0, rest, false
	}
	rv, err := strconv.ParseUint(string(digits), 10, 64)
	return rv, rest, err == nil
}

// keyOfPath maps a store file path to its resource, namespace and name.
func (s *Store) keyOfPath(path string) (*resource, string, string, bool) {
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
func (s *Store) keyOfRel(rel string) (*resource, string, string, bool) {
	if !strings.HasSuffix(rel, fileSuffix) {
		return nil, "", "", false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	name := strings.TrimSuffix(parts[len(parts)-1], fileSuffix)
	if strings.HasPrefix(name, ".") || !isDNS1123Subdomain(name) {
		return nil, "", "", false
	}
	r, ok := s.byPlural[parts[0]]
	switch {
	case !ok:
		return nil, "", "", false
	case r.namespaced && len(parts) == 3 && isDNS1123Label(parts[1]):
		return r, parts[1], name, true
	case !r.namespaced && len(parts) == 2:
		return r, "", name, true
	}
	return nil, "", "", false
}

// lastValid returns the newest journal entry for a key, or nil when the
// journal has none or the newest is a deletion. It reads the journal
// backwards, so a recently changed object is found at once.
func (s *Store) lastValid(r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	f, err := s.openBeneath(s.journal.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := s.journal.journalEnd(fi.Size())
	needle := []byte(fmt.Sprintf(`"resource":%q,"namespace":%q,"name":%q`, r.plural, namespace, name))
	// The first chunk is small, the common case being an entry near the
	// end; each next one doubles, up to maxChunk.
	const firstChunk, maxChunk = 64 << 10, 1 << 20
	chunk := int64(firstChunk)
	var tail []byte // the start of a line cut by the previous chunk boundary
	for end := size; end > 0; chunk = min(2*chunk, maxChunk) {
		start := max(end-chunk, 0)
		buf := make([]byte, end-start, end-start+int64(len(tail)))
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		buf = append(buf, tail...)
		lines := bytes.Split(buf, []byte{'\n'})
		if start > 0 {
			tail, lines = lines[0], lines[1:]
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if !bytes.Contains(lines[i], needle) {
				continue
			}
			e := &entry{}
			if err := json.Unmarshal(lines[i], e); err != nil {
				continue // a torn line, never acknowledged
			}
			if e.Type == Deleted {
				return nil, nil
			}
			u := &unstructured.Unstructured{}
			return u, u.UnmarshalJSON(e.Object)
		}
		end = start
	}
	return nil, nil
}

// storedObject is an object as read from its file.
type storedObject struct {
	obj *unstructured.Unstructured
	// typed holds the object instead of obj when a list asked for its Go
	// type and could decode it so straight from the journal's JSON.
	typed client.Object
	// handEdited is true when the file was not written by the store.
	handEdited bool
	// slot is 1 + the index of the list's item slot that typed is, or 0.
	slot int
	// unmentioned marks an object a list left out undecoded, its JSON not
	// holding what the list was to mention.
	unmentioned bool
}

// object returns the object's metadata, whichever form it was read in.
func (so *storedObject) object() metav1.Object {
	if so.typed != nil {
		return so.typed
	}
	return so.obj
}

// FileError is a store file that cannot be read as a valid object. It names
// the file and, when known, the line.
type FileError struct {
	// Path is the file.
	Path string
	// Line is the one-based line of the problem; 0 when unknown.
	Line int
	// Err is the problem.
	Err error
}

func (e *FileError) Error() string {
	var ee *EntryError
	if errors.As(e.Err, &ee) && ee.Path == e.Path {
		return ee.Error()
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

var yamlLine = regexp.MustCompile(`line (\d+)`)

// readObjectFile reads and decodes one object file.
func (s *Store) readObjectFile(path string) (*storedObject, error) {
	data, err := s.readRegular(path)
	if err != nil {
		return nil, asFileError(path, err)
	}
	return s.decodeObjectFile(path, data)
}

// asFileError makes an entry the store refuses to read a *FileError, which
// the hand-edit layer treats as a refused edit: skipped, reported, and the
// last valid version kept in effect.
func asFileError(path string, err error) error {
	var ee *EntryError
	if errors.As(err, &ee) {
		return &FileError{Path: path, Err: ee}
	}
	return err
}

// readObjectFileStat is readObjectFile that also returns the identity of
// the file it read, taken from the same open file: a stat of the path and
// a read of it are two lookups, and a save landing between them would pair
// one file's identity with another's content. The file stays open until
// the caller closes it, so that its inode, which identifies it, cannot be
// reused by a later save meanwhile.
func (s *Store) readObjectFileStat(path string) (*storedObject, os.FileInfo, *os.File, error) {
	f, fi, err := s.openRegular(path)
	if err != nil {
		return nil, nil, nil, asFileError(path, err)
	}
	data, err := readAllSized(f, fi)
	if err != nil {
		_ = f.Close()
		return nil, nil, nil, asFileError(path, err)
	}
	so, err := s.decodeObjectFile(path, data)
	return so, fi, f, err
}

// decodeObjectFile decodes the content data of the store file at path.
func (s *Store) decodeObjectFile(path string, data []byte) (*storedObject, error) {
	rv, body, ok := parseHeader(data)
	if ok {
		if obj := s.fromJournal(path, rv); obj != nil {
			return &storedObject{obj: obj}, nil
		}
	}
	offset := strings.Count(string(data[:len(data)-len(body)]), "\n")
	js, err := yaml.YAMLToJSONStrict(body)
	if err != nil {
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			line += offset
			// The error's own line counts from below the header; the
			// FileError gives the file's.
			err = errors.New(strings.Replace(err.Error(), m[0]+": ", "", 1))
		}
		return nil, &FileError{Path: path, Line: line, Err: err}
	}
	var content map[string]interface{}
	if err := utiljson.Unmarshal(js, &content); err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if content == nil {
		return nil, &FileError{Path: path, Err: errors.New("the file holds no object")}
	}
	obj := &unstructured.Unstructured{Object: content}
	// A file copied to another name keeps a valid header; its path no
	// longer matches its metadata, which makes it a hand edit all the same.
	if _, ns, name, inStore := s.keyOfPath(path); inStore && (obj.GetName() != name || obj.GetNamespace() != ns) {
		ok = false
	}
	return &storedObject{obj: obj, handEdited: !ok}, nil
}

// fromJournal decodes the object of a store-written file at path with
// resourceVersion rv from a journal entry this process appended or read
// last, when that entry is this very version of this object: the store
// wrote the file from the entry's JSON, so decoding that JSON gives the
// same object as parsing the file's YAML, several times faster. This is
// the common case of reading an object just written, as an update after a
// create, a status update or a reconcile after its own write does, even
// when other objects were written since. It returns nil otherwise.
func (s *Store) fromJournal(path string, rv uint64) *unstructured.Unstructured {
	r, ns, name, ok := s.keyOfPath(path)
	if !ok {
		return nil
	}
	isThisVersion := func(e *entry) bool {
		return e != nil && e.RV == rv && e.Type != Deleted && e.Resource == r.plural && e.Namespace == ns && e.Name == name
	}
	e := s.journal.rememberedTail()
	if !isThisVersion(e) {
		e = s.journal.recentEntry(r.plural, ns, name)
	}
	if !isThisVersion(e) {
		return nil
	}
	var content map[string]interface{}
	if err := utiljson.Unmarshal(e.Object, &content); err != nil || content == nil {
		return nil
	}
	obj := &unstructured.Unstructured{Object: content}
	if obj.GetName() != name || obj.GetNamespace() != ns {
		return nil
	}
	return obj
}

// The core read and write path of the store follows: get and list read
// object files as they are, reporting a file holding a hand edit as such
// (storedObject.handEdited) without acting on it; commit writes. The
// hand-edit adoption layer (handedit.go: settled, currentLocked and
// listSettled) wraps these reads for every client access.

// get reads one object. The caller may hold either lock, or none: renames
// are atomic, so a reader never sees a torn file.
func (s *Store) get(r *resource, namespace, name string) (*storedObject, error) {
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	so, err := s.readObjectFile(s.objectPath(r, namespace, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	return so, err
}

// list reads every object of r in namespace ("" for all). Files that hold
// a hand edit not adopted yet, or that cannot be read, are returned apart
// as pending paths, so that one bad file does not hide the rest.
//
// A list given slots decodes what it can straight into them
// (storedObject.typed), without the map in between; the rest are read as
// unstructured objects. Files are read in key order, so that the slots
// come out in the list's order.
//
// A list given mention leaves out the objects it takes from the journal
// whose entry's JSON does not contain it, without decoding them: the
// garbage collector looks for its owner's uid so, in every kind, at every
// deletion. Objects read another way are all returned.
func (s *Store) list(r *resource, namespace string, slots *itemSlots, shape readShape) (items []*storedObject, pending []string, err error) {
	var dirs []string
	if namespace != "" || !r.namespaced {
		dirs = []string{s.objectDir(r, namespace)}
	} else {
		kindDir := filepath.Join(s.dir, r.plural)
		entries, err := s.readStoreDir(kindDir)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			switch {
			case e.IsDir():
				dirs = append(dirs, filepath.Join(kindDir, e.Name()))
			case strings.HasPrefix(e.Name(), "."):
			case e.Type()&fs.ModeSymlink != 0:
				s.report(problemOf(symlinkError(filepath.Join(kindDir, e.Name()))), nil)
			default:
				if p, ok := s.notDirProblem(filepath.Join(kindDir, e.Name())); ok {
					s.report(p, nil)
				}
			}
		}
	}
	type keyedPath struct{ namespace, name, path string }
	var files []keyedPath
	for _, dir := range dirs {
		entries, err := s.readStoreDir(dir)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), fileSuffix) || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if _, ns, name, ok := s.keyOfPath(path); ok {
				files = append(files, keyedPath{ns, name, path})
			}
		}
	}
	slices.SortFunc(files, func(a, b keyedPath) int {
		return cmp.Or(strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name))
	})
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	read := s.readObjects(r, paths, slots, shape)
	for i, so := range read {
		if so != nil && so.unmentioned {
			continue
		}
		if so == nil || so.handEdited {
			pending = append(pending, paths[i])
			continue
		}
		items = append(items, so)
	}
	return items, pending, nil
}

// readStoreDir lists the store directory at path, opened one component
// at a time through no symbolic link, so that not even the names behind a
// symlinked directory are read. A missing directory lists as empty; a
// symlink, or an entry that is not a safe directory, is reported and
// lists as empty too, so that one bad entry never stops the rest.
func (s *Store) readStoreDir(path string) ([]os.DirEntry, error) {
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
		s.report(problemOf(ee), nil)
		return nil, nil
	}
	if err != nil {
		// A FIFO, file or link where the directory belongs holds no
		// object: it is reported, and the other objects are listed.
		if p, ok := s.notDirProblem(path); ok {
			s.report(p, nil)
			return nil, nil
		}
		return nil, err
	}
	defer func() { _ = dir.Close() }()
	return dir.ReadDir(-1)
}

// commit makes a mutation durable: first the journal entry, then the object
// file, and sets the new resourceVersion on obj. The caller holds the write lock.
func (s *Store) commit(r *resource, typ EventType, obj *unstructured.Unstructured) error {
	return s.commitIf(r, typ, obj, nil)
}

// commitEncoded is commit given obj's encoding from before the lock
// (encodeAhead; nil encodes it here) and, when pre is not nil, the temp
// file created for it (createTempAhead). Only a group commit's staging
// uses them.
func (s *Store) commitEncoded(r *resource, typ EventType, obj *unstructured.Unstructured, enc *encodedObject, pre *tempAhead) error {
	if s.group != nil && typ != Deleted {
		return s.stage(r, typ, obj, enc, pre)
	}
	return s.commit(r, typ, obj)
}

// commitIf is commit for an adopted hand edit: the file is rewritten in the
// store's form only while it is still the one that was read (adopted), so a
// person's newer edit is never overwritten; that edit is adopted on its own.
func (s *Store) commitIf(r *resource, typ EventType, obj *unstructured.Unstructured, adopted os.FileInfo) error {
	if s.group != nil {
		if typ != Deleted && adopted == nil {
			return s.stage(r, typ, obj, nil, nil)
		}
		// A deletion or an adoption is rare: it is made on its own, after
		// the writes staged before it.
		s.flushGroup()
	}
	before, err := s.journal.size()
	if err != nil {
		return err
	}
	last, err := s.baseRV()
	if err != nil {
		return err
	}
	rv := last + 1
	if typ != Deleted {
		obj.SetResourceVersion(strconv.FormatUint(rv, 10))
	}
	js, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	e := &entry{RV: rv, Type: typ, Resource: r.plural, Namespace: obj.GetNamespace(), Name: obj.GetName(), Object: js}
	path := s.objectPath(r, obj.GetNamespace(), obj.GetName())
	// The renames of the newest groups become durable before this write's
	// (see recentDirs); this write fsyncs its own directory.
	recentSynced := s.syncDirsAsync(s.recentDirs())
	if typ == Deleted {
		err := s.journal.append(e)
		if derr := recentSynced(); derr != nil && err == nil {
			err = errors.Join(derr, s.journal.rollback(before))
		}
		if err != nil {
			return err
		}
		if err := s.removeObjectFile(path, rv); err != nil {
			if !s.exists(path) {
				// Removed, but not durably (the directory fsync failed): put
				// the last version back, so that the failed delete is not
				// visible now and cannot become so after a restart.
				if oldRV, perr := parseRV(obj.GetResourceVersion()); perr == nil {
					if werr := s.writeObjectFile(path, oldRV, js); werr != nil && !s.exists(path) {
						return errors.Join(err, werr)
					}
				}
			}
			return errors.Join(err, s.journal.rollback(before))
		}
	} else {
		// The journal entry and the new file's content are independent until
		// the rename, so their two fsyncs overlap; the rename waits for both,
		// which keeps "journal first" for every file a reader can see.
		tmp, release, err := s.journalAndTemp(e, path, rv, obj.Object, js)
		if derr := recentSynced(); derr != nil && err == nil {
			tmp.Discard()
			release()
			err = derr
		}
		if err != nil {
			if cur, serr := s.journal.size(); serr == nil && cur > before {
				// The entry is durable but the file's content is not: take
				// the entry back, or the next writer would roll it forward.
				err = errors.Join(err, s.journal.rollback(before))
			}
			return err
		}
		defer release()
		var stillWanted func(string) bool
		switch {
		case adopted != nil:
			stillWanted = func(replaced string) bool { return s.isFile(replaced, adopted) }
		case typ == Modified:
			// Replace only the store's own version: a person's save that landed
			// after this update read the object is kept and adopted on its own.
			stillWanted = s.storeWritten
		}
		err = tmp.InstallIf(stillWanted)
		if err != nil {
			// A write reported as failed must not be visible, now or after
			// a restart: the new file is taken out of place, then its entry.
			if tmp.Placed() {
				if uerr := tmp.Undo(); uerr != nil {
					err = errors.Join(err, uerr)
				}
			}
			err = errors.Join(err, s.journal.rollback(before))
		}
		if tmp.Left() {
			// What is left under the temp name (the replaced file, or ours
			// given back) is unreachable; unlinking it frees its blocks,
			// which takes as long as a small write, so it is done after
			// this write returns.
			s.removeLater(tmp.Name())
		}
		if err != nil {
			return err
		}
	}
	s.writeMark(rv)
	s.compactIfLarge()
	s.rememberApplied()
	return nil
}

// compactIfLarge compacts the journal when it has grown beyond the limit
// and to twice the size the last compaction left: a store whose live
// objects alone pass the limit would otherwise compact, reading and
// rewriting all of them, at every write. The caller holds the write lock,
// with no write staged.
func (s *Store) compactIfLarge() {
	if size, err := s.journal.size(); err == nil && size > max(s.limit, 2*s.journal.compactedLive()) {
		if err := s.journal.compact(s.keep); err != nil {
			s.log.Error(err, "compacting the journal")
		}
	}
}

// removeObjectFile removes a deleted object's file. A file holding a
// person's edit that the store has not adopted is kept beside it, as
// NAME.yaml.unsaved-RV, rather than lost with the object. Renaming first and
// looking second leaves no moment in which a save could slip in unseen.
func (s *Store) removeObjectFile(path string, rv uint64) error {
	aside := fmt.Sprintf("%s.unsaved-%d", path, rv)
	dir, err := s.openParent(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }()
	if err := unix.Renameat(int(dir.Fd()), filepath.Base(path), int(dir.Fd()), filepath.Base(aside)); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &os.LinkError{Op: "rename", Old: path, New: aside, Err: err}
	}
	if s.storeWritten(aside) {
		if err := unix.Unlinkat(int(dir.Fd()), filepath.Base(aside), 0); err != nil {
			return &os.PathError{Op: "remove", Path: aside, Err: err}
		}
	} else {
		s.log.Info("the object was deleted; its file held an unadopted edit, kept", "file", aside)
	}
	return s.io.Sync(dir)
}

// journalAndTemp appends e to the journal while writing the object file's
// new content to a temp file beside path, and waits for both to be durable.
func (s *Store) journalAndTemp(e *entry, path string, rv uint64, obj map[string]interface{}, objJSON []byte) (*atomicfs.Temp, func(), error) {
	body, err := objectYAML(obj, objJSON)
	if err != nil {
		return nil, nil, err
	}
	type written struct {
		tmp     *atomicfs.Temp
		release func()
		err     error
	}
	done := make(chan written, 1)
	go func() {
		tmp, release, err := s.writeTemp(path, append([]byte(fileHeader(rv, body)), body...))
		done <- written{tmp, release, err}
	}()
	journalErr := s.journal.append(e)
	w := <-done
	if journalErr != nil || w.err != nil {
		if w.tmp != nil {
			w.tmp.Discard()
			w.release()
		}
		return nil, nil, errors.Join(journalErr, w.err)
	}
	return w.tmp, w.release, nil
}

// sameFileInfo tells whether two stats describe the same, unmodified file.
func sameFileInfo(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// isFile tells whether path is still the file described by fi.
func (s *Store) isFile(path string, fi os.FileInfo) bool {
	f, err := s.openBeneath(path, unix.O_PATH, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	cur, err := f.Stat()
	return err == nil && sameFileInfo(cur, fi)
}

// storeWritten tells whether the file at path was written by the store and
// not edited since.
func (s *Store) storeWritten(path string) bool {
	_, ok := s.readHeaderRV(path)
	return ok
}

// currentRV returns the store's newest resourceVersion.
func (s *Store) currentRV() (uint64, error) { return s.journal.lastRV() }

// contextDone turns a cancelled context into the error a client expects.
func contextDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return apierrors.NewTimeoutError(err.Error(), 0)
	}
	return nil
}

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
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/kinds"
	"github.com/tether-dev/tether/internal/store/crdschema"
)

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

// Store is a file-backed object store with API-server semantics. It is
// the top of the store's layers (see doc.go): the API semantics (create,
// update, patch, delete, the garbage collector), the client, watches and
// the hand-edit watcher, over the adoption layer and, below it, commit,
// object files, the journal and the layout.
type Store struct {
	*adopter
	mapper meta.RESTMapper
	// watchMu guards closed and the start of a watch; watches are the
	// running watches, which Close stops and awaits before it closes the
	// files they read; life ends when Close begins.
	watchMu sync.Mutex
	closed  bool
	watches sync.WaitGroup
	life    context.Context
	endLife context.CancelFunc
	// journalEvents wakes the watches when the journal changes.
	journalEvents journalNotifier
	// owners is the owner index the garbage collector reads (see owners.go).
	owners *ownerCache
	// listDependents makes the collector list instead of using the owner
	// index (benchmarks compare the two).
	listDependents bool
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
		s.quarantine.report(p, nil)
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
	markFile, err := s.openBeneath(filepath.Join(dir, lockName), os.O_RDONLY, 0)
	if err != nil {
		_ = s.root.Close()
		return nil, err
	}
	if s.journal, err = s.openJournal(markFile); err != nil {
		_ = markFile.Close()
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
			_ = s.root.Close()
			return nil, fmt.Errorf("syncing store %s: %w", dir, err)
		}
	}
	s.journal.onCorrupt = func(c *corruptLine) { s.quarantine.report(c.problem(s.journal.path), storeReference()) }
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
	l := &layout{
		dir:        dir,
		byGVK:      map[schema.GroupVersionKind]*resource{},
		byPlural:   map[string]*resource{},
		log:        opts.Log,
		quarantine: newQuarantine(opts.Log),
		io:         opts.IO,
	}
	if l.io == nil {
		l.io = atomicfs.Real
	}
	files := &objectFiles{layout: l, scheme: opts.Scheme, stampSettle: defaultStampSettle}
	c := &committer{objectFiles: files, limit: opts.JournalLimit, keep: opts.JournalKeep}
	a := &adopter{
		groupCommitter: &groupCommitter{committer: c},
		validator:      sync.OnceValues(func() (*crdschema.Validator, error) { return crdschema.New(crds) }),
		now:            opts.Now,
		observer:       opts.Observer,
	}
	s := &Store{adopter: a, owners: &ownerCache{objectFiles: files}}
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
	_ = s.root.Close()
	return err
}

// RESTMapper maps the served kinds to resources.
func (s *Store) RESTMapper() meta.RESTMapper { return s.mapper }

// JournalSize returns the size in bytes of the store's journal file, which
// every process writing to the store appends to. A store nothing has been
// written to yet has no journal, which is an empty one.
func (s *Store) JournalSize() (int64, error) {
	fi, err := os.Stat(s.journal.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

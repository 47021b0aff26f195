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
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// Group commit: the writes of one process that arrive while another write
// is waiting for the disk share its fsyncs. The first writer to find no
// write in progress leads: it takes the write lock once and runs every
// write queued by then, each appending its journal entry and writing its
// file's new content to a temp file without an fsync; then it fsyncs the
// journal, the temp files and the directories of the groups before (see
// recentDirs) at once, renames each temp file into place and acknowledges
// them all. Writes arriving
// meanwhile queue for the next group, led by the first of them. Nothing is
// visible to a reader holding a lock before it is durable, as before: the
// lock is held from the first append to the last rename. Two writes of one
// object never share a group, since the second must read the first's file.

// groupCommitter runs the writes of this process through group commits,
// on top of committer, which makes a write durable on its own.
type groupCommitter struct {
	*committer
	// writes queues this process's writes for the group commit.
	writes writeQueue
	// group is the group commit running under the write lock, or nil.
	group *stagedGroup
}

// commit makes a mutation durable: first the journal entry, then the object
// file, and sets the new resourceVersion on obj. The caller holds the write
// lock. Within a group commit it is staged (stage), and durable once the
// group is flushed.
func (s *groupCommitter) commit(r *resource, typ EventType, obj *unstructured.Unstructured) error {
	return s.commitIf(r, typ, obj, nil)
}

// commitIf is commit for an adopted hand edit: the file is rewritten in the
// store's form only while it is still the one that was read (adopted), so a
// person's newer edit is never overwritten; that edit is adopted on its own.
func (s *groupCommitter) commitIf(r *resource, typ EventType, obj *unstructured.Unstructured, adopted os.FileInfo) error {
	if s.group != nil {
		if typ != Deleted && adopted == nil {
			return s.stage(r, typ, obj, nil, nil)
		}
		// A deletion or an adoption is rare: it is made on its own, after
		// the writes staged before it.
		s.flushGroup()
	}
	return s.commitAlone(r, typ, obj, adopted)
}

// commitEncoded is commit given obj's encoding from before the lock
// (encodeAhead; nil encodes it here) and, when pre is not nil, the temp
// file created for it (createTempAhead). Only a group commit's staging
// uses them.
func (s *groupCommitter) commitEncoded(r *resource, typ EventType, obj *unstructured.Unstructured, enc *encodedObject, pre *tempAhead) error {
	if s.group != nil && typ != Deleted {
		return s.stage(r, typ, obj, enc, pre)
	}
	return s.commit(r, typ, obj)
}

// writeRequest is one write waiting for, or run by, a group commit.
type writeRequest struct {
	// path is the object file the write is about.
	path string
	fn   func() error
	err  error
	// wake tells a waiting writer that its write is done (false) or that
	// it leads the next group (true).
	wake chan bool
}

// writeQueue holds the writes waiting for the group commit in progress.
type writeQueue struct {
	mu      sync.Mutex
	queue   []*writeRequest
	leading bool
}

// stagedWrite is a write of the group in progress whose journal entry and
// temp file are written but not yet durable, and not in place.
type stagedWrite struct {
	req *writeRequest
	// before is the journal's size before the entry.
	before      int64
	rv          uint64
	tmp         *atomicfs.Temp
	release     func()
	stillWanted func(string) bool
}

// stagedGroup is the group commit the leader is running. It is set only
// while the write lock is held.
type stagedGroup struct {
	req   *writeRequest
	items []*stagedWrite
	paths map[string]bool
	// recent are the directories of the newest two groups in the journal
	// before this one (see recentDirs), taken when the first write is staged.
	recent []string
}

// groupWrite runs fn, a write of the object file at path, holding the
// write lock, in a group commit with the writes of this process queued
// meanwhile (see above). fn's commit is durable when groupWrite returns nil.
func (s *groupCommitter) groupWrite(path string, fn func() error) error {
	req := &writeRequest{path: path, fn: fn, wake: make(chan bool, 1)}
	s.writes.mu.Lock()
	s.writes.queue = append(s.writes.queue, req)
	lead := !s.writes.leading
	s.writes.leading = true
	s.writes.mu.Unlock()
	if !lead && !<-req.wake {
		return req.err
	}
	s.writes.mu.Lock()
	reqs := s.writes.queue
	s.writes.queue = nil
	s.writes.mu.Unlock()
	s.runGroup(reqs)
	for _, r := range reqs {
		if r != req {
			r.wake <- false
		}
	}
	s.writes.mu.Lock()
	if len(s.writes.queue) > 0 {
		// Leadership passes on, so that no writer leads for ever.
		s.writes.queue[0].wake <- true
	} else {
		s.writes.leading = false
	}
	s.writes.mu.Unlock()
	return req.err
}

// runGroup runs the writes of one group commit and sets their errors.
func (s *groupCommitter) runGroup(reqs []*writeRequest) {
	err := s.withWriteLock(func() error {
		s.group = &stagedGroup{paths: map[string]bool{}}
		defer func() { s.group = nil }()
		for _, r := range reqs {
			if s.group.paths[r.path] {
				s.flushGroup()
			}
			s.group.req = r
			staged := len(s.group.items)
			if err := r.fn(); err != nil {
				// A write that fails after staging its entry (no caller
				// does) must not take effect: its entries are the newest.
				s.unstage(staged)
				r.err = err
			}
		}
		s.flushGroup()
		return nil
	})
	if err != nil {
		for _, r := range reqs {
			r.err = errors.Join(r.err, err)
		}
	}
}

// stage is commit within a group commit: it appends obj's entry to the
// journal and writes its file's content to a temp file, neither fsynced,
// for flushGroup to make durable and put in place. The caller holds the
// write lock.
//
// enc, when not nil, is obj encoded before the lock (encodeAhead), into
// which only the resourceVersion is written here; pre, when not nil, is
// the temp file created before the lock (createTempAhead), which is
// filled when it is in the directory the lock holder finds.
func (s *groupCommitter) stage(r *resource, typ EventType, obj *unstructured.Unstructured, enc *encodedObject, pre *tempAhead) error {
	g := s.group
	last, err := s.baseRV()
	if err != nil {
		return err
	}
	rv := last + 1
	obj.SetResourceVersion(strconv.FormatUint(rv, 10))
	var js, body []byte
	if enc != nil {
		js, body = enc.with(rv)
	} else {
		if js, err = obj.MarshalJSON(); err != nil {
			return err
		}
		if body, err = objectYAML(obj.Object, js); err != nil {
			return err
		}
	}
	path := s.objectPath(r, obj.GetNamespace(), obj.GetName())
	if len(g.items) == 0 {
		g.recent = s.recentDirs()
	}
	dir, err := s.openParent(path, true)
	if err != nil {
		return err
	}
	content := append([]byte(fileHeader(rv, body)), body...)
	var tmp *atomicfs.Temp
	if pre.take(dir) {
		_ = dir.Close()
		dir, tmp = pre.dir, pre.tmp
		err = tmp.FillUnsynced(content, 0o600)
	} else {
		tmp, err = atomicfs.WriteTempAtUnsynced(dir, filepath.Base(path), content, 0o600, s.io)
	}
	if err != nil {
		_ = dir.Close()
		return err
	}
	e := &entry{RV: rv, Type: typ, Resource: r.plural, Namespace: obj.GetNamespace(), Name: obj.GetName(), Object: js, Group: len(g.items)}
	before, err := s.journal.appendUnsynced(e)
	if err != nil {
		tmp.Discard()
		_ = dir.Close()
		return err
	}
	w := &stagedWrite{req: g.req, before: before, rv: rv, tmp: tmp, release: func() { _ = dir.Close() }}
	if typ == Modified {
		// Replace only the store's own version: a person's save that landed
		// after this update read the object is kept and adopted on its own.
		w.stillWanted = s.storeWritten
	}
	g.items = append(g.items, w)
	g.paths[path] = true
	return nil
}

// tempAhead is a temp file created before the write lock for an update's
// new content, in the directory of the object's file, held open.
type tempAhead struct {
	dir *os.File
	tmp *atomicfs.Temp
	// taken is set once the write took the temp file over (see stage).
	taken bool
}

// createTempAhead creates the temp file an update of the object file at
// path will fill, before the update takes the write lock: on a filesystem
// where creating a file is costly (ext4 without a journal scans the inodes
// freed in the last minutes for one it may reuse), that cost is then paid
// side by side with the other writers instead of one at a time under the
// lock. It returns nil when the directory cannot be opened.
func (s *groupCommitter) createTempAhead(path string) *tempAhead {
	dir, err := s.openParent(path, false)
	if err != nil {
		return nil
	}
	tmp, err := atomicfs.CreateTempAt(dir, filepath.Base(path), s.io)
	if err != nil {
		_ = dir.Close()
		return nil
	}
	return &tempAhead{dir: dir, tmp: tmp}
}

// take hands the temp file over to a write in dir, the directory the
// write opened under the lock, when it is the one the temp file is in.
func (t *tempAhead) take(dir *os.File) bool {
	if t == nil || t.taken || !sameDirectory(t.dir, dir) {
		return false
	}
	t.taken = true
	return true
}

// discard removes the temp file and closes its directory, unless a write
// took them over.
func (t *tempAhead) discard() {
	if t == nil || t.taken {
		return
	}
	t.taken = true
	t.tmp.Discard()
	_ = t.dir.Close()
}

// sameDirectory tells whether a and b are the same directory.
func sameDirectory(a, b *os.File) bool {
	ai, err := a.Stat()
	if err != nil {
		return false
	}
	bi, err := b.Stat()
	return err == nil && os.SameFile(ai, bi)
}

// unstage takes back the staged writes from index from on, the newest of
// the journal.
func (s *groupCommitter) unstage(from int) {
	g := s.group
	if from >= len(g.items) {
		return
	}
	err := s.journal.rollback(g.items[from].before)
	for _, w := range g.items[from:] {
		w.tmp.Discard()
		w.release()
		if err != nil {
			w.req.err = errors.Join(w.req.err, err)
		}
	}
	g.items = g.items[:from]
}

// flushGroup makes the staged writes durable and puts them in place: one
// fsync of the journal alongside those of the temp files and of the
// directories (see recentDirs), then the renames in journal order. A
// write that fails there takes every later one of the group with it, as
// the journal is cut back to its entry. The caller holds the write lock.
func (s *groupCommitter) flushGroup() {
	g := s.group
	items := g.items
	g.items, g.paths = nil, map[string]bool{}
	if len(items) == 0 {
		return
	}
	dirs := g.recent
	for _, w := range items {
		if !slices.Contains(dirs, w.tmp.Dir()) {
			dirs = append(dirs, w.tmp.Dir())
		}
	}
	var wg sync.WaitGroup
	var journalErr error
	tempErrs := make([]error, len(items))
	dirErrs := make([]error, len(dirs))
	wg.Go(func() { journalErr = s.journal.sync() })
	for i, w := range items {
		wg.Go(func() { tempErrs[i] = w.tmp.Sync() })
	}
	for i, d := range dirs {
		wg.Go(func() { dirErrs[i] = s.syncDir(d) })
	}
	wg.Wait()
	failed, failure := len(items), errors.Join(journalErr, errors.Join(dirErrs...))
	if failure != nil {
		failed = 0
	} else {
		for i, err := range tempErrs {
			if err != nil {
				failed, failure = i, err
				break
			}
		}
	}
	for i, w := range items[:failed] {
		if err := w.tmp.PlaceIf(w.stillWanted); err != nil {
			if w.tmp.Placed() {
				err = errors.Join(err, w.tmp.Undo())
			}
			failed, failure = i, err
			break
		}
	}
	if failed < len(items) {
		failure = errors.Join(failure, s.journal.rollback(items[failed].before))
		for _, w := range items[failed:] {
			w.req.err = errors.Join(w.req.err, failure)
		}
	} else {
		s.journal.writeMark(items[len(items)-1].rv)
	}
	for _, w := range items {
		if w.tmp.Left() {
			// Unreachable under its temp name; see commitIf.
			s.removeLater(w.tmp.Name())
		}
		w.release()
	}
	if failed > 0 {
		s.compactIfLarge()
	}
	s.rememberApplied()
}

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
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// committer is the commit layer, above the object files and the journal:
// it makes a mutation durable (the journal entry, then the object file),
// alone or in a group commit (groupcommit.go), under the write lock, which
// it takes after repairing the journal's tail and rolling forward the
// writes of a killed writer. It never adopts a hand edit: it only keeps a
// person's save from being overwritten (commitIf).
type committer struct {
	*objectFiles
	limit int64
	keep  int
	// removals are the background removals of replaced files, which Close awaits.
	removals sync.WaitGroup
	// applied identifies the journal as this process left it after its
	// last write, every entry applied; while the journal is still so, no
	// other writer has come since and the roll-forward has nothing to do.
	applied journalState
}

// removeLater removes the file at path in the background. It is for files
// no reader can reach any longer: temp names holding replaced content. A
// process that exits without Close may leave such a file behind, as a
// crash at that moment always could; nothing reads dot files.
func (s *committer) removeLater(path string) {
	s.removals.Go(func() { _ = s.unlink(path) })
}

// withWriteLock runs fn holding the store's exclusive lock, after repairing
// a torn journal tail and rolling forward a write whose process died
// between the journal append and the object file rename.
func (s *committer) withWriteLock(fn func() error) error {
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
	s.journal.lock = lock
	defer func() { s.journal.lock = nil }()
	if err := s.journal.refresh(); err != nil {
		return err
	}
	if err := s.journal.cutVoid(); err != nil {
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

// rollForward completes the newest two group commits of the journal (see
// entry.Group and recentDirs): a writer may have died after appending its
// entries and before renaming their files into place, and a power loss may
// have dropped renames not yet fsynced. The journal is fsynced before any
// file is rolled forward, as a live writer would have done.
func (s *committer) rollForward() error {
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
func (s *committer) rememberApplied() {
	fi, err := s.journal.f.Stat()
	if err != nil {
		s.applied = journalState{}
		return
	}
	s.applied = journalState{ino: fileInode(s.journal.f), size: fi.Size(), mod: fi.ModTime()}
}

// rollForwardEntry puts the object file of e in e's state when its writer
// died before doing so, after calling durable.
func (s *committer) rollForwardEntry(r *resource, e *entry, durable func() error) error {
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
		return s.commitAlone(r, Deleted, last, nil)
	}
	return nil
}

// commitAlone makes a mutation durable on its own, outside any group
// commit: first the journal entry, then the object file, and sets the new
// resourceVersion on obj. Given adopted, the stat of a hand-edited file
// being adopted, the file is rewritten in the store's form only while it
// is still that one, so a person's newer edit is never overwritten; that
// edit is adopted on its own. The caller holds the write lock, with no
// write staged (see groupCommitter.commitIf).
func (s *committer) commitAlone(r *resource, typ EventType, obj *unstructured.Unstructured, adopted os.FileInfo) error {
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
	s.journal.writeMark(rv)
	s.compactIfLarge()
	s.rememberApplied()
	return nil
}

// compactIfLarge compacts the journal when it has grown beyond the limit
// and to twice the size the last compaction left: a store whose live
// objects alone pass the limit would otherwise compact, reading and
// rewriting all of them, at every write. The caller holds the write lock,
// with no write staged.
func (s *committer) compactIfLarge() {
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
func (s *committer) removeObjectFile(path string, rv uint64) error {
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
func (s *committer) journalAndTemp(e *entry, path string, rv uint64, obj map[string]interface{}, objJSON []byte) (*atomicfs.Temp, func(), error) {
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

// exists tells whether an entry is at path inside the store.
func (s *committer) exists(path string) bool {
	f, err := s.openBeneath(path, unix.O_PATH, 0)
	if err != nil {
		var ee *EntryError
		return errors.As(err, &ee) // a symlink is there all the same
	}
	_ = f.Close()
	return true
}

// pendingTemp tells whether a complete temp file of resourceVersion rv for
// the object file at path lies beside it: the content of a write whose
// writer died before renaming it into place.
func (s *committer) pendingTemp(path string, rv uint64) bool {
	dir, err := s.openParent(path, false)
	if err != nil {
		return false
	}
	names, err := dir.Readdirnames(-1)
	_ = dir.Close()
	if err != nil {
		return false
	}
	prefix := atomicfs.TempPrefix + filepath.Base(path) + "-"
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if got, ok := s.readHeaderRV(filepath.Join(filepath.Dir(path), n)); ok && got == rv {
			return true
		}
	}
	return false
}

// baseRV returns the newest resourceVersion issued, which the next write
// follows. It is the journal's, except when the journal lost entries (a
// person deleted or emptied it, or its newest line is corrupt): then it is
// the largest of the lock file's mark and the resourceVersions in the
// object files' headers, so that resourceVersions never go back. A journal
// found empty that way gets a compaction line naming that resourceVersion
// first, so that a watch from before it gets 410 Expired and lists again.
// The caller holds the write lock.
func (s *committer) baseRV() (uint64, error) {
	last, err := s.journal.lastRV()
	if err != nil {
		return 0, err
	}
	mark := s.journal.readMark()
	if last >= mark && last > 0 {
		return last, nil
	}
	base := max(last, mark)
	if last == 0 {
		base = max(base, s.maxHeaderRV())
		if base > 0 {
			s.log.Info("the journal is empty; resourceVersions go on from the newest one issued", "resourceVersion", base)
			if err := s.journal.append(&entry{Compacted: base}); err != nil {
				return 0, err
			}
		}
	}
	return base, nil
}

// cleanTemps removes the temp files that killed writers left in the store
// (see atomicfs.TempPrefix): those whose writer, named by the PID in the
// name, is no longer alive, and those of the earlier naming, without a PID.
// The caller holds the write lock, so no live writer of this store is
// between creating a temp file and renaming it; a live process's pending
// removals of replaced files are left to it.
func (s *committer) cleanTemps() {
	var dirs []string
	for plural, r := range s.byPlural {
		kindDir := filepath.Join(s.dir, plural)
		if !r.namespaced {
			dirs = append(dirs, kindDir)
			continue
		}
		entries, _ := os.ReadDir(kindDir)
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(kindDir, e.Name()))
			}
		}
	}
	dirs = append(dirs, s.dir)
	for _, d := range dirs {
		rel, err := s.rel(d)
		if err != nil {
			continue
		}
		dir, err := s.openStoreDir(rel, false)
		if err != nil {
			continue
		}
		names, _ := dir.Readdirnames(-1)
		for _, n := range names {
			if strings.HasPrefix(n, atomicfs.TempPrefix) && !writerAlive(n) {
				if err := unix.Unlinkat(int(dir.Fd()), n, 0); err == nil {
					s.log.Info("removed a temp file left by a killed writer", "file", filepath.Join(d, n))
				}
			}
		}
		_ = dir.Close()
	}
}

// writerAlive tells whether the process named in a temp file's name
// (".tmp-NAME-PID-RANDOM") is alive.
func writerAlive(name string) bool {
	parts := strings.Split(name, "-")
	if len(parts) < 4 {
		return false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err = unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// recentDirs returns the directories of the object files of the newest two
// groups in the journal. A group's renames are not fsynced by their
// writer: the next group fsyncs their directories alongside its journal
// fsync, before its own renames. So at any moment only the renames of the
// newest two groups may not be durable, and after a power loss the
// roll-forward redoes those from the journal (see rollForward). The
// caller holds the write lock.
func (s *committer) recentDirs() []string {
	entries, err := s.journal.lastGroups(2)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		r, ok := s.byPlural[e.Resource]
		if !ok || e.RV == 0 {
			continue
		}
		if d := s.objectDir(r, e.Namespace); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// syncDir fsyncs the store directory at path, when it exists.
func (s *committer) syncDir(path string) error {
	rel, err := s.rel(path)
	if err != nil {
		return err
	}
	dir, err := s.openStoreDir(rel, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }()
	if err := s.io.Sync(dir); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return nil
}

// syncDirsAsync fsyncs dirs in the background; the returned function
// waits for them and returns their errors.
func (s *committer) syncDirsAsync(dirs []string) func() error {
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, d := range dirs {
		wg.Go(func() { errs[i] = s.syncDir(d) })
	}
	return func() error {
		wg.Wait()
		return errors.Join(errs...)
	}
}

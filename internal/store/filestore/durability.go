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
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// exists tells whether an entry is at path inside the store.
func (s *Store) exists(path string) bool {
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
func (s *Store) pendingTemp(path string, rv uint64) bool {
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

// markSize is the size of the resourceVersion mark in the lock file.
const markSize = 21

// writeMark records rv, the newest resourceVersion issued, in the lock
// file. It is not fsynced: it guards against a journal that a person
// deletes or empties, not against a crash, which the journal survives.
// The caller holds the write lock.
func (s *Store) writeMark(rv uint64) {
	if s.lock == nil {
		return
	}
	_, _ = s.lock.WriteAt([]byte(fmt.Sprintf("%020d\n", rv)), 0)
}

// readMark returns the resourceVersion mark of the lock file, or 0.
func (s *Store) readMark() uint64 {
	if s.lock == nil {
		return 0
	}
	buf := make([]byte, markSize)
	n, _ := s.lock.ReadAt(buf, 0)
	rv, err := strconv.ParseUint(strings.TrimSpace(string(buf[:n])), 10, 64)
	if err != nil {
		return 0
	}
	return rv
}

// baseRV returns the newest resourceVersion issued, which the next write
// follows. It is the journal's, except when the journal lost entries (a
// person deleted or emptied it, or its newest line is corrupt): then it is
// the largest of the lock file's mark and the resourceVersions in the
// object files' headers, so that resourceVersions never go back. A journal
// found empty that way gets a compaction line naming that resourceVersion
// first, so that a watch from before it gets 410 Expired and lists again.
// The caller holds the write lock.
func (s *Store) baseRV() (uint64, error) {
	last, err := s.journal.lastRV()
	if err != nil {
		return 0, err
	}
	mark := s.readMark()
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

// maxHeaderRV returns the largest resourceVersion in the headers of the
// store's object files, counting only headers whose checksum holds.
func (s *Store) maxHeaderRV() uint64 {
	var top uint64
	for plural := range s.byPlural {
		root := filepath.Join(s.dir, plural)
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, fileSuffix) {
				return nil
			}
			if rv, ok := s.readHeaderRV(path); ok {
				top = max(top, rv)
			}
			return nil
		})
	}
	return top
}

// cleanTemps removes the temp files that killed writers left in the store
// (see atomicfs.TempPrefix): those whose writer, named by the PID in the
// name, is no longer alive, and those of the earlier naming, without a PID.
// The caller holds the write lock, so no live writer of this store is
// between creating a temp file and renaming it; a live process's pending
// removals of replaced files are left to it.
func (s *Store) cleanTemps() {
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

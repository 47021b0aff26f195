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
	"syscall"
)

// A failed write whose journal entry cannot be cut back (the truncate or
// its fsync fails too) must still never take effect, not even after a
// restart, when the roll-forward would otherwise apply the entry. So the
// offset the journal should end at is recorded durably in the lock file,
// after the resourceVersion mark: the void mark. Entries from that offset
// on are void. Every writer, under the write lock and before its
// roll-forward, makes the cut (see cutVoid); readers stop reading the
// journal there. The mark lives in the lock file, not a new file, because
// a full disk that refuses to create a file still lets a file's first
// block be written.

// voidAt is where the void mark starts in the lock file, past the
// resourceVersion mark.
const voidAt = markSize

// voidSize is the size of the void mark: the offset plus one, 0 for none.
const voidSize = 21

// truncateIO is an IO that also cuts files, as (*os.File).Truncate; tests
// make it fail.
type truncateIO interface {
	Truncate(f *os.File, size int64) error
}

// truncate cuts f to size, through the store's IO when it can.
func (j *journal) truncate(f *os.File, size int64) error {
	if t, ok := j.io.(truncateIO); ok {
		return t.Truncate(f, size)
	}
	return f.Truncate(size)
}

// voidFrom returns the offset from which the journal's entries are void,
// or -1. It reads the lock file through the descriptor kept for it.
func (s *Store) voidFrom() int64 {
	if s.markFile == nil {
		return -1
	}
	return readVoid(s.markFile)
}

// readVoid returns the void mark of the lock file f, or -1.
func readVoid(f *os.File) int64 {
	buf := make([]byte, voidSize)
	n, _ := f.ReadAt(buf, voidAt)
	v, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64)
	if err != nil || v <= 0 {
		return -1
	}
	return v - 1
}

// inspectVoid reports a void mark in the lock file at path: entries of a
// failed write that no writer has cut back yet, which make every write
// fail until one can.
func inspectVoid(path string) []Problem {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	v := readVoid(f)
	if v < 0 {
		return nil
	}
	return []Problem{{
		Path:   path,
		Reason: fmt.Sprintf("marks the journal's entries from byte %d on as those of a failed write that could not be cut back; they are never read, and every write fails until the next writer cuts them", v),
		Fix:    "make the store's filesystem writable (free space, or remount it read-write); the next tether write or tether run cuts them and clears the mark",
	}}
}

// writeVoid records durably that the journal's entries from offset on are
// void. The caller holds the write lock; the lock file is opened anew for
// every write lock, so a failed fsync here is never retried on the same
// descriptor.
func (s *Store) writeVoid(offset int64) error {
	if s.lock == nil {
		return errors.New("no write lock")
	}
	if cur := s.voidFrom(); cur >= 0 && cur < offset {
		offset = cur
	}
	if err := s.writeAt(s.lock, fmt.Sprintf("%020d\n", offset+1), voidAt); err != nil {
		return err
	}
	return s.io.Sync(s.lock)
}

// writeAt writes text at off in f.
func (s *Store) writeAt(f *os.File, text string, off int64) error {
	_, err := f.WriteAt([]byte(text), off)
	return err
}

// cutVoid cuts the journal at the void mark, if there is one, makes the
// cut durable and then clears the mark, durably too: an entry appended
// after a mark that a crash could bring back would be cut as void. The
// caller holds the write lock. Until it succeeds, writes fail.
func (s *Store) cutVoid() error {
	v := s.voidFrom()
	if v < 0 {
		return nil
	}
	j := s.journal
	size, err := j.size()
	if err != nil {
		return err
	}
	if size > v {
		f, err := j.open()
		if err != nil {
			return err
		}
		if err := j.truncate(f, v); err != nil {
			_ = f.Close()
			return fmt.Errorf("%s: cutting back the entries of a failed write: %w", j.path, err)
		}
		if err := j.io.Sync(f); err != nil {
			_ = f.Close()
			return fmt.Errorf("%s: cutting back the entries of a failed write: %w", j.path, err)
		}
		j.forgetTail()
		j.forgetRecent()
		_ = j.f.Close()
		j.f = f
		s.log.Info("cut the journal back past the entries of a failed write", "journal", j.path, "offset", v)
	}
	if err := s.writeAt(s.lock, fmt.Sprintf("%020d\n", 0), voidAt); err != nil {
		return err
	}
	if err := s.io.Sync(s.lock); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(s.dir, lockName), err)
	}
	j.broken = nil
	return nil
}

// journalEnd returns where the journal's readable entries end for a file
// of size bytes: at the void mark, when there is one before its end.
func (j *journal) journalEnd(size int64) int64 {
	if j.voidFrom != nil {
		if v := j.voidFrom(); v >= 0 && v < size {
			return v
		}
	}
	return size
}

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

package atomicfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Spares keeps the files that replacements left under temp names (the
// replaced content, unreachable from any target), so that later writes in
// the same directory refill one instead of creating a file. Creating a
// file allocates an inode and removing one frees it; on ext4 without a
// journal the allocation scans the inodes freed in the last minutes,
// machine-wide, and was the largest single cost of a small durable write.
// A refilled spare is truncated, written and renamed to a fresh temp name
// for its new target, so every temp file still names its target and its
// writer (see TempPrefix), and a writer killed meanwhile leaves only temp
// files behind, which the usual cleanup removes.
//
// A spare is refilled only once its directory has been fsynced after it
// was kept (see Synced): until then a power loss could bring back its
// former name, the replaced target's, pointing at the refilled content.
// And only when it is still a regular file with one link,
// owned by this process's user: one that someone replaced, linked
// elsewhere or changed hands is removed instead. Spares must only be kept
// for files that no reader can still be reading: a caller whose readers
// read under a shared lock, and that puts files in place under the
// exclusive one, has none after the placement. A Spares is safe for
// concurrent use.
type Spares struct {
	mu sync.Mutex
	// byDir maps a directory's path (the Name of the *os.File it was
	// opened as) to its spares.
	byDir map[string][]spare
	count int
	// seq numbers the spares in the order they were kept (see Mark).
	seq uint64
	// perDir and total bound what is kept: a spare is needed only while
	// writes are in flight in its directory.
	perDir, total int
}

// spare is a file kept under a temp name.
type spare struct {
	name string
	// seq is the Spares' seq when it was kept.
	seq uint64
	// durable is set once its directory was fsynced after it was kept.
	durable bool
}

// NewSpares returns an empty set that keeps at most perDir spares in a
// directory and total in all.
func NewSpares(perDir, total int) *Spares {
	return &Spares{byDir: map[string][]spare{}, perDir: perDir, total: total}
}

// Keep takes over the file that t left under its temp name (see Left) as a
// spare of t's directory, and reports whether it did. When the set is
// full, or t left nothing, it does nothing and reports false: the caller
// removes the file as before. Either way the caller still releases t's
// directory.
func (s *Spares) Keep(t *Temp) bool {
	if s == nil || !t.Left() || t.dir == nil || t.spared {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := s.byDir[t.dirPath]
	if s.count >= s.total || len(names) >= s.perDir {
		return false
	}
	for _, f := range []**os.File{&t.unsynced, &t.empty} {
		if *f != nil {
			_ = (*f).Close()
			*f = nil
		}
	}
	s.seq++
	s.byDir[t.dirPath] = append(names, spare{name: t.tmp, seq: s.seq})
	s.count++
	t.spared = true
	return true
}

// Mark returns what Synced needs to know which spares an fsync of a
// directory covers: take it before the fsync starts.
func (s *Spares) Mark() uint64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Synced records that the directory at path was fsynced, the fsync having
// started after Mark returned mark: the spares kept by then have left
// their former names durably and may be refilled.
func (s *Spares) Synced(path string, mark uint64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, sp := range s.byDir[path] {
		if sp.seq <= mark {
			s.byDir[path][i].durable = true
		}
	}
}

// pop takes a durable spare of the directory at path, if any.
func (s *Spares) pop(path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	spares := s.byDir[path]
	for i := len(spares) - 1; i >= 0; i-- {
		if !spares[i].durable {
			continue
		}
		name := spares[i].name
		spares = slices.Delete(spares, i, i+1)
		if len(spares) == 0 {
			delete(s.byDir, path)
		} else {
			s.byDir[path] = spares
		}
		s.count--
		return name, true
	}
	return "", false
}

// Len is the number of spares kept.
func (s *Spares) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// CreateTempAt is the package's CreateTempAt, refilling a spare of dir when
// one is kept.
func (s *Spares) CreateTempAt(dir *os.File, name string, io IO) (*Temp, error) {
	t, f, err := s.createTemp(dir, name, io)
	if err != nil {
		return nil, err
	}
	t.empty = f
	return t, nil
}

// WriteTempAtUnsynced is the package's WriteTempAtUnsynced, refilling a
// spare of dir when one is kept.
func (s *Spares) WriteTempAtUnsynced(dir *os.File, name string, data []byte, perm os.FileMode, io IO) (*Temp, error) {
	t, f, err := s.createTemp(dir, name, io)
	if err != nil {
		return nil, err
	}
	if err := t.fill(f, data, perm, false); err != nil {
		return nil, err
	}
	return t, nil
}

// createTemp refills a spare of dir for name, or creates a temp file when
// none can be refilled.
func (s *Spares) createTemp(dir *os.File, name string, io IO) (*Temp, *os.File, error) {
	if s != nil {
		for {
			spare, ok := s.pop(dir.Name())
			if !ok {
				break
			}
			t, f, err := refill(dir, spare, name, io)
			if err == nil {
				return t, f, nil
			}
			_ = unix.Unlinkat(int(dir.Fd()), spare, 0)
		}
	}
	return createTemp(dir, name, io)
}

// errNotSpare says that a spare is no longer the file this process kept.
var errNotSpare = errors.New("not a spare this process can refill")

// refill empties the spare in dir and renames it to a new temp name for
// name, returning it open for writing.
func refill(dir *os.File, spare, name string, io IO) (*Temp, *os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), spare, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err == nil && (st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 || st.Uid != uint32(os.Geteuid())) {
		err = errNotSpare
	}
	if err != nil {
		_ = unix.Close(fd)
		return nil, nil, err
	}
	tmp, err := renameSpare(dir, spare, name)
	if err != nil {
		_ = unix.Close(fd)
		return nil, nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), tmp))
	t := &Temp{dir: dir, dirPath: dir.Name(), tmp: tmp, target: name, io: io}
	if st.Mode&0o7777 != 0o600 {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err != nil {
		_ = f.Close()
		t.Discard()
		return nil, nil, err
	}
	return t, f, nil
}

// renameSpare renames the spare in dir to a new temp name for name, which
// it returns.
func renameSpare(dir *os.File, spare, name string) (string, error) {
	for range 100 {
		tmp := tempName(name)
		err := unix.Renameat2(int(dir.Fd()), spare, int(dir.Fd()), tmp, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", &os.LinkError{Op: "rename", Old: filepath.Join(dir.Name(), spare), New: filepath.Join(dir.Name(), tmp), Err: err}
		}
		return tmp, nil
	}
	return "", fmt.Errorf("writing %s: no free temp name", filepath.Join(dir.Name(), name))
}

// Drain removes every spare kept, through unlink (given each one's path),
// and empties the set.
func (s *Spares) Drain(unlink func(path string)) {
	s.mu.Lock()
	byDir := s.byDir
	s.byDir, s.count = map[string][]spare{}, 0
	s.mu.Unlock()
	for dir, spares := range byDir {
		for _, sp := range spares {
			unlink(filepath.Join(dir, sp.name))
		}
	}
}

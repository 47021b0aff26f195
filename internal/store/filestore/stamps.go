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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// File stamps are a cache, as git's index is, of which object files hold
// exactly a version the store wrote: for each, the file's inode, size and
// status-change time (ctime) when it was read and found whole. Any change
// to a file (a write, truncate, chmod, chown, rename over it, a new file)
// sets its ctime to the present, and no system call lets a user set it
// back, so a file whose inode, size and ctime still match its stamp holds
// the content that was checked. A large list, and the hand-edit scan at
// start-up, then skip reading it: the list decodes the object from its
// journal entry, the scan knows it needs no adoption. A file changed within
// stampSettle of being read is not stamped, since the clock that stamps a
// change can lag the present by a tick: its next change could carry the
// same ctime. Every stamp is checked against the file; the cache is kept
// whole by a checksum, and a stamps file that is missing, damaged or
// stale only costs the reads it would have saved.

// stampsPrefix begins the name of a kind's stamps file in the store
// directory: ".stamps-hooks".
const stampsPrefix = ".stamps-"

// stampsHeader is the first line of a stamps file.
const stampsHeader = "# tether file stamps v1 (namespace/name resourceVersion inode size ctime-ns): a cache; deleting it is safe\n"

// stampsTrailer begins the last line, the sha256 of everything before it.
const stampsTrailer = "# sha256 "

// maxStampsBytes bounds the stamps file read: about a million objects.
const maxStampsBytes = 128 << 20

// defaultStampSettle is how long ago a file must have last changed to be
// stamped: far more than the clock tick that stamps a change.
const defaultStampSettle = time.Second

// fileStamp is one object file as last found to hold the store's version
// rv of its object.
type fileStamp struct {
	rv    uint64
	ino   uint64
	size  int64
	ctime int64
}

// stampSet maps "namespace/name" to the stamp of the object's file.
type stampSet map[string]fileStamp

// stampOf returns the stamp of the file that fi describes, holding rv.
func stampOf(fi os.FileInfo, rv uint64) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{rv: rv, ino: st.Ino, size: st.Size, ctime: st.Ctim.Nano()}, true
}

// encodeStamps returns set as a stamps file, in key order.
func encodeStamps(set stampSet) []byte {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, len(stampsHeader)+len(keys)*64+80)
	b = append(b, stampsHeader...)
	for _, k := range keys {
		st := set[k]
		b = append(b, k...)
		for _, n := range []uint64{st.rv, st.ino, uint64(st.size), uint64(st.ctime)} {
			b = append(b, ' ')
			b = strconv.AppendUint(b, n, 10)
		}
		b = append(b, '\n')
	}
	sum := sha256.Sum256(b)
	b = append(b, stampsTrailer...)
	b = hex.AppendEncode(b, sum[:])
	return append(b, '\n')
}

// decodeStamps parses a stamps file. A file without its header, or whose
// checksum does not hold (torn, edited, of another version), yields
// nothing; so does a line that does not parse, with the rest kept.
func decodeStamps(data []byte) stampSet {
	if !bytes.HasPrefix(data, []byte(stampsHeader)) {
		return nil
	}
	i := bytes.LastIndex(data, []byte(stampsTrailer))
	if i < 0 || !bytes.HasSuffix(data, []byte("\n")) {
		return nil
	}
	want, err := hex.DecodeString(string(data[i+len(stampsTrailer) : len(data)-1]))
	if sum := sha256.Sum256(data[:i]); err != nil || !bytes.Equal(want, sum[:]) {
		return nil
	}
	set := stampSet{}
	for _, line := range bytes.Split(data[len(stampsHeader):i], []byte("\n")) {
		fields := bytes.Fields(line)
		if len(fields) != 5 || bytes.Count(fields[0], []byte("/")) != 1 {
			continue
		}
		var n [4]uint64
		ok := true
		for j := range n {
			n[j], err = strconv.ParseUint(string(fields[j+1]), 10, 64)
			ok = ok && err == nil
		}
		if ok && n[2] <= 1<<62 && n[3] <= 1<<62 {
			set[string(fields[0])] = fileStamp{rv: n[0], ino: n[1], size: int64(n[2]), ctime: int64(n[3])}
		}
	}
	return set
}

// stampsPath is the stamps file of r.
func (s *objectFiles) stampsPath(r *resource) string {
	return filepath.Join(s.dir, stampsPrefix+r.plural)
}

// loadStamps reads r's stamps file, through no symbolic link; a stamps
// file that cannot be read or does not decode is an empty cache.
func (s *objectFiles) loadStamps(r *resource) stampSet {
	f, err := s.openBeneath(s.stampsPath(r), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxStampsBytes {
		return nil
	}
	data, err := readAllLimited(f, make([]byte, 0, fi.Size()+1), maxStampsBytes+1)
	if err != nil {
		return nil
	}
	return decodeStamps(data)
}

// saveStamps replaces r's stamps file with set. It is a cache: a failure
// (a full disk, a read-only store) is logged, and costs only reads later.
func (s *objectFiles) saveStamps(r *resource, set stampSet) {
	if err := atomicfs.WriteFile(s.stampsPath(r), encodeStamps(set), 0o600); err != nil {
		s.log.V(1).Info("the file stamps were not saved; lists read every file until they are", "file", s.stampsPath(r), "error", err.Error())
	}
}

// stampHolds tells whether the file at path is still the file st stamped:
// a regular file of this user, with the same inode, size and ctime.
func (s *objectFiles) stampHolds(st fileStamp, path string) bool {
	// syscall.Lstat, not os.Lstat: a large list looks at every file, and
	// a FileInfo each would be garbage among the objects it keeps.
	var now syscall.Stat_t
	if err := syscall.Lstat(path, &now); err != nil {
		return false
	}
	regular := now.Mode&syscall.S_IFMT == syscall.S_IFREG && int(now.Uid) == os.Geteuid() && now.Size <= maxFileBytes
	return regular && (fileStamp{rv: st.rv, ino: now.Ino, size: now.Size, ctime: now.Ctim.Nano()}) == st
}

// stamped tells whether the file at path, of object namespace/name, is
// as its stamp in stamps found it: a version the store wrote, which needs
// no adoption.
func (s *objectFiles) stamped(stamps stampSet, namespace, name, path string) bool {
	st, ok := stamps[namespace+"/"+name]
	return ok && s.stampHolds(st, path)
}

// stampsChangedEnough tells whether a list that stamped fresh files anew
// and dropped dropped stamps out of total should rewrite the stamps file:
// not for a few, which the next start reads again at little cost.
func stampsChangedEnough(fresh, dropped, total int) bool {
	changed := fresh + dropped
	return changed > 0 && (changed >= 64 || changed*16 >= total)
}

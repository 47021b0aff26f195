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
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// The owner index tells the garbage collector which objects name an owner's
// uid in their ownerReferences, so that deleting an object costs in
// proportion to its dependents, not to the store. It is derived from the
// journal, which every write and every adopted hand edit goes through, and
// is never trusted blindly:
//
//   - it records the journal it covers: the file's inode, the offset up to
//     which it was read, and the sha256 of the line that ends there; a
//     journal compacted, replaced, truncated or rewritten since no longer
//     matches, and the index is built anew from the whole journal;
//   - the entries appended since that offset are read at every use, so the
//     index is never behind the journal; it is saved again (atomically,
//     fsynced) only when they amount to ownersSaveAfter bytes;
//   - the file ends with the sha256 of its content: a torn, truncated,
//     edited or missing file is rebuilt;
//   - a corrupt journal line in what it covers could have held anyone's
//     owner reference, so such an index is marked lossy and the collector
//     lists every object instead, until compaction drops the line;
//   - every dependent it names is read, with its hand edit adopted, and
//     deleted only if its ownerReferences still name the owner's uid.
//
// A hand edit not yet adopted is not in the journal: when it is adopted,
// an object whose edit added owner references that all name absent owners
// is collected then (see collectIfOrphanedLocked), as Kubernetes'
// collector deletes a dependent whose owners are gone.

// ownersName is the owner index's file in the store directory.
const ownersName = ".owners"

// ownersHeader is the first line of the owner index.
const ownersHeader = "# tether owner index v1 (resource namespace name owner-uid...): derived from the journal; deleting it is safe\n"

// ownersTrailer begins the last line, the sha256 of everything before it.
const ownersTrailer = "# sha256 "

// maxOwnersBytes bounds the owner index read.
const maxOwnersBytes = 256 << 20

// ownersSaveAfter is how many bytes of journal read past the saved index
// make the index worth saving again.
const ownersSaveAfter = 1 << 20

// ownerCache is the owner index as this process last read it, guarded by
// indexMu, with counts of its loads from disk and its rebuilds from the
// whole journal. It reads the journal and the index file, and writes only
// the index file.
type ownerCache struct {
	*objectFiles
	indexMu  sync.Mutex
	index    *ownerIndex
	loads    atomic.Int64
	rebuilds atomic.Int64
}

// ownerIndex maps each object that has owner references, by
// entryKey(resource, namespace, name), to its owners' uids, as of the
// journal up to offset.
type ownerIndex struct {
	ino uint64
	// offset is where the journal was read up to; lineStart is where its
	// last line began, and lineSum that line's sha256 (newline included).
	offset, lineStart int64
	lineSum           [sha256.Size]byte
	// lossy is set when a line it covers did not decode.
	lossy  bool
	owners map[string][]string
	// saved is the offset of the copy on disk.
	saved int64
}

// encodeOwners is the content of the owner index file of ix.
func encodeOwners(ix *ownerIndex) []byte {
	var b bytes.Buffer
	b.WriteString(ownersHeader)
	lossy := 0
	if ix.lossy {
		lossy = 1
	}
	fmt.Fprintf(&b, "journal %d %d %d %s %d\n", ix.ino, ix.lineStart, ix.offset, hex.EncodeToString(ix.lineSum[:]), lossy)
	keys := make([]string, 0, len(ix.owners))
	for k := range ix.owners {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		resource, rest, _ := strings.Cut(k, "/")
		ns, name, _ := strings.Cut(rest, "/")
		if ns == "" {
			ns = "-"
		}
		fmt.Fprintf(&b, "%s %s %s %s\n", resource, ns, name, strings.Join(ix.owners[k], " "))
	}
	sum := sha256.Sum256(b.Bytes())
	b.WriteString(ownersTrailer + hex.EncodeToString(sum[:]) + "\n")
	return b.Bytes()
}

// decodeOwners parses an owner index file; nil for anything but one the
// store wrote, whole.
func decodeOwners(data []byte) *ownerIndex {
	body, trailer, ok := cutLastLine(data)
	if !ok || !bytes.HasPrefix(trailer, []byte(ownersTrailer)) {
		return nil
	}
	sum := sha256.Sum256(body)
	if string(trailer[len(ownersTrailer):]) != hex.EncodeToString(sum[:])+"\n" || !bytes.HasPrefix(body, []byte(ownersHeader)) {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(body[len(ownersHeader):]), "\n"), "\n")
	if len(lines) == 0 {
		return nil
	}
	ix := &ownerIndex{owners: map[string][]string{}}
	var sumHex string
	var lossy int
	if n, err := fmt.Sscanf(lines[0], "journal %d %d %d %s %d", &ix.ino, &ix.lineStart, &ix.offset, &sumHex, &lossy); n != 5 || err != nil {
		return nil
	}
	if s, err := hex.DecodeString(sumHex); err != nil || len(s) != sha256.Size || ix.lineStart < 0 || ix.offset < ix.lineStart {
		return nil
	} else {
		copy(ix.lineSum[:], s)
	}
	ix.lossy, ix.saved = lossy != 0, ix.offset
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil
		}
		if f[1] == "-" {
			f[1] = ""
		}
		ix.owners[entryKey(f[0], f[1], f[2])] = f[3:]
	}
	return ix
}

// cutLastLine splits data before its last line.
func cutLastLine(data []byte) (body, last []byte, ok bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, nil, false
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n')
	return data[:i+1], data[i+1:], true
}

// loadOwners reads the owner index file, through no symbolic link; nil
// when there is none or it is not whole.
func (s *ownerCache) loadOwners() *ownerIndex {
	f, err := s.openBeneath(filepath.Join(s.dir, ownersName), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxOwnersBytes {
		return nil
	}
	data, err := readAllLimited(f, make([]byte, 0, fi.Size()+1), maxOwnersBytes+1)
	if err != nil {
		return nil
	}
	return decodeOwners(data)
}

// ownersFor returns the owner index as of the journal's end: the one this
// process holds or the saved one, when it still matches the journal, read
// on from where it ends; else one built from the whole journal. It returns
// nil when the journal cannot be read. The caller holds a store lock,
// under which the journal only grows, and ownersMu, which guards the index
// (deletions under the shared lock read and extend it side by side).
func (s *ownerCache) ownersFor() *ownerIndex {
	f, err := s.openBeneath(s.journal.path, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	size := s.journal.journalEnd(fi.Size())
	ino := inodeOf(fi)
	ix := s.index
	if !ix.matches(f, ino, size) {
		ix = s.loadOwners()
		s.loads.Add(1)
		if !ix.matches(f, ino, size) {
			ix = &ownerIndex{ino: ino, owners: map[string][]string{}}
			s.rebuilds.Add(1)
		}
	}
	if err := ix.readOn(f, size); err != nil {
		s.index = nil
		return nil
	}
	s.index = ix
	if ix.offset-ix.saved >= ownersSaveAfter || ix.saved == 0 && ix.offset > 0 {
		if err := atomicfs.WriteFile(filepath.Join(s.dir, ownersName), encodeOwners(ix), 0o600); err != nil {
			s.log.V(1).Info("the owner index was not saved; deletions read the journal until it is", "file", filepath.Join(s.dir, ownersName), "error", err.Error())
		} else {
			ix.saved = ix.offset
		}
	}
	return ix
}

// matches tells whether ix covers a prefix of the journal f, of inode ino
// and size bytes: the line it ends with is still there, unchanged.
func (ix *ownerIndex) matches(f *os.File, ino uint64, size int64) bool {
	if ix == nil || ix.ino != ino || ix.offset > size {
		return false
	}
	if ix.offset == 0 {
		return true
	}
	if ix.offset-ix.lineStart > maxObjectBytes*4 {
		return false
	}
	line := make([]byte, ix.offset-ix.lineStart)
	if _, err := f.ReadAt(line, ix.lineStart); err != nil {
		return false
	}
	return sha256.Sum256(line) == ix.lineSum
}

// ownerRefsTree projects an object to its owner references.
var ownerRefsTree = fieldTree{"metadata": fieldTree{"ownerReferences": nil}}

// readOn reads the journal f from ix.offset to size, updating ix with each
// complete line.
func (ix *ownerIndex) readOn(f *os.File, size int64) error {
	var buf []byte
	for ix.offset < size {
		held := len(buf)
		want := int(min(size-ix.offset-int64(held), journalReadChunk))
		if want <= 0 {
			break
		}
		buf = slices.Grow(buf, want)
		n, err := f.ReadAt(buf[held:held+want], ix.offset+int64(held))
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if n == 0 {
			break
		}
		buf = buf[:held+n]
		consumed := 0
		for {
			i := bytes.IndexByte(buf[consumed:], '\n')
			if i < 0 {
				break
			}
			line := buf[consumed : consumed+i+1]
			ix.add(line[:len(line)-1])
			ix.lineStart = ix.offset
			ix.lineSum = sha256.Sum256(line)
			ix.offset += int64(len(line))
			consumed += i + 1
		}
		buf = append(buf[:0], buf[consumed:]...)
	}
	return nil
}

// add applies one journal line to ix.
func (ix *ownerIndex) add(line []byte) {
	e, err := entryHead(line)
	if err != nil {
		ix.lossy = true
		return
	}
	if e.RV == 0 {
		return // a compaction header
	}
	key := entryKey(e.Resource, e.Namespace, e.Name)
	if e.Type == Deleted {
		delete(ix.owners, key)
		return
	}
	// Decoded, not searched for the text: an object that does not decode
	// could hide owner references, which its file then holds.
	m, err := project(e.Object, ownerRefsTree)
	if err != nil {
		ix.lossy = true
		return
	}
	var uids []string
	meta, _ := m["metadata"].(map[string]interface{})
	refs, _ := meta["ownerReferences"].([]interface{})
	for _, ref := range refs {
		r, _ := ref.(map[string]interface{})
		uid, _ := r["uid"].(string)
		if uid == "" {
			continue
		}
		if strings.ContainsFunc(uid, func(c rune) bool { return c <= ' ' || c >= 0x7f }) {
			// Not a uid the index can write: the collector lists instead.
			ix.lossy = true
			continue
		}
		uids = append(uids, uid)
	}
	if len(uids) == 0 {
		delete(ix.owners, key)
		return
	}
	ix.owners[key] = uids
}

// dependentKey is an object the owner index names as a dependent.
type dependentKey struct{ resource, namespace, name string }

// dependentsOf returns the objects in namespace whose ownerReferences name
// uid, by the index; false when the index cannot tell (the journal cannot
// be read, or a line of it did not decode).
func (s *ownerCache) dependentsOf(uid, namespace string) ([]dependentKey, bool) {
	s.indexMu.Lock()
	defer s.indexMu.Unlock()
	var ix *ownerIndex
	if err := s.withReadLock(func() error {
		ix = s.ownersFor()
		return nil
	}); err != nil || ix == nil || ix.lossy {
		return nil, false
	}
	var out []dependentKey
	for key, uids := range ix.owners {
		if !slices.Contains(uids, uid) {
			continue
		}
		resource, rest, _ := strings.Cut(key, "/")
		ns, name, _ := strings.Cut(rest, "/")
		if ns == namespace {
			out = append(out, dependentKey{resource, ns, name})
		}
	}
	slices.SortFunc(out, func(a, b dependentKey) int {
		return strings.Compare(a.resource+"/"+a.name, b.resource+"/"+b.name)
	})
	return out, true
}

// ownersStats counts, for tests, the owner index's loads from disk and
// rebuilds from the whole journal.
func (s *ownerCache) ownersStats() (loads, rebuilds int64) {
	return s.loads.Load(), s.rebuilds.Load()
}

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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/go-logr/logr"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// EventType is the type of a journal entry, as in a Kubernetes watch.
type EventType string

// The journal entry types.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// entry is one line of the journal: a committed mutation with the full
// object after it (for a deletion, the last state).
type entry struct {
	// Compacted, only on a compaction header line, is the newest
	// resourceVersion no longer in the journal.
	Compacted uint64 `json:"compacted,omitempty"`
	// Live, only on a compaction header line, is the size in bytes of the
	// journal that compaction wrote: what the store held then. The next
	// compaction waits until the journal has grown to twice that, so that
	// compacting costs in proportion to what was written since, not to
	// what is stored.
	Live      int64     `json:"live,omitempty"`
	RV        uint64    `json:"rv,omitempty"`
	Type      EventType `json:"type,omitempty"`
	Resource  string    `json:"resource,omitempty"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name,omitempty"`
	// Group is the entry's place in its group commit: 0 for the first (or
	// only) entry, n for the entry n after it. A writer killed during a
	// group commit may leave every entry of its group unapplied, so the
	// roll-forward reads back by whole groups (see committer.rollForward).
	Group int `json:"group,omitempty"`
	// Object stays the last field: entryHead slices it out of a line
	// without scanning it.
	Object json.RawMessage `json:"object,omitempty"`

	// corrupt is set, by a journalReader only, for a line that does not decode.
	corrupt *corruptLine
}

// journal is the store's append-only log of committed mutations. It gives
// the store-wide monotonic resourceVersion, lets watches resume from a
// resourceVersion, and makes a write durable before its object file is
// replaced, so a crash in between is rolled forward.
type journal struct {
	path string
	f    *os.File
	// open opens the journal file anew, after a compaction replaced it.
	open func() (*os.File, error)
	// io makes the appends and fsyncs.
	io atomicfs.IO
	// broken is set when a failed append could not be taken back: the
	// journal refuses appends until the cut is made (see cutVoid).
	broken error
	// layout opens the journal's files, through no symbolic link.
	layout *layout
	log    logr.Logger
	// markFile is the lock file, open read-only, for reading the void
	// mark; nil for a journal without marks.
	markFile *os.File
	// lock is the lock file while the write lock is held, nil otherwise;
	// it holds the resourceVersion mark and the void mark.
	lock *os.File
	// onCorrupt, when set, is told of each corrupt line found.
	onCorrupt func(*corruptLine)

	// tailMu guards the tail cache, which concurrent readers (under the
	// shared lock) fill too.
	tailMu sync.Mutex
	// tail is the last complete entry of f when f had tailSize bytes and
	// modification time tailMod, as this process last appended or read it.
	// Entries are only ever appended to f, and only a torn, incomplete line
	// is ever cut off its end; a compaction writes a new file, which
	// refresh and compact open anew (and reset tail). So while f still has
	// tailSize bytes it holds the same entries, and tail is still its last.
	tail     *entry
	tailSize int64
	tailMod  time.Time
	// recent holds, under tailMu, the newest entry this process appended
	// for each of the last recentLimit objects it wrote, so that reading
	// one back decodes the entry's JSON rather than the file's YAML
	// (objectFiles.fromJournal). recentKeys orders them, oldest first. A
	// resourceVersion is issued once, so an entry names one content of
	// its object's file for ever; only an entry taken back (rollback, a
	// void cut, a torn line cut off) may see its resourceVersion issued
	// again, and those clear recent.
	recent     map[string]*entry
	recentKeys []string

	// liveInode is the inode of the journal file whose compaction header
	// gave live (see entry.Live); 0 when none was read yet.
	liveInode uint64
	live      int64
}

// recentLimit bounds journal.recent: the objects a process wrote last are
// the ones it reads back (an update after a create, a reconcile after its
// own write, a watch event).
const recentLimit = 128

// entryKey names the object of e in journal.recent.
func entryKey(resource, namespace, name string) string {
	return resource + "/" + namespace + "/" + name
}

// rememberRecent keeps e, just appended, in recent.
func (j *journal) rememberRecent(e *entry) {
	j.tailMu.Lock()
	defer j.tailMu.Unlock()
	key := entryKey(e.Resource, e.Namespace, e.Name)
	if e.Type == Deleted || e.RV == 0 {
		if _, ok := j.recent[key]; ok {
			delete(j.recent, key)
			j.recentKeys = slices.DeleteFunc(j.recentKeys, func(k string) bool { return k == key })
		}
		return
	}
	if j.recent == nil {
		j.recent = map[string]*entry{}
	}
	if _, ok := j.recent[key]; !ok {
		j.recentKeys = append(j.recentKeys, key)
		if len(j.recentKeys) > recentLimit {
			delete(j.recent, j.recentKeys[0])
			j.recentKeys = append([]string(nil), j.recentKeys[1:]...)
		}
	}
	j.recent[key] = e
}

// recentEntry returns the entry recent holds for an object, or nil.
func (j *journal) recentEntry(resource, namespace, name string) *entry {
	j.tailMu.Lock()
	defer j.tailMu.Unlock()
	return j.recent[entryKey(resource, namespace, name)]
}

// forgetRecent empties recent, when entries were taken back.
func (j *journal) forgetRecent() {
	j.tailMu.Lock()
	defer j.tailMu.Unlock()
	j.recent, j.recentKeys = nil, nil
}

// openJournal opens the store's journal, through no symbolic link.
// markFile, the lock file open read-only, is the journal's from then on.
func (s *layout) openJournal(markFile *os.File) (*journal, error) {
	j := &journal{path: filepath.Join(s.dir, journalName), io: s.io, layout: s, log: s.log, markFile: markFile}
	j.open = func() (*os.File, error) {
		f, err := s.openBeneath(j.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
		if readOnlyErr(err) {
			// A store that cannot be written still serves reads; an append
			// then fails with the filesystem's error.
			f, err = s.openBeneath(j.path, os.O_RDONLY, 0)
		}
		return f, err
	}
	f, err := j.open()
	if err != nil {
		return nil, err
	}
	j.f = f
	return j, nil
}

func (j *journal) close() error {
	if j.markFile != nil {
		_ = j.markFile.Close()
	}
	return j.f.Close()
}

// append writes e as one line and fsyncs it. The caller holds the write
// lock. When either fails, the journal is cut back to its size before the
// append (see rollback), so a failed append never takes effect. When the
// cut fails too, the entry is marked void (see writeVoid).
func (j *journal) append(e *entry) error {
	if j.broken != nil {
		return j.broken
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	j.forgetTail()
	before, err := j.size()
	if err != nil {
		return err
	}
	if _, err := j.io.Write(j.f, line); err != nil {
		return errors.Join(err, j.rollback(before))
	}
	if err := j.io.Sync(j.f); err != nil {
		return errors.Join(err, j.rollback(before))
	}
	last := *e
	last.Object = append(json.RawMessage(nil), e.Object...)
	j.rememberRecent(&last)
	if fi, err := j.f.Stat(); err == nil {
		j.rememberTail(&last, fi)
	}
	return nil
}

// appendUnsynced writes e as one line without fsyncing it, for a group
// commit, which fsyncs the journal once for all its entries (see sync). It
// returns the journal's size before the line. The caller holds the write
// lock. A failed write is cut back at once.
func (j *journal) appendUnsynced(e *entry) (int64, error) {
	if j.broken != nil {
		return 0, j.broken
	}
	line, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	line = append(line, '\n')
	j.forgetTail()
	before, err := j.size()
	if err != nil {
		return 0, err
	}
	if _, err := j.io.Write(j.f, line); err != nil {
		return 0, errors.Join(err, j.rollback(before))
	}
	last := *e
	last.Object = append(json.RawMessage(nil), e.Object...)
	j.rememberRecent(&last)
	if fi, err := j.f.Stat(); err == nil {
		j.rememberTail(&last, fi)
	}
	return before, nil
}

// sync fsyncs the journal, making the entries written by appendUnsynced
// durable. After a failure the caller rolls the journal back (see
// rollback), never retrying the fsync.
func (j *journal) sync() error { return j.io.Sync(j.f) }

// lastGroups returns the entries of the newest n group commits, oldest
// first (see entry.Group). The caller holds the write lock, after repairTail.
func (j *journal) lastGroups(n int) ([]*entry, error) {
	last, err := j.lastEntry()
	if err != nil || last == nil {
		return nil, err
	}
	group := []*entry{last}
	if last.Group == 0 {
		n--
	}
	if n == 0 {
		return group, nil
	}
	fi, err := j.f.Stat()
	if err != nil {
		return nil, err
	}
	top, err := lastNewline(j.f, fi.Size()-1)
	if err != nil {
		return nil, err
	}
	for n > 0 && top > 0 {
		start, err := lastNewline(j.f, top-1)
		if err != nil {
			return nil, err
		}
		line := make([]byte, top-start)
		if _, err := j.f.ReadAt(line, start); err != nil {
			return nil, err
		}
		top = start
		e := &entry{}
		if json.Unmarshal(line, e) != nil || e.RV == 0 {
			break
		}
		if e.RV >= group[len(group)-1].RV {
			continue // the newest entry itself, when a corrupt line follows it
		}
		group = append(group, e)
		if e.Group == 0 {
			n--
		}
	}
	slices.Reverse(group)
	return group, nil
}

// rollback cuts the journal back to size, taking back the entries of a
// write that failed, and makes that durable. After a failed fsync the
// kernel may have dropped the unwritten pages and will not report it
// again on that descriptor (fsyncgate), so the fsync is never retried
// there: the journal is opened anew and the cut fsynced through the new
// descriptor. When even that fails, the journal refuses every later
// append: an entry that might still be on disk must not be followed by
// others.
func (j *journal) rollback(size int64) error {
	j.forgetTail()
	j.forgetRecent()
	err := func() error {
		f, err := j.open()
		if err != nil {
			return err
		}
		if err := j.truncate(f, size); err != nil {
			_ = f.Close()
			return err
		}
		if err := j.io.Sync(f); err != nil {
			_ = f.Close()
			return err
		}
		_ = j.f.Close()
		j.f = f
		return nil
	}()
	if err != nil {
		if j.markFile == nil {
			j.broken = fmt.Errorf("%s: a failed write could not be taken back (%w); the store refuses writes until it is opened again", j.path, err)
			return j.broken
		}
		if merr := j.writeVoid(size); merr != nil {
			j.broken = fmt.Errorf("%s: a failed write could not be taken back (%w) nor marked void (%w); the store refuses writes until it is opened again", j.path, err, merr)
			return j.broken
		}
		j.broken = fmt.Errorf("%s: a failed write could not be taken back (%w); it is marked void, and the store refuses writes until the journal can be cut", j.path, err)
		return j.broken
	}
	return nil
}

// cachedTail returns the cached last entry when f is still in the state it
// was cached for (see journal.tail), or nil.
func (j *journal) cachedTail(fi os.FileInfo) *entry {
	j.tailMu.Lock()
	defer j.tailMu.Unlock()
	if j.tail != nil && fi.Size() == j.tailSize && fi.ModTime().Equal(j.tailMod) {
		return j.tail
	}
	return nil
}

// rememberedTail returns the last entry this process appended or read,
// whether or not the journal has grown since; nil when there is none. Its
// resourceVersion is unique in the store's history all the same.
func (j *journal) rememberedTail() *entry {
	j.tailMu.Lock()
	defer j.tailMu.Unlock()
	return j.tail
}

// rememberTail caches e as the last entry of f in the state fi describes.
func (j *journal) rememberTail(e *entry, fi os.FileInfo) {
	j.tailMu.Lock()
	defer j.tailMu.Unlock()
	j.tail, j.tailSize, j.tailMod = e, fi.Size(), fi.ModTime()
}

// forgetTail drops the cached last entry.
func (j *journal) forgetTail() {
	j.tailMu.Lock()
	defer j.tailMu.Unlock()
	j.tail = nil
}

// repairTail truncates a torn last line, left by a writer killed during an
// append. Such a write was never acknowledged. The caller holds the write lock.
func (j *journal) repairTail() error {
	fi, err := j.f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	if j.cachedTail(fi) != nil {
		return nil // ends with the cached entry's newline
	}
	last := make([]byte, 1)
	if _, err := j.f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	end, err := lastNewline(j.f, fi.Size())
	if err != nil {
		return err
	}
	j.forgetTail()
	j.forgetRecent()
	if err := j.f.Truncate(end); err != nil {
		return err
	}
	return j.f.Sync()
}

// lastNewline returns the offset just past the last '\n' before size, or 0.
// It reads back a few KiB at a time, into a buffer on its stack: an entry
// is a few KiB, and a larger buffer would grow the stack of every writer
// that leads a group commit (see recentDirs) for as long as it lives.
func lastNewline(f *os.File, size int64) (int64, error) {
	const chunk = 4 << 10
	var buf [chunk]byte
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// lastEntry returns the last complete entry, or nil for an empty journal.
// The caller holds the store's lock, shared or exclusive, and must not
// modify the entry.
func (j *journal) lastEntry() (*entry, error) {
	fi, err := j.f.Stat()
	if err != nil {
		return nil, err
	}
	size := j.journalEnd(fi.Size())
	if size != fi.Size() {
		fi = nil // the void entries' file state is never cached
	} else if e := j.cachedTail(fi); e != nil {
		return e, nil
	}
	end, err := lastNewline(j.f, size)
	if err != nil || end == 0 {
		return nil, err
	}
	for top := end; top > 0; {
		start, err := lastNewline(j.f, top-1)
		if err != nil {
			return nil, err
		}
		line := make([]byte, top-start)
		if _, err := j.f.ReadAt(line, start); err != nil {
			return nil, err
		}
		e := &entry{}
		if err := json.Unmarshal(line, e); err != nil {
			// A corrupt complete line: the newest readable entry before it
			// is the last; the lost line's resourceVersion is covered by
			// the mark of the newest one issued (see rvMark).
			if j.onCorrupt != nil {
				j.onCorrupt(&corruptLine{offset: start, err: err})
			}
			top = start
			continue
		}
		if fi != nil && top == fi.Size() {
			j.rememberTail(e, fi)
		}
		return e, nil
	}
	return nil, nil
}

// lastRV returns the newest resourceVersion the journal knows.
func (j *journal) lastRV() (uint64, error) {
	e, err := j.lastEntry()
	if err != nil || e == nil {
		return 0, err
	}
	if e.RV == 0 {
		return e.Compacted, nil
	}
	return e.RV, nil
}

// journalReader reads complete entries from an offset onwards. A torn last
// line is left unread until it is completed or truncated away. A complete
// line that does not decode (a corrupt line) is returned as an entry with
// corrupt set, so that the reader's user can tell whether it may have
// missed a change.
type journalReader struct {
	f *os.File
	// resource, when set, is the only resource whose entries after the
	// reader's resourceVersion are decoded whole; the objects of others'
	// are left out, as a watch of one kind needs only their keys.
	resource string
	// end caps the readable size at the void mark (see journalEnd).
	end    func(size int64) int64
	offset int64
	buf    []byte
}

// corruptLine is what a journal reader knows of a line it cannot decode.
type corruptLine struct {
	offset int64
	err    error
}

func (c *corruptLine) problem(path string) Problem {
	return Problem{Path: path, Reason: fmt.Sprintf("the line at byte %d is corrupt (%v); it is skipped, and watches that may have missed it start over from a new list", c.offset, c.err),
		Fix: "nothing to do: the object files hold every object; compaction drops the line"}
}

// newJournalReader opens a reader of the journal, decoding whole only the
// entries of resource when it is given (see journalReader.resource).
func (j *journal) newJournalReader(resource string) (*journalReader, error) {
	f, err := j.layout.openBeneath(j.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return &journalReader{f: f, resource: resource, end: j.journalEnd}, nil
}

func (r *journalReader) close() error { return r.f.Close() }

// next returns the complete entries appended since the last call.
func (r *journalReader) next() ([]entry, error) { return r.nextAfter(0, true) }

// journalReadChunk bounds what a journalReader reads at a time: a watch
// starting on a long journal reads all of it, and would otherwise hold a
// copy of it.
const journalReadChunk = 256 << 10

// journalKeptBuffer bounds the buffer a journalReader keeps between reads,
// beyond a torn last line: once started, a watch reads the few entries of
// each change, and a buffer grown by one long read would stay with each
// watch for its whole life.
const journalKeptBuffer = 32 << 10

// nextAfter is next for a reader that needs only the key fields of the
// entries up to resourceVersion after, as a watch does: their objects are
// sliced out undecoded (entryHead), which saves decoding a long journal
// for a watch that starts at its end, and are kept only with keepOld (a
// selective watch learns from them which objects matched).
func (r *journalReader) nextAfter(after uint64, keepOld bool) ([]entry, error) {
	fi, err := r.f.Stat()
	if err != nil {
		return nil, err
	}
	size := r.end(fi.Size())
	if size < r.offset {
		// Truncated: only a torn, never acknowledged tail can be cut off.
		r.offset = size
		r.buf = r.buf[:0]
	}
	var out []entry
	for r.offset < size {
		held := len(r.buf)
		want := int(min(size-r.offset, journalReadChunk))
		r.buf = slices.Grow(r.buf, want)
		n, err := r.f.ReadAt(r.buf[held:held+want], r.offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		r.offset += int64(n)
		r.buf = r.buf[:held+n]
		out = r.lines(out, after, keepOld)
		if n == 0 {
			break
		}
	}
	if cap(r.buf) > journalKeptBuffer {
		// A long line or a long read grew it: keep only the torn tail.
		r.buf = bytes.Clone(r.buf)
	}
	return out, nil
}

// seekAfter moves a reader that has read nothing yet to the last readable
// entry whose resourceVersion is at most after, found by bisecting the
// file's bytes, so that a watch resuming from a resourceVersion neither
// reads nor decodes the entries before it: O(log n) lines, not the whole
// journal. The entry it lands on is read again: the watch passes over it,
// and learns from it the resourceVersion before a corrupt line that may
// follow. The reader stays at the start when the compaction header drops
// a resourceVersion after `after` (the read reports it), or when no
// readable entry is that old.
func (r *journalReader) seekAfter(after uint64) error {
	if r.offset != 0 || after == 0 {
		return nil
	}
	fi, err := r.f.Stat()
	if err != nil {
		return err
	}
	size := r.end(fi.Size())
	var scratch []byte
	line, _, err := r.lineAt(0, size, &scratch)
	if err != nil || line == nil {
		return err
	}
	if head, err := entryHead(line); err == nil && head.Compacted > after {
		return nil
	}
	// The first readable entry at or after an offset is no newer than
	// after up to some offset, and newer beyond it: bisect for the last
	// offset where it is not, whose entry is the last one not newer.
	best := int64(-1)
	lo, hi := int64(0), size
	for lo < hi {
		mid := lo + (hi-lo)/2
		start, rv, ok, err := r.readableFrom(mid, size, &scratch)
		if err != nil {
			return err
		}
		if ok && rv <= after {
			best, lo = start, start+1
		} else {
			hi = mid
		}
	}
	if best > 0 {
		r.offset = best
	}
	return nil
}

// readableFrom finds the first complete line starting at or after offset
// that holds a readable entry (one with a resourceVersion), and returns
// its start and resourceVersion; ok is false when there is none before
// size.
func (r *journalReader) readableFrom(offset, size int64, scratch *[]byte) (start int64, rv uint64, ok bool, err error) {
	start = offset
	if offset > 0 {
		// A line starts after the newline before it.
		nl, found, err := r.newlineFrom(offset-1, size, scratch)
		if err != nil || !found {
			return 0, 0, false, err
		}
		start = nl + 1
	}
	for start < size {
		line, end, err := r.lineAt(start, size, scratch)
		if err != nil || line == nil {
			return 0, 0, false, err
		}
		if head, err := entryHead(line); err == nil && head.RV > 0 {
			return start, head.RV, true, nil
		}
		start = end + 1
	}
	return 0, 0, false, nil
}

// lineAt reads the complete line starting at start, without its newline,
// into scratch, and returns it with the newline's offset; the line is nil
// when no newline ends it before size (a torn tail).
func (r *journalReader) lineAt(start, size int64, scratch *[]byte) ([]byte, int64, error) {
	nl, found, err := r.newlineFrom(start, size, scratch)
	if err != nil || !found {
		return nil, 0, err
	}
	buf := slices.Grow((*scratch)[:0], int(nl-start))[:nl-start]
	if _, err := r.f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	*scratch = buf
	return buf, nl, nil
}

// seekReadChunk is what seekAfter reads at a time looking for a newline.
const seekReadChunk = 16 << 10

// newlineFrom returns the offset of the first newline at or after offset
// and before size.
func (r *journalReader) newlineFrom(offset, size int64, scratch *[]byte) (int64, bool, error) {
	buf := slices.Grow((*scratch)[:0], seekReadChunk)[:seekReadChunk]
	*scratch = buf
	for offset < size {
		n := int(min(size-offset, seekReadChunk))
		got, err := r.f.ReadAt(buf[:n], offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		if i := bytes.IndexByte(buf[:got], '\n'); i >= 0 {
			return offset + int64(i), true, nil
		}
		if got == 0 {
			break
		}
		offset += int64(got)
	}
	return 0, false, nil
}

// lines appends to out the entries of the complete lines in r.buf and
// leaves in it only the incomplete last line.
func (r *journalReader) lines(out []entry, after uint64, keepOld bool) []entry {
	consumed := 0
	start := r.offset - int64(len(r.buf))
	for {
		i := bytes.IndexByte(r.buf[consumed:], '\n')
		if i < 0 {
			break
		}
		line := r.buf[consumed : consumed+i]
		if after > 0 || r.resource != "" {
			if head, err := entryHead(line); err == nil && head.RV > 0 {
				old := head.RV <= after
				if old || r.resource != "" && head.Resource != r.resource {
					// r.buf is reused: the entry keeps a copy of its object.
					if old && keepOld {
						head.Object = bytes.Clone(head.Object)
					} else {
						head.Object = nil
					}
					consumed += i + 1
					out = append(out, *head)
					continue
				}
			}
		}
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			e = entry{corrupt: &corruptLine{offset: start + int64(consumed), err: err}}
		}
		consumed += i + 1
		out = append(out, e)
	}
	r.buf = append(r.buf[:0], r.buf[consumed:]...)
	return out
}

// compact rewrites the journal to its newest keep entries plus the newest
// entry of every live object, after a header naming the newest
// resourceVersion dropped. The newest entry of an object is its last valid
// version, which a refused hand edit falls back to. Watches that need a
// dropped resourceVersion get 410 Expired and re-list, as after an etcd
// compaction. The caller holds the write lock.
func (j *journal) compact(keep int) error {
	if j.broken != nil {
		return nil // the void mark names an offset of this file
	}
	data, err := io.ReadAll(io.NewSectionReader(j.f, 0, 1<<62))
	if err != nil {
		return err
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	if len(lines) <= keep {
		return nil
	}
	type keyed struct {
		index   int
		deleted bool
	}
	latest := map[string]keyed{}
	entries := make([]entry, len(lines))
	dropped := make([]bool, len(lines))
	var offset int64
	for i, l := range lines {
		// The key fields are decoded, the object only checked: it is
		// copied as it is.
		e, err := entryHead(bytes.TrimSuffix(l, []byte{'\n'}))
		if err == nil && len(e.Object) > 0 && !json.Valid(e.Object) {
			err = errors.New("the entry's object is not valid JSON")
		}
		if err != nil {
			if j.onCorrupt != nil {
				j.onCorrupt(&corruptLine{offset: offset, err: err})
			}
			dropped[i] = true
			offset += int64(len(l))
			continue
		}
		offset += int64(len(l))
		entries[i] = *e
		if e.RV != 0 {
			latest[e.Resource+"/"+e.Namespace+"/"+e.Name] = keyed{index: i, deleted: e.Type == Deleted}
		}
	}
	kept := make([]bool, len(lines))
	for i := len(lines) - keep; i < len(lines); i++ {
		kept[i] = true
	}
	for _, k := range latest {
		if !k.deleted {
			kept[k.index] = true
		}
	}
	for i := range kept {
		kept[i] = kept[i] && !dropped[i]
	}
	var compacted uint64
	for i, e := range entries {
		if !kept[i] {
			compacted = max(compacted, e.RV, e.Compacted)
		}
	}
	var live int64
	for i, l := range lines {
		if kept[i] {
			live += int64(len(l))
		}
	}
	head, err := json.Marshal(&entry{Compacted: compacted, Live: live})
	if err != nil {
		return err
	}
	out := make([]byte, 0, int64(len(head))+1+live)
	out = append(out, head...)
	out = append(out, '\n')
	for i, l := range lines {
		if kept[i] {
			out = append(out, l...)
		}
	}
	if err := atomicfs.WriteFile(j.path, out, 0o600); err != nil {
		return err
	}
	f, err := j.open()
	if err != nil {
		return err
	}
	j.forgetTail()
	_ = j.f.Close()
	j.f = f
	return nil
}

// compactedLive is the Live of the journal file's compaction header: the
// size of the journal the last compaction wrote, 0 when it has no header.
// It is read once per file: a compaction writes a new one.
func (j *journal) compactedLive() int64 {
	ino := fileInode(j.f)
	if ino != 0 && ino == j.liveInode {
		return j.live
	}
	buf := make([]byte, 256)
	n, _ := j.f.ReadAt(buf, 0)
	live := int64(0)
	if line, _, ok := bytes.Cut(buf[:n], []byte{'\n'}); ok && bytes.HasPrefix(line, []byte(`{"compacted":`)) {
		var head entry
		if json.Unmarshal(line, &head) == nil && head.Live > 0 {
			live = head.Live
		}
	}
	j.liveInode, j.live = ino, live
	return live
}

// size returns the journal's current size in bytes.
func (j *journal) size() (int64, error) {
	fi, err := j.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// refresh reopens the journal when another process replaced it by a
// compaction, so that appends never go to an unlinked file. The caller
// holds the write lock.
func (j *journal) refresh() error {
	if fileInodeAt(j.path) == fileInode(j.f) {
		return nil
	}
	f, err := j.open()
	if err != nil {
		return err
	}
	j.forgetTail()
	_ = j.f.Close()
	j.f = f
	return nil
}

// objectKey separates an entry's key fields from its object. json.Marshal
// writes entry's fields in declaration order with object last, and no key
// field (a DNS-1123 name, a plural) can hold this text.
var objectKey = []byte(`,"object":`)

// entryHead decodes an entry's key fields and slices out its object
// without scanning the object, which readFromJournal decodes (and so
// validates) only for the objects a list returns.
func entryHead(line []byte) (*entry, error) {
	i := bytes.Index(line, objectKey)
	if i < 0 || line[len(line)-1] != '}' {
		e := &entry{}
		return e, json.Unmarshal(line, e)
	}
	e, ok := parseKeys(line[:i])
	if !ok {
		e = &entry{}
		if err := json.Unmarshal(append(line[:i:i], '}'), e); err != nil {
			return nil, err
		}
	}
	e.Object = line[i+len(objectKey) : len(line)-1]
	return e, nil
}

// parseKeys decodes the key fields of an entry as json.Marshal writes
// them, from the opening brace up to the object, reflection-free: a list
// or a watch reads every line of a long journal's head. It answers false
// for anything else (another field order, an escape, a number
// encoding/json would refuse or round), which the caller decodes with
// encoding/json instead.
func parseKeys(head []byte) (*entry, bool) {
	k, ok := scanKeys(head)
	if !ok {
		return nil, false
	}
	return &entry{Compacted: k.compacted, RV: k.rv, Group: k.group, Type: EventType(k.typ),
		Resource: string(k.resource), Namespace: string(k.namespace), Name: string(k.name)}, true
}

// entryKeys are an entry's key fields, the text ones as slices of its line.
type entryKeys struct {
	compacted, rv                  uint64
	group                          int
	typ, resource, namespace, name []byte
}

// keysOf returns the key fields of e.
func keysOf(e *entry) entryKeys {
	return entryKeys{compacted: e.Compacted, rv: e.RV, group: e.Group, typ: []byte(e.Type),
		resource: []byte(e.Resource), namespace: []byte(e.Namespace), name: []byte(e.Name)}
}

// lineKeys returns the key fields and the object of a journal line without
// allocating, as entryHead would decode them; false for a line entryHead
// must decode with encoding/json. A large list reads a line per object and
// the index a line per entry: a small allocation each would be garbage
// among the objects the cache keeps.
func lineKeys(line []byte) (entryKeys, []byte, bool) {
	i := bytes.Index(line, objectKey)
	if i < 0 || line[len(line)-1] != '}' {
		return entryKeys{}, nil, false
	}
	k, ok := scanKeys(line[:i])
	return k, line[i+len(objectKey) : len(line)-1], ok
}

// scanKeys is parseKeys without allocating.
func scanKeys(head []byte) (entryKeys, bool) { //nolint:gocyclo // one scanner over the key fields in their order; split, each piece would pass its position and the entry on
	var k entryKeys
	if len(head) == 0 || head[0] != '{' {
		return k, false
	}
	rest, next := head[1:], 0
	for len(rest) > 0 {
		if next > 0 {
			if rest[0] != ',' {
				return k, false
			}
			rest = rest[1:]
		}
		field := -1
		for f := next; f < len(keyFields); f++ {
			if bytes.HasPrefix(rest, keyPrefixes[f]) {
				field = f
				break
			}
		}
		if field < 0 {
			return k, false
		}
		rest, next = rest[len(keyPrefixes[field]):], field+1
		var value []byte
		if keyFields[field] == "type" || keyFields[field] == "resource" || keyFields[field] == "namespace" || keyFields[field] == "name" {
			if len(rest) < 2 || rest[0] != '"' {
				return k, false
			}
			end := bytes.IndexByte(rest[1:], '"')
			if end < 0 {
				return k, false
			}
			value, rest = rest[1:end+1], rest[end+2:]
			if bytes.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == '\\' || r >= 0x7f }) {
				return k, false
			}
		} else {
			end := 0
			for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
				end++
			}
			value, rest = rest[:end], rest[end:]
			if len(value) == 0 || len(value) > 1 && value[0] == '0' {
				return k, false
			}
		}
		ok := true
		switch keyFields[field] {
		case "compacted":
			k.compacted, ok = parseDigits(value, math.MaxUint64)
		case "rv":
			k.rv, ok = parseDigits(value, math.MaxUint64)
		case "group":
			var g uint64
			g, ok = parseDigits(value, math.MaxInt)
			k.group = int(g)
		case "type":
			k.typ = value
		case "resource":
			k.resource = value
		case "namespace":
			k.namespace = value
		case "name":
			k.name = value
		}
		if !ok {
			return k, false
		}
	}
	return k, true
}

// parseDigits parses decimal digits up to limit, as strconv.ParseUint
// would, without the string it takes.
func parseDigits(digits []byte, limit uint64) (uint64, bool) {
	var n uint64
	for _, c := range digits {
		d := uint64(c - '0')
		if n > (limit-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// keyFields are entry's key fields in the order json.Marshal writes them,
// and keyPrefixes each one's name as it begins a member.
var (
	keyFields   = []string{"compacted", "rv", "type", "resource", "namespace", "name", "group"}
	keyPrefixes = func() [][]byte {
		p := make([][]byte, len(keyFields))
		for i, f := range keyFields {
			p[i] = []byte(`"` + f + `":`)
		}
		return p
	}()
)

// lastValid returns the newest journal entry for a key, or nil when the
// journal has none or the newest is a deletion. It reads the journal
// backwards, so a recently changed object is found at once.
func (j *journal) lastValid(r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	f, err := j.layout.openBeneath(j.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := j.journalEnd(fi.Size())
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

func parseRV(rv string) (uint64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: must be an integer", rv))
	}
	return n, nil
}

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
func (j *journal) voidFrom() int64 {
	if j.markFile == nil {
		return -1
	}
	return readVoid(j.markFile)
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
func (j *journal) writeVoid(offset int64) error {
	if j.lock == nil {
		return errors.New("no write lock")
	}
	if cur := j.voidFrom(); cur >= 0 && cur < offset {
		offset = cur
	}
	if err := writeAt(j.lock, fmt.Sprintf("%020d\n", offset+1), voidAt); err != nil {
		return err
	}
	return j.io.Sync(j.lock)
}

// writeAt writes text at off in f.
func writeAt(f *os.File, text string, off int64) error {
	_, err := f.WriteAt([]byte(text), off)
	return err
}

// cutVoid cuts the journal at the void mark, if there is one, makes the
// cut durable and then clears the mark, durably too: an entry appended
// after a mark that a crash could bring back would be cut as void. The
// caller holds the write lock. Until it succeeds, writes fail.
func (j *journal) cutVoid() error {
	v := j.voidFrom()
	if v < 0 {
		return nil
	}
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
		j.log.Info("cut the journal back past the entries of a failed write", "journal", j.path, "offset", v)
	}
	if err := writeAt(j.lock, fmt.Sprintf("%020d\n", 0), voidAt); err != nil {
		return err
	}
	if err := j.io.Sync(j.lock); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(filepath.Dir(j.path), lockName), err)
	}
	j.broken = nil
	return nil
}

// journalEnd returns where the journal's readable entries end for a file
// of size bytes: at the void mark, when there is one before its end.
func (j *journal) journalEnd(size int64) int64 {
	if v := j.voidFrom(); v >= 0 && v < size {
		return v
	}
	return size
}

// markSize is the size of the resourceVersion mark in the lock file.
const markSize = 21

// writeMark records rv, the newest resourceVersion issued, in the lock
// file. It is not fsynced: it guards against a journal that a person
// deletes or empties, not against a crash, which the journal survives.
// The caller holds the write lock.
func (j *journal) writeMark(rv uint64) {
	if j.lock == nil {
		return
	}
	_, _ = j.lock.WriteAt([]byte(fmt.Sprintf("%020d\n", rv)), 0)
}

// readMark returns the resourceVersion mark of the lock file, or 0.
func (j *journal) readMark() uint64 {
	if j.lock == nil {
		return 0
	}
	buf := make([]byte, markSize)
	n, _ := j.lock.ReadAt(buf, 0)
	rv, err := strconv.ParseUint(strings.TrimSpace(string(buf[:n])), 10, 64)
	if err != nil {
		return 0
	}
	return rv
}

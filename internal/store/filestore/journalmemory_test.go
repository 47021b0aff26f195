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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJournalReadersHoldNoCopyOfTheJournal reads a journal of several MiB
// as a watch does and as a large list does: the watch's reader keeps at
// most journalKeptBuffer between reads, keeps the objects of the entries up
// to its resourceVersion only when asked, and decodes after it only its
// own resource's objects; the list's index keeps each object's newest
// entry by offset and reads back the same object the journal holds there.
func TestJournalReadersHoldNoCopyOfTheJournal(t *testing.T) {
	const n = 1200
	goal := strings.Repeat("g", 4096)
	var data bytes.Buffer
	objects := map[string]string{}
	for i := range n {
		resource, name := "hooks", fmt.Sprintf("h%d", i%400)
		if i%3 == 2 {
			resource = "workers"
		}
		object := fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default"},"spec":{"goal":"%s %d"}}`, name, goal, i)
		line, err := json.Marshal(entry{RV: uint64(i + 1), Type: Modified, Resource: resource, Namespace: "default", Name: name, Object: json.RawMessage(object)})
		if err != nil {
			t.Fatal(err)
		}
		data.Write(append(line, '\n'))
		if resource == "hooks" {
			objects["default/"+name] = object
		}
	}
	if data.Len() < 4*journalReadChunk {
		t.Fatalf("the journal is %d bytes, too short to tell", data.Len())
	}
	dir := t.TempDir()
	path := filepath.Join(dir, journalName)
	if err := os.WriteFile(path, data.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		after    uint64
		keepOld  bool
		resource string
		// objects tells, for entries up to after and those after it, of
		// the own resource and of others, whether each keeps its object.
		oldObjects, ownObjects, otherObjects bool
	}{
		{name: "a watch from the end", after: n, oldObjects: false},
		{name: "a selective watch from the end", after: n, keepOld: true, oldObjects: true},
		{name: "a watch from the middle", after: n / 2, resource: "hooks", ownObjects: true},
		{name: "a reader of every entry", ownObjects: true, otherObjects: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			r := &journalReader{f: f, resource: tc.resource, end: func(size int64) int64 { return size }}
			entries, err := r.nextAfter(tc.after, tc.keepOld)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != n {
				t.Fatalf("%d entries, want %d", len(entries), n)
			}
			if cap(r.buf) > journalKeptBuffer {
				t.Errorf("the reader keeps a buffer of %d bytes, more than %d", cap(r.buf), journalKeptBuffer)
			}
			for _, e := range entries {
				var want bool
				switch {
				case e.RV <= tc.after:
					want = tc.oldObjects
				case e.Resource == "hooks" || tc.resource == "":
					want = tc.ownObjects
				default:
					want = tc.otherObjects
				}
				if got := e.Object != nil; got != want {
					t.Fatalf("entry %d (%s): object kept %v, want %v", e.RV, e.Resource, got, want)
				}
			}
		})
	}

	root, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	s := &objectFiles{layout: &layout{dir: dir, root: root}}
	ix := s.journalIndex(&resource{plural: "hooks"})
	if ix == nil {
		t.Fatal("no index")
	}
	defer func() { _ = ix.close() }()
	if len(ix.versions) != len(objects) {
		t.Fatalf("%d objects indexed, want %d", len(ix.versions), len(objects))
	}
	for key, want := range objects {
		ns, name, _ := strings.Cut(key, "/")
		got, ok := ix.object(ix.versions[ix.keyHash(key)], ns, name, new([]byte))
		if !ok || string(got) != want {
			t.Fatalf("%s: the index reads %.80q (%v), want the newest entry's %.80q", key, got, ok, want)
		}
	}
	if _, ok := ix.object(ix.versions[ix.objectHash("default", "h1")], "default", "h2", new([]byte)); ok {
		t.Error("the index read h1's entry as h2's")
	}
}

// TestJournalReaderKeepsASmallBufferBetweenReads reads, as a watch does
// after each change, bursts of entries smaller than journalReadChunk but
// larger than journalKeptBuffer, some ending in a line still being
// written: between reads the reader keeps that line's bytes, and no more
// than journalKeptBuffer beyond them.
func TestJournalReaderKeepsASmallBufferBetweenReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), journalName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	r := &journalReader{f: f, resource: "hooks", end: func(size int64) int64 { return size }}
	rv := uint64(0)
	line := func(goalSize int) []byte {
		rv++
		name := fmt.Sprintf("h%d", rv)
		object := fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default"},"spec":{"goal":%q}}`, name, strings.Repeat("g", goalSize))
		l, err := json.Marshal(entry{RV: rv, Type: Modified, Resource: "hooks", Namespace: "default", Name: name, Object: json.RawMessage(object)})
		if err != nil {
			t.Fatal(err)
		}
		return append(l, '\n')
	}
	// rest is the part of a cut line the next burst writes first.
	var rest []byte
	for burst, tc := range []struct {
		entries int
		// cut is how much of one more line, of cutOf bytes, the burst
		// writes; the next burst writes the rest, and reads that entry.
		cut, cutOf int
	}{
		{entries: 40},
		{entries: 60, cut: 300, cutOf: 2048},
		{entries: 25, cut: 40 << 10, cutOf: 48 << 10},
		{entries: 1},
	} {
		var data bytes.Buffer
		want := tc.entries
		if rest != nil {
			data.Write(rest)
			want++
		}
		for range tc.entries {
			data.Write(line(2048))
		}
		rest = nil
		if tc.cut > 0 {
			l := line(tc.cutOf)
			data.Write(l[:tc.cut])
			rest = l[tc.cut:]
		}
		if _, err := f.Write(data.Bytes()); err != nil {
			t.Fatal(err)
		}
		entries, err := r.nextAfter(0, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != want {
			t.Fatalf("burst %d: %d entries, want %d", burst, len(entries), want)
		}
		if len(r.buf) != tc.cut {
			t.Fatalf("burst %d: the reader holds %d bytes of the line being written, want %d", burst, len(r.buf), tc.cut)
		}
		if limit := max(tc.cut, journalKeptBuffer); cap(r.buf) > limit {
			t.Errorf("burst %d (%d bytes): the reader keeps a buffer of %d bytes between reads, more than %d", burst, data.Len(), cap(r.buf), limit)
		}
	}
}

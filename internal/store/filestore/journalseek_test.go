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

// seekJournal is a journal for TestSeekAfterStartsAtItsVersion: entries
// of resourceVersions first to last (some long, longer than what
// seekAfter reads at a time), after a compaction header when compacted is
// set, with the lines of the versions in corrupt replaced by garbage and a
// torn line after them when torn is set.
func seekJournal(t *testing.T, first, last, compacted uint64, corrupt []uint64, torn bool) string {
	t.Helper()
	var data bytes.Buffer
	if compacted > 0 {
		head, err := json.Marshal(entry{Compacted: compacted, Live: 1})
		if err != nil {
			t.Fatal(err)
		}
		data.Write(append(head, '\n'))
	}
	for rv := first; rv <= last; rv++ {
		goal := "g"
		if rv%7 == 3 {
			goal = strings.Repeat("g", 3*seekReadChunk)
		}
		object := fmt.Sprintf(`{"metadata":{"name":"h%d","namespace":"default"},"spec":{"goal":%q}}`, rv, goal)
		line, err := json.Marshal(entry{RV: rv, Type: Modified, Resource: "hooks", Namespace: "default", Name: fmt.Sprintf("h%d", rv), Object: json.RawMessage(object)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range corrupt {
			if c == rv {
				line = bytes.Repeat([]byte("#"), len(line))
			}
		}
		data.Write(append(line, '\n'))
	}
	if torn {
		data.WriteString(`{"rv":999,"type":"MODIFIED","resource":"hooks","namespace":"default","name":"torn","object":{"metadata"`)
	}
	path := filepath.Join(t.TempDir(), journalName)
	if err := os.WriteFile(path, data.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readJournal reads the whole journal at path as a watch from after does,
// seeking first when seek is set.
func readJournal(t *testing.T, path string, after uint64, seek bool) []entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	r := &journalReader{f: f, resource: "hooks", end: func(size int64) int64 { return size }}
	if seek {
		if err := r.seekAfter(after); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := r.nextAfter(after, false)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// describe is an entry as the watch tells it apart: its resourceVersion,
// a compaction header's version, or a corrupt line.
func describe(e entry) string {
	switch {
	case e.corrupt != nil:
		return "corrupt"
	case e.Compacted > 0:
		return fmt.Sprintf("compacted %d", e.Compacted)
	}
	return fmt.Sprint(e.RV)
}

// TestSeekAfterStartsAtItsVersion checks that a reader that seeks for a
// watch from a resourceVersion reads exactly what a reader of the whole
// journal reads from the last readable entry not newer than it (so the
// watch sees the same entries after it, the same corrupt lines, and the
// same version before them), skips every line before that one, and stays
// at the start when a compaction dropped a version after it or no entry
// is that old.
func TestSeekAfterStartsAtItsVersion(t *testing.T) {
	cases := []struct {
		name                   string
		first, last, compacted uint64
		corrupt                []uint64
		torn                   bool
		after                  uint64
		// wantFirst describes the first entry read after seeking.
		wantFirst string
	}{
		{name: "the middle", first: 1, last: 60, after: 30, wantFirst: "30"},
		{name: "the first entry", first: 1, last: 60, after: 1, wantFirst: "1"},
		{name: "the end", first: 1, last: 60, after: 60, wantFirst: "60"},
		{name: "past the end", first: 1, last: 60, after: 90, wantFirst: "60"},
		{name: "a long entry", first: 1, last: 60, after: 24, wantFirst: "24"},
		{name: "from the start", first: 1, last: 60, after: 0, wantFirst: "1"},
		{name: "a corrupt line after it", first: 1, last: 60, corrupt: []uint64{31}, after: 30, wantFirst: "30"},
		{name: "its own line corrupt", first: 1, last: 60, corrupt: []uint64{30}, after: 30, wantFirst: "29"},
		{name: "corrupt lines around it", first: 1, last: 60, corrupt: []uint64{28, 29, 31, 32}, after: 30, wantFirst: "30"},
		{name: "a torn tail", first: 1, last: 60, torn: true, after: 60, wantFirst: "60"},
		{name: "after a compaction", first: 41, last: 100, compacted: 40, after: 70, wantFirst: "70"},
		{name: "at the compaction", first: 41, last: 100, compacted: 40, after: 40, wantFirst: "compacted 40"},
		{name: "before the compaction", first: 41, last: 100, compacted: 40, after: 20, wantFirst: "compacted 40"},
		// A compaction keeps the newest entry of every live object, older
		// ones too: the header still tells the watch what it dropped.
		{name: "kept entries older than the compaction", first: 10, last: 100, compacted: 40, after: 20, wantFirst: "compacted 40"},
		{name: "only corrupt lines before it", first: 1, last: 60, corrupt: []uint64{1, 2, 3}, after: 3, wantFirst: "corrupt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := seekJournal(t, tc.first, tc.last, tc.compacted, tc.corrupt, tc.torn)
			whole := readJournal(t, path, tc.after, false)
			sought := readJournal(t, path, tc.after, true)
			if len(sought) == 0 || describe(sought[0]) != tc.wantFirst {
				t.Fatalf("after seeking the first entry read is %v, want %s", sought[:min(1, len(sought))], tc.wantFirst)
			}
			skipped := len(whole) - len(sought)
			if skipped < 0 {
				t.Fatalf("read %d entries after seeking, more than the %d of the whole journal", len(sought), len(whole))
			}
			for i, e := range sought {
				if got, want := describe(e), describe(whole[skipped+i]); got != want {
					t.Fatalf("entry %d after seeking is %s, the whole journal's is %s", i, got, want)
				}
			}
			for _, e := range whole[:skipped] {
				if e.corrupt == nil && e.RV > tc.after {
					t.Fatalf("skipped entry %d, newer than %d", e.RV, tc.after)
				}
			}
		})
	}
}

// BenchmarkWatchStart times a watch's first read of a journal of 61,000
// entries (the objects of BenchmarkLocalOperatorScale10k's fleet) from its
// newest resourceVersion: reading every entry's key fields, as before
// seekAfter, against seeking to its start.
func BenchmarkWatchStart(b *testing.B) {
	const n = 61000
	var data bytes.Buffer
	for rv := uint64(1); rv <= n; rv++ {
		object := fmt.Sprintf(`{"metadata":{"name":"h%d","namespace":"default"},"spec":{"goal":"%s"}}`, rv, strings.Repeat("g", 400))
		line, err := json.Marshal(entry{RV: rv, Type: Modified, Resource: "hooks", Namespace: "default", Name: fmt.Sprintf("h%d", rv), Object: json.RawMessage(object)})
		if err != nil {
			b.Fatal(err)
		}
		data.Write(append(line, '\n'))
	}
	path := filepath.Join(b.TempDir(), journalName)
	if err := os.WriteFile(path, data.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, seek := range []bool{false, true} {
		b.Run(fmt.Sprintf("seek=%v", seek), func(b *testing.B) {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			b.ReportAllocs()
			for b.Loop() {
				r := &journalReader{f: f, resource: "workers", end: func(size int64) int64 { return size }}
				if seek {
					if err := r.seekAfter(n); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := r.nextAfter(n, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

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
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// TestLastGroups checks that the roll-forward reads back whole group
// commits: the newest n groups, oldest entry first, stopping at a
// compaction line and passing over a corrupt last line.
func TestLastGroups(t *testing.T) {
	line := func(rv uint64, group int) string {
		js, _ := json.Marshal(&entry{RV: rv, Type: Modified, Resource: "hooks", Namespace: "default", Name: "h", Group: group})
		return string(js) + "\n"
	}
	tests := []struct {
		name    string
		journal string
		n       int
		want    []uint64
	}{
		{name: "empty", journal: "", n: 2},
		{name: "single writes", journal: line(1, 0) + line(2, 0) + line(3, 0), n: 2, want: []uint64{2, 3}},
		{name: "one group", journal: line(1, 0) + line(2, 0) + line(3, 1) + line(4, 2), n: 1, want: []uint64{2, 3, 4}},
		{name: "two groups", journal: line(1, 0) + line(2, 1) + line(3, 0) + line(4, 1), n: 2, want: []uint64{1, 2, 3, 4}},
		{name: "after a compaction", journal: `{"compacted":5}` + "\n" + line(6, 3) + line(7, 4), n: 2, want: []uint64{6, 7}},
		{name: "a corrupt last line", journal: line(1, 0) + line(2, 0) + line(3, 1) + "{not json\n", n: 1, want: []uint64{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal")
			if err := os.WriteFile(path, []byte(tt.journal), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			j := &journal{path: path, f: f, io: atomicfs.Real}
			entries, err := j.lastGroups(tt.n)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, e := range entries {
				got = append(got, e.RV)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("lastGroups(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

// TestEntryHeadReadsEveryEntryAsWritten: the list's fast path slices an
// entry's object out of its journal line without scanning it, which holds
// only while the object is the line's last field. Every kind of entry the
// store writes, a group commit's included, is read back whole.
func TestEntryHeadReadsEveryEntryAsWritten(t *testing.T) {
	object := json.RawMessage(`{"apiVersion":"agents.tether.dev/v1alpha1","kind":"Hook","metadata":{"name":"h","namespace":"default"}}`)
	tests := []struct {
		name string
		e    entry
	}{
		{"a write on its own", entry{RV: 7, Type: Added, Resource: "hooks", Namespace: "default", Name: "h", Object: object}},
		{"the third write of a group commit", entry{RV: 9, Type: Modified, Resource: "hooks", Namespace: "default", Name: "h", Group: 2, Object: object}},
		{"a deletion in a group", entry{RV: 11, Type: Deleted, Resource: "hooks", Namespace: "default", Name: "h", Group: 1, Object: object}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := json.Marshal(&tt.e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := entryHead(line)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.e) {
				t.Errorf("entryHead(%s) = %+v, want %+v", line, *got, tt.e)
			}
		})
	}
}

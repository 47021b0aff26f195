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

package snapshot

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseStatus reads every kind of `git status --porcelain=v2 -z` entry
// that the capture (working-tree changes only) and the in-place restore's
// refusal (every change) read.
func TestParseStatus(t *testing.T) {
	const oid = "0000000000000000000000000000000000000000"
	z := func(fields ...string) []byte { return []byte(strings.Join(fields, "\x00") + "\x00") }
	tests := []struct {
		name    string
		out     []byte
		want    []statusEntry
		wantErr string
	}{
		{"nothing", nil, nil, ""},
		{"modified in the working tree", z("1 .M N... 100644 100644 100644 " + oid + " " + oid + " a.go"), []statusEntry{{"a.go", true}}, ""},
		{"staged only", z("1 M. N... 100644 100644 100644 " + oid + " " + oid + " b.go"), []statusEntry{{"b.go", false}}, ""},
		{"deleted", z("1 .D N... 100644 100644 000000 " + oid + " " + oid + " c.go"), []statusEntry{{"c.go", true}}, ""},
		{"a path with spaces", z("1 .M N... 100644 100644 100644 " + oid + " " + oid + " dir/new file.txt"), []statusEntry{{"dir/new file.txt", true}}, ""},
		{"renamed: both paths", z("2 R. N... 100644 100644 100644 "+oid+" "+oid+" R100 new.go", "old.go"), []statusEntry{{"new.go", true}, {"old.go", true}}, ""},
		{"unmerged", z("u UU N... 100644 100644 100644 100644 " + oid + " " + oid + " " + oid + " m.go"), []statusEntry{{"m.go", true}}, ""},
		{"untracked", z("? notes.txt"), []statusEntry{{"notes.txt", true}}, ""},
		{"ignored and headers are skipped", z("# branch.oid "+oid, "! debug.log", "? x"), []statusEntry{{"x", true}}, ""},
		{"several", z("? u", "1 MM N... 100644 100644 100644 "+oid+" "+oid+" t"), []statusEntry{{"u", true}, {"t", true}}, ""},
		{"malformed ordinary entry", z("1 .M N... 100644"), nil, "malformed entry"},
		{"rename without its origin", []byte("2 R. N... 100644 100644 100644 " + oid + " " + oid + " R100 new.go"), nil, "malformed entry"},
		{"malformed unmerged entry", z("u UU N..."), nil, "malformed entry"},
		{"unknown entry", z("X what"), nil, "unknown entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus(tt.out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseStatus = %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseStatus = %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

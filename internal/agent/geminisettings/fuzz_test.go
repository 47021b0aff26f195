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

package geminisettings

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/jsonc"
)

// FuzzMerge checks, for every settings file Merge accepts, that the result
// is JSON with comments holding exactly tether's entries, that a second
// install changes nothing, that every comment of the file is still there,
// and that uninstall leaves no tether entry and is undone by a reinstall.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{
		"", "{}", fresh, "// c\n{\n\t\"a\": [1, 2.50, \"é\"] /* d */\n}",
		`{"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"tether agent hook --agent gemini"},{"type":"command","command":"x"}]}]}}`,
		`{"hooks":{"AfterTool":[{"matcher":"write_.*","hooks":[]},{"hooks":"bad"},7]}}`,
		`{"hooks":{"SessionEnd":[]}}`, "{\"a\":1 // c\n}", `[]`, `{"a":1,"a":2}`, "{\"hooks\": { /* x */ }}",
	} {
		f.Add([]byte(s))
	}
	opts := Options{TetherPath: tether}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Merge("s.json", data, opts)
		if err != nil {
			return
		}
		if _, err := jsonc.Parse(got); err != nil {
			t.Fatalf("Merge produced a file it cannot read: %v\n%s", err, got)
		}
		if n := bytes.Count(got, []byte(`agent hook --agent gemini"`)); n < len(Events) {
			t.Fatalf("%d tether entries, want at least %d:\n%s", n, len(Events), got)
		}
		if c := comments(data); !strings.Contains(string(got), c) {
			t.Fatalf("a comment was lost: %q\n%s", c, got)
		}
		again, err := Merge("s.json", got, opts)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("second install: %v\n%s\nthen\n%s", err, got, again)
		}
		removed, err := Remove("s.json", got)
		if err != nil {
			t.Fatalf("Remove of Merge's result: %v", err)
		}
		if hasTetherEntry(t, removed) {
			t.Fatalf("uninstall left a tether entry:\n%s", removed)
		}
		re, err := Merge("s.json", removed, opts)
		if err != nil || !sameJSON(re, got) {
			t.Fatalf("reinstall after uninstall differs: %v\n%s\nwant\n%s", err, re, got)
		}
	})
}

// comments returns the first comment of data, "" when none.
func comments(data []byte) string {
	plain, err := jsonc.Strip(data)
	if err != nil {
		return ""
	}
	for i := range plain {
		if plain[i] != data[i] {
			j := i
			for j < len(data) && plain[j] != data[j] {
				j++
			}
			return string(data[i:j])
		}
	}
	return ""
}

// sameJSON reports whether a and b, comments aside, hold the same value
// (key order aside).
func sameJSON(a, b []byte) bool {
	var va, vb any
	pa, err1 := jsonc.Strip(a)
	pb, err2 := jsonc.Strip(b)
	return err1 == nil && err2 == nil && json.Unmarshal(pa, &va) == nil && json.Unmarshal(pb, &vb) == nil && reflect.DeepEqual(va, vb)
}

// hasTetherEntry reports whether data holds one of tether's entries where
// Gemini CLI reads hooks.
func hasTetherEntry(t *testing.T, data []byte) bool {
	t.Helper()
	if len(bytes.TrimSpace(data)) == 0 {
		return false
	}
	d, err := parse("s.json", data)
	if err != nil {
		t.Fatalf("Remove produced a file it cannot read: %v\n%s", err, data)
	}
	h, _ := d.hooks()
	if h == nil {
		return false
	}
	for _, m := range h.Members {
		if m.Value.Kind != jsonc.Array {
			continue
		}
		for _, g := range m.Value.Elems {
			for _, e := range entries(g) {
				if d.isTetherEntry(e) {
					return true
				}
			}
		}
	}
	return false
}

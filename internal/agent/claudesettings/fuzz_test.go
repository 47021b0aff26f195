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

package claudesettings_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
)

// FuzzMerge checks, for every settings file Merge accepts, that the result is
// JSON, that a second install changes nothing, and that uninstall leaves no
// tether entry and is itself undone by a reinstall.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{
		"", "{}", installed, "{\n\t\"a\": [1, 2.50, \"é\"]\n}",
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"tether agent hook"},{"type":"command","command":"x"}]}]}}`,
		`{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[]},{"hooks":"bad"},7]}}`,
		`{"hooks":{"Stop":[]}}`, `{"a":1 // c` + "\n}", `[]`, `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := claudesettings.Merge("s.json", data, opts)
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("Merge produced invalid JSON:\n%s", got)
		}
		again, err := claudesettings.Merge("s.json", got, opts)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("second install: %v\n%s\nthen\n%s", err, got, again)
		}
		removed, err := claudesettings.Remove("s.json", got)
		if err != nil {
			t.Fatalf("Remove of Merge's result: %v", err)
		}
		if hasTetherEntry(removed) {
			t.Fatalf("uninstall left a tether entry:\n%s", removed)
		}
		re, err := claudesettings.Merge("s.json", removed, opts)
		if err != nil || !jsonEqual(re, got) {
			t.Fatalf("reinstall after uninstall differs: %v\n%s\nwant\n%s", err, re, got)
		}
	})
}

// hasTetherEntry reports whether data holds a hook entry tether would
// recognise as its own, wherever the shapes around it are readable.
func hasTetherEntry(data []byte) bool {
	var doc map[string]json.RawMessage
	var hooks map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil || json.Unmarshal(doc["hooks"], &hooks) != nil {
		return false
	}
	for _, raw := range hooks {
		var groups []json.RawMessage
		if json.Unmarshal(raw, &groups) != nil {
			continue
		}
		for _, g := range groups {
			var group map[string]json.RawMessage
			var entries []map[string]json.RawMessage
			if json.Unmarshal(g, &group) != nil || json.Unmarshal(group["hooks"], &entries) != nil {
				continue
			}
			for _, e := range entries {
				var typ, command string
				if json.Unmarshal(e["type"], &typ) == nil && json.Unmarshal(e["command"], &command) == nil &&
					typ == "command" && claudesettings.IsTetherCommand(command) {
					return true
				}
			}
		}
	}
	return false
}

func jsonEqual(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && equalJSON(va, vb)
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

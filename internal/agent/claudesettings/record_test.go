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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
)

// Install then uninstall gives the file back byte for byte, and removes what
// install created (issue 25, item 5); a file changed by hand in between
// loses only tether's entries.
func TestUninstallGivesTheFileBack(t *testing.T) {
	cases := []struct {
		name     string
		before   *string // nil: no file
		otherDir bool    // .claude holds another file
		installs int
		edit     func(string) string // a hand edit after install
	}{
		{name: "no file, no directory", installs: 1},
		{name: "no file, directory with another file", otherDir: true, installs: 1},
		{name: "empty event array kept", before: ptr(`{"hooks":{"SessionStart":[]}}`), installs: 1},
		{name: "compact JSON without newline", before: ptr(`{"model":"x","permissions":{"allow":["Bash"]}}`), installs: 1},
		{name: "odd spacing", before: ptr("{ \"a\" :1 ,\n\n \"hooks\" : { \"Stop\" : [ ] } }\n"), installs: 1},
		{name: "installed twice", before: ptr(`{"a":1}`), installs: 2},
		{name: "hand edit after install", before: ptr(`{"a":1}`), installs: 1, edit: func(s string) string { return strings.Replace(s, "{", "{\n  \"b\": 2,", 1) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, records := t.TempDir(), t.TempDir()
			path := filepath.Join(dir, ".claude", "settings.json")
			if tc.otherDir {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".claude", "other.json"), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.before != nil {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(*tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := claudesettings.Options{TetherPath: "/opt/tether/bin/tether", RecordDir: records}
			for i := 0; i < tc.installs; i++ {
				if _, err := claudesettings.Install(path, o, false); err != nil {
					t.Fatal(err)
				}
			}
			if tc.edit != nil {
				data, _ := os.ReadFile(path)
				if err := os.WriteFile(path, []byte(tc.edit(string(data))), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := claudesettings.Uninstall(path, records, false)
			if err != nil || !res.Changed {
				t.Fatalf("uninstall: %v %+v", err, res)
			}
			data, err := os.ReadFile(path)
			switch {
			case tc.edit != nil:
				if err != nil || bytes.Contains(data, []byte("agent hook")) || !bytes.Contains(data, []byte(`"b": 2`)) {
					t.Errorf("after a hand edit, uninstall left %q (%v): want the edit without tether's entries", data, err)
				}
			case tc.before == nil:
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("install created the file; after uninstall it holds %q (%v)", data, err)
				}
				_, err := os.Stat(filepath.Dir(path))
				if tc.otherDir != (err == nil) {
					t.Errorf(".claude after uninstall: %v (it held another file: %v)", err, tc.otherDir)
				}
			default:
				if string(data) != *tc.before {
					t.Errorf("after uninstall\n%q\nwant\n%q", data, *tc.before)
				}
			}
			if left, _ := os.ReadDir(records); len(left) != 0 {
				t.Errorf("records left after uninstall: %v", left)
			}
		})
	}
}

func ptr(s string) *string { return &s }

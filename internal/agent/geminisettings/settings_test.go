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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
)

const tether = "/usr/local/bin/tether"

// fresh is what install writes into an empty file.
const fresh = `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "name": "tether",
            "type": "command",
            "command": "/usr/local/bin/tether agent hook --agent gemini",
            "timeout": 10000
          }
        ]
      }
    ],
    "BeforeAgent": [
      {
        "hooks": [
          {
            "name": "tether",
            "type": "command",
            "command": "/usr/local/bin/tether agent hook --agent gemini",
            "timeout": 10000
          }
        ]
      }
    ],
    "AfterTool": [
      {
        "matcher": "*",
        "hooks": [
          {
            "name": "tether",
            "type": "command",
            "command": "/usr/local/bin/tether agent hook --agent gemini",
            "timeout": 10000
          }
        ]
      }
    ],
    "PreCompress": [
      {
        "hooks": [
          {
            "name": "tether",
            "type": "command",
            "command": "/usr/local/bin/tether agent hook --agent gemini",
            "timeout": 10000
          }
        ]
      }
    ],
    "AfterAgent": [
      {
        "hooks": [
          {
            "name": "tether",
            "type": "command",
            "command": "/usr/local/bin/tether agent hook --agent gemini",
            "timeout": 10000
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "name": "tether",
            "type": "command",
            "command": "/usr/local/bin/tether agent hook --agent gemini",
            "timeout": 10000
          }
        ]
      }
    ]
  }
}
`

func merge(t *testing.T, data string) string {
	t.Helper()
	out, err := Merge("settings.json", []byte(data), Options{TetherPath: tether})
	if err != nil {
		t.Fatalf("Merge(%q): %v", data, err)
	}
	return string(out)
}

func remove(t *testing.T, data string) string {
	t.Helper()
	out, err := Remove("settings.json", []byte(data))
	if err != nil {
		t.Fatalf("Remove: %v", err)
	}
	return string(out)
}

func TestMergeEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "{}\n"} {
		if got := merge(t, in); got != fresh {
			t.Errorf("Merge(%q):\n%s", in, got)
		}
	}
	if got := remove(t, fresh); got != "{}\n" {
		t.Errorf("Remove(fresh) = %q", got)
	}
}

// TestMergeKeepsForm: install keeps every foreign byte (comments, keys,
// hooks, layout); installing again changes nothing; removing gives the
// original back, even without install's record.
func TestMergeKeepsForm(t *testing.T) {
	tests := []struct {
		name string
		in   string
		has  []string // lines the merged file holds
	}{
		{name: "comments and foreign keys", in: `// Gemini CLI settings
{
  /* the look */
  "ui": {"theme": "GitHub"}, // trailing comment
  "general": {
    "vimMode": true
  }
}
`, has: []string{`// Gemini CLI settings`, `/* the look */`, `"ui": {"theme": "GitHub"}, // trailing comment`, `    "SessionStart": [`}},
		{name: "foreign hooks of the same events", in: `{
    "hooks": {
        // mine
        "AfterTool": [
            {
                "matcher": "write_.*",
                "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5000}]
            }
        ],
        "BeforeTool": []
    },
    "hooksConfig": {"enabled": true}
}`, has: []string{`        // mine`, `                "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5000}]`, `        "BeforeTool": [],`, `        "SessionStart": [`, `            {`}},
		{name: "tabs, no trailing newline", in: "{\n\t\"hooks\": {\n\t\t\"BeforeTool\": []\n\t}\n}", has: []string{"\t\t\"SessionEnd\": [\n\t\t\t{\n\t\t\t\t\"hooks\": ["}},
		{name: "compact", in: `{"a":1}`, has: []string{`{"a":1,`}},
		{name: "a user's tether command with more arguments", in: `{"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"tether agent hook --agent gemini --verbose"}]}]}}`,
			has: []string{`--verbose"}]}, {`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := merge(t, tt.in)
			for _, h := range tt.has {
				if !strings.Contains(got, h) {
					t.Errorf("merged file lacks %q:\n%s", h, got)
				}
			}
			if strings.Count(got, "agent hook --agent gemini\"") != len(Events) {
				t.Errorf("want %d tether entries:\n%s", len(Events), got)
			}
			if again := merge(t, got); again != got {
				t.Errorf("second install changed the file:\n%s", again)
			}
			if back := remove(t, got); back != tt.in {
				t.Errorf("Remove did not give the original back:\n%s\nwant:\n%s", back, tt.in)
			}
		})
	}
}

func TestMergeReplaces(t *testing.T) {
	old := strings.ReplaceAll(fresh, "/usr/local/bin/tether", "'/old place/tether'")
	old = strings.Replace(old, `"timeout": 10000`, `"timeout": 5000`, 1)
	// An entry of tether's under an event it no longer installs is stale.
	old = strings.Replace(old, `"hooks": {`, `"hooks": {
    "Notification": [{"hooks": [{"type": "command", "command": "tether agent hook --agent gemini"}]}],`, 1)
	if got := merge(t, old); got != fresh {
		t.Errorf("reinstall from another path:\n%s", got)
	}
}

func TestRefuses(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"syntax", "{\n  \"a\": 1,\n}\n", "settings.json:3:1: refusing to rewrite a file that is not valid JSON (comments allowed): invalid character '}' looking for beginning of object key string"},
		{"unterminated comment", "{\n  /* x\n}", "settings.json:2:3: refusing to rewrite a file that is not valid JSON (comments allowed): unterminated /* comment"},
		{"duplicate key", `{"hooks": {"AfterTool": [], "AfterTool": []}}`, `settings.json:1:29: refusing to rewrite a file that is not valid JSON (comments allowed): duplicate key "hooks.AfterTool"`},
		{"top level", `[]`, "settings.json:1:1: refusing to rewrite a settings file whose top level is not a JSON object"},
		{"hooks", `{"hooks": []}`, "settings.json: hooks: want an object"},
		{"event", `{"hooks": {"AfterAgent": {}}}`, "settings.json: hooks.AfterAgent: want an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge("settings.json", []byte(tt.in), Options{TetherPath: tether})
			if err == nil || err.Error() != tt.want {
				t.Errorf("Merge: %v\nwant %s", err, tt.want)
			}
			var pe *claudesettings.ParseError
			if strings.Contains(tt.want, ":1:") || strings.Contains(tt.want, ":2:") || strings.Contains(tt.want, ":3:") {
				if !errors.As(err, &pe) {
					t.Errorf("not a *ParseError: %T", err)
				}
			}
		})
	}
}

func TestRemoveOnlyTethers(t *testing.T) {
	in := `{
  "hooks": {
    "AfterTool": [
      {
        "matcher": "*",
        "hooks": [
          {"type": "command", "command": "./audit.sh"},
          {"name": "tether", "type": "command", "command": "tether agent hook --agent gemini", "timeout": 10000}
        ]
      }
    ],
    "SessionEnd": [
      {"hooks": [{"type": "command", "command": "tether agent hook --agent gemini"}]}
    ]
  }
}
`
	want := `{
  "hooks": {
    "AfterTool": [
      {
        "matcher": "*",
        "hooks": [
          {"type": "command", "command": "./audit.sh"}
        ]
      }
    ]
  }
}
`
	if got := remove(t, in); got != want {
		t.Errorf("Remove:\n%s\nwant:\n%s", got, want)
	}
	if got := remove(t, want); got != want {
		t.Errorf("Remove of a file without tether's entries changed it")
	}
}

// TestInstallUninstall: uninstall gives a file back byte for byte from the
// record, and a file install created goes with its directory.
func TestInstallUninstall(t *testing.T) {
	dir, records := t.TempDir(), t.TempDir()
	path, _ := Path(ScopeProject, dir, "")
	opts := Options{TetherPath: tether, RecordDir: records}
	res, err := Install(path, opts, false)
	if err != nil || !res.Changed {
		t.Fatalf("Install: %v %+v", err, res)
	}
	if res, err = Install(path, opts, false); err != nil || res.Changed {
		t.Fatalf("second Install changed: %v", err)
	}
	if _, err := Uninstall(path, records, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gemini")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".gemini left behind: %v", err)
	}

	// Odd spacing that a plain removal would not restore.
	orig := "{ \"hooks\" :{ \"AfterAgent\":[ ] },\"x\":1 }"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(path, opts, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(path, records, false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != orig {
		t.Fatalf("uninstall gave %q, want %q", got, orig)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}

	// A file tether cannot parse is left untouched.
	bad := "{\n  \"a\": 1,,\n}\n"
	_ = os.WriteFile(path, []byte(bad), 0o600)
	_, err = Install(path, opts, false)
	var pe *claudesettings.ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Column != 10 || pe.File != path {
		t.Fatalf("Install of a bad file: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != bad {
		t.Fatal("a refused file was changed")
	}
}

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
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
)

const tetherPath = "/opt/tether/bin/tether"

var opts = claudesettings.Options{TetherPath: tetherPath}

// installed is what Merge writes into an empty file.
const installed = `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/tether/bin/tether agent hook",
            "timeout": 10
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/tether/bin/tether agent hook",
            "timeout": 10
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/tether/bin/tether agent hook",
            "timeout": 10
          }
        ]
      }
    ],
    "PostToolUseFailure": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/tether/bin/tether agent hook",
            "timeout": 10
          }
        ]
      }
    ],
    "PreCompact": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/tether/bin/tether agent hook",
            "timeout": 10
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/tether/bin/tether agent hook",
            "timeout": 10
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/tether/bin/tether agent hook",
            "timeout": 10
          }
        ]
      }
    ]
  }
}
`

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, data)
	}
	return v
}

// commands lists "Event|matcher|command" for every hook entry of data.
func commands(t *testing.T, data []byte) []string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	order := []string{"PreToolUse", "SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"}
	var others []string
	for ev := range doc.Hooks {
		if !slices.Contains(order, ev) {
			others = append(others, ev)
		}
	}
	slices.Sort(others)
	for _, ev := range append(order, others...) {
		for _, g := range doc.Hooks[ev] {
			for _, h := range g.Hooks {
				out = append(out, ev+"|"+g.Matcher+"|"+h.Command)
			}
		}
	}
	return out
}

func TestMerge(t *testing.T) {
	tc := "/opt/tether/bin/tether agent hook"
	all := []string{"SessionStart||" + tc, "UserPromptSubmit||" + tc, "PostToolUse|*|" + tc, "PostToolUseFailure|*|" + tc, "PreCompact||" + tc, "Stop||" + tc, "SessionEnd||" + tc}
	tests := []struct {
		name     string
		in       string
		want     string   // exact bytes, when set
		commands []string // the hook entries, in order, when set
		keep     []string // substrings that must survive byte for byte
	}{
		{name: "empty file", in: "", want: installed},
		{name: "empty object", in: "{}\n", want: installed},
		{name: "already installed", in: installed, want: installed},
		{
			name:     "other keys keep order and bytes",
			in:       "{\n  \"model\": \"opus\",\n  \"env\": {\"B\": \"1\", \"A\": \"2\"},\n  \"n\": 1.50\n}\n",
			keep:     []string{`"model": "opus",` + "\n  \"env\": {\n    \"B\": \"1\",\n    \"A\": \"2\"\n  },\n  \"n\": 1.50,\n  \"hooks\""},
			commands: all,
		},
		{
			name: "same event, another matcher",
			in:   `{"hooks":{"PostToolUse":[{"matcher":"Write|Edit","hooks":[{"type":"command","command":"prettier --write"}]}]}}`,
			commands: []string{"SessionStart||" + tc, "UserPromptSubmit||" + tc, "PostToolUse|Write|Edit|prettier --write",
				"PostToolUse|*|" + tc, "PostToolUseFailure|*|" + tc, "PreCompact||" + tc, "Stop||" + tc, "SessionEnd||" + tc},
		},
		{
			name: "same matcher group, another command",
			in:   `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard.sh"}]}]}}`,
			commands: []string{"PreToolUse|Bash|guard.sh", "SessionStart||" + tc, "UserPromptSubmit||" + tc, "PostToolUse|*|" + tc, "PostToolUseFailure|*|" + tc,
				"PreCompact||" + tc, "Stop||notify-send done", "Stop||" + tc, "SessionEnd||" + tc},
		},
		{
			name: "stale entry from a moved binary is replaced",
			in:   `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"'/old place/tether' agent hook","timeout":3},{"type":"command","command":"say hi"}]}]}}`,
			commands: []string{"SessionStart||" + tc, "UserPromptSubmit||" + tc, "PostToolUse|*|" + tc, "PostToolUseFailure|*|" + tc, "PreCompact||" + tc,
				"Stop||say hi", "Stop||" + tc, "SessionEnd||" + tc},
		},
		{
			name: "stale entry under an event tether no longer installs is removed",
			in:   `{"hooks":{"SessNonEnd":[{"hooks":[{"type":"command","command":"tether agent hook"}]}],"Notification":[{"hooks":[{"type":"command","command":"tether agent hook"},{"type":"command","command":"say hi"}]}]}}`,
			commands: []string{"SessionStart||" + tc, "UserPromptSubmit||" + tc, "PostToolUse|*|" + tc, "PostToolUseFailure|*|" + tc, "PreCompact||" + tc,
				"Stop||" + tc, "SessionEnd||" + tc, "Notification||say hi"},
		},
		{
			name:     "entry with extra arguments is the user's",
			in:       `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"tether agent hook --verbose"}]}]}}`,
			commands: []string{"SessionStart||" + tc, "UserPromptSubmit||" + tc, "PostToolUse|*|" + tc, "PostToolUseFailure|*|" + tc, "PreCompact||" + tc, "Stop||tether agent hook --verbose", "Stop||" + tc, "SessionEnd||" + tc},
		},
		{
			name:     "tabs, no trailing newline, unicode",
			in:       "{\n\t\"greeting\": \"héllo \\u00e9 ✓ <&>\",\n\t\"x\": [1, 2]\n}",
			keep:     []string{"{\n\t\"greeting\": \"héllo \\u00e9 ✓ <&>\",\n\t\"x\": [\n\t\t1,\n\t\t2\n\t],\n\t\"hooks\": {\n\t\t\"SessionStart\": ["},
			commands: all,
		},
		{
			name:     "four spaces",
			in:       "{\n    \"a\": true\n}\n",
			keep:     []string{"{\n    \"a\": true,\n    \"hooks\": {\n        \"SessionStart\""},
			commands: all,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudesettings.Merge("settings.json", []byte(tt.in), opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			if tt.commands != nil {
				// A file installed by an older tether gets the events added
				// since at its end: compare the entries, not the events' order.
				if c := commands(t, got); !reflect.DeepEqual(sorted(c), sorted(tt.commands)) {
					t.Fatalf("hook entries\n%q\nwant\n%q\n%s", c, tt.commands, got)
				}
			}
			for _, k := range tt.keep {
				if !strings.Contains(string(got), k) {
					t.Errorf("result lost %q:\n%s", k, got)
				}
			}
			if strings.HasSuffix(tt.in, "}") != strings.HasSuffix(string(got), "}") && tt.in != "" {
				t.Errorf("trailing newline not kept: in %q, got %q", tt.in[len(tt.in)-1:], got[len(got)-1:])
			}
			again, err := claudesettings.Merge("settings.json", got, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, got) {
				t.Fatalf("second install changed the bytes:\n%s\nthen\n%s", got, again)
			}
			back, err := claudesettings.Remove("settings.json", got)
			if err != nil {
				t.Fatal(err)
			}
			if tt.in == "" || tt.in == installed {
				if c := commands(t, back); len(c) != 0 {
					t.Fatalf("uninstall left %q", c)
				}
				return
			}
			if !reflect.DeepEqual(decode(t, back), decode(t, []byte(tt.in))) && !strings.Contains(tt.name, "stale") {
				t.Fatalf("install then uninstall is not the original:\n%s\nwant\n%s", back, tt.in)
			}
		})
	}
}

func TestRemoveKeepsOthers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "no hooks key: same bytes",
			in:   "{\"a\":1}",
			want: "{\"a\":1}",
		},
		{
			name: "no tether entries: same bytes",
			in:   "{\n\t\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}]}\n}",
			want: "{\n\t\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}]}\n}",
		},
		{
			name: "keys match exactly, as in Claude Code",
			in:   `{"hooks":{"Stop":[{"hooks":[{"TYPE":"command","Command":"tether agent hook"}]}]}}`,
			want: `{"hooks":{"Stop":[{"hooks":[{"TYPE":"command","Command":"tether agent hook"}]}]}}`,
		},
		{
			name: "tether entry shares a group",
			in:   `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"tether agent hook"},{"type":"command","command":"x"}]}]}}`,
			want: "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"x\"\n          }\n        ]\n      }\n    ]\n  }\n}",
		},
		{
			name: "an empty event array that was already empty stays",
			in:   `{"hooks":{"Stop":[],"PreCompact":[{"hooks":[{"type":"command","command":"\"/a b/tether\" agent hook"}]}]}}`,
			want: "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}",
		},
		{
			name: "hooks object emptied by removal goes",
			in:   "{\n  \"a\": 1,\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"tether agent hook\"}]}]}\n}\n",
			want: "{\n  \"a\": 1\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudesettings.Remove("s.json", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestRoundTripByteEqual(t *testing.T) {
	for _, orig := range []string{
		"{\n  \"model\": \"opus\",\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(go test:*)\"\n    ]\n  }\n}\n",
		"{\n\t\"model\": \"é\"\n}",
	} {
		in, err := claudesettings.Merge("s.json", []byte(orig), opts)
		if err != nil {
			t.Fatal(err)
		}
		out, err := claudesettings.Remove("s.json", in)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != orig {
			t.Errorf("install→uninstall: got\n%q\nwant\n%q", out, orig)
		}
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "corrupt", in: "{\n  \"a\": 1,\n  \"b\": tru\n}\n", want: "s.json:3:11: refusing to rewrite a file that is not valid JSON"},
		{name: "truncated", in: "{\n  \"a\": [1,\n", want: "s.json:3:1:"},
		{name: "trailing comma", in: "{\"a\": 1,}", want: "s.json:1:9:"},
		{name: "line comment", in: "{\n  // my settings\n  \"a\": 1\n}\n", want: "s.json:2:3: refusing to rewrite a file that is not valid JSON: comments are not allowed: Claude Code settings files are plain JSON"},
		{name: "block comment", in: "{\"a\": 1 /* x */}", want: "comments are not allowed"},
		{name: "not an object", in: "[1]", want: "s.json: top level: want a JSON object, got an array"},
		{name: "hooks not an object", in: `{"hooks": []}`, want: "s.json: hooks: want a JSON object, got an array"},
		{name: "event not an array", in: `{"hooks": {"Stop": {}}}`, want: "s.json: hooks.Stop: want an array, got an object"},
		{name: "duplicate key", in: `{"a": 1, "a": 2}`, want: `s.json:1:10: refusing to rewrite a file with a duplicate key "a"`},
		{name: "duplicate key in a group", in: "{\"hooks\": {\"Stop\": [{\"hooks\": \"\",\n \"hooks\": [{\"type\": \"command\", \"command\": \"tether agent hook\"}]}]}}",
			want: `s.json:2:2: refusing to rewrite a file with a duplicate key "hooks.Stop[0].hooks"`},
		{name: "duplicate key in an entry", in: `{"hooks": {"Stop": [{"hooks": [{"type": "x", "command": "a"}, {"type": "command", "type": "command"}]}]}}`,
			want: `duplicate key "hooks.Stop[0].hooks[1].type"`},
		{name: "duplicate key deep in the user's settings", in: `{"env": {"A": {"b": [1, {"c": 1, "c": 2}]}}}`, want: `duplicate key "env.A.b[1].c"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := claudesettings.Merge("s.json", []byte(tt.in), opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Merge error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestInstallFiles(t *testing.T) {
	dir := t.TempDir()
	path, err := claudesettings.Path(claudesettings.ScopeProject, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	// Dry run on a missing file writes nothing.
	res, err := claudesettings.Install(path, opts, true)
	if err != nil || !res.Changed || string(res.After) != installed {
		t.Fatalf("dry run: %v %+v", err, res)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dry run wrote the file: %v", err)
	}
	res, err = claudesettings.Install(path, opts, false)
	if err != nil || !res.Changed {
		t.Fatalf("install: %v %+v", err, res)
	}
	got, _ := os.ReadFile(path)
	if string(got) != installed {
		t.Fatalf("file:\n%s", got)
	}
	if res, err = claudesettings.Install(path, opts, false); err != nil || res.Changed {
		t.Fatalf("second install: %v changed=%v", err, res.Changed)
	}
	if res, err = claudesettings.Uninstall(path, "", false); err != nil || !res.Changed {
		t.Fatalf("uninstall: %v %+v", err, res)
	}
	if got, _ := os.ReadFile(path); string(got) != "{}\n" {
		t.Fatalf("after uninstall: %q", got)
	}
	// A corrupt file is refused and left unchanged.
	corrupt := []byte("{\n  \"a\": 1\n  \"b\": 2\n}\n")
	if err := os.WriteFile(path, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = claudesettings.Install(path, opts, false)
	var pe *claudesettings.ParseError
	if !errors.As(err, &pe) || pe.File != path || pe.Line != 3 || pe.Column != 3 {
		t.Fatalf("install on corrupt file: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, corrupt) {
		t.Fatalf("corrupt file was changed: %q", got)
	}
	// Uninstall of a missing file is no change.
	if res, err := claudesettings.Uninstall(filepath.Join(dir, "none.json"), "", false); err != nil || res.Changed {
		t.Fatalf("uninstall missing: %v %+v", err, res)
	}
	// A symlinked settings file stays a symlink; its target is edited.
	target := filepath.Join(dir, "dotfiles.json")
	if err := os.WriteFile(target, []byte("{}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := claudesettings.Install(link, opts, false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v", err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("target mode: %v %v", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(target); string(got) != installed {
		t.Fatalf("target:\n%s", got)
	}
}

func TestPath(t *testing.T) {
	tests := []struct {
		scope   claudesettings.Scope
		want    string
		wantErr string
	}{
		{scope: claudesettings.ScopeProject, want: "/p/.claude/settings.json"},
		{scope: claudesettings.ScopeLocal, want: "/p/.claude/settings.local.json"},
		{scope: claudesettings.ScopeUser, want: "/h/.claude/settings.json"},
		{scope: "team", wantErr: `scope: unknown value "team"`},
	}
	for _, tt := range tests {
		got, err := claudesettings.Path(tt.scope, "/p", "/h")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v", tt.scope, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q %v, want %q", tt.scope, got, err, tt.want)
		}
	}
}

func TestIsTetherCommand(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"tether agent hook", true},
		{"/usr/local/bin/tether agent hook", true},
		{"'/my dir/tether' agent hook", true},
		{`"/my dir/tether" agent hook`, true},
		{claudesettings.HookCommand("/it's/tether"), true},
		{"tether agent hook --x", false},
		{"tether-dev agent hook", false},
		{"echo; tether agent hook", false},
		{"FOO=1 tether agent hook", false},
		{"tether  agent hook", false},
		{"agent hook", false},
	}
	for _, tt := range tests {
		if got := claudesettings.IsTetherCommand(tt.cmd); got != tt.want {
			t.Errorf("IsTetherCommand(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
	if got := claudesettings.HookCommand("/a b/tether"); got != "'/a b/tether' agent hook" {
		t.Errorf("HookCommand quoting: %q", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

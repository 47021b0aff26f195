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

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// userCodexHooks is a Codex hooks.json of the user's: a hook of theirs,
// a key Codex may add, four-space indentation, no trailing newline, and a
// unicode escape that must keep its bytes.
const userCodexHooks = "{\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"./check \\u00e9\"\n                    }\n                ]\n            }\n        ]\n    },\n    \"x-note\": 1.50\n}"

func TestAgentInstallCodex(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, ".codex", "hooks.json")
	if err := os.MkdirAll(filepath.Dir(hooks), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooks, []byte(userCodexHooks), 0o644); err != nil {
		t.Fatal(err)
	}
	hookCmd := tetherBin + " agent hook --agent codex"

	out, stderr, code := run(t, "agent", "install", "codex", "--dir", dir)
	if code != 0 || out != "codex hooks installed: "+hooks+"\n" {
		t.Fatalf("install: exit %d, %q %s", code, out, stderr)
	}
	installed := readFile(t, hooks)
	for _, want := range []string{
		"{\n    \"hooks\": {\n        \"PreToolUse\": [\n", `"command": "./check \u00e9"`, `"x-note": 1.50`,
		`"SessionEnd": [`, `"timeout": 3`, `"matcher": "*"`,
	} {
		if !strings.Contains(installed, want) {
			t.Errorf("installed file lacks %q:\n%s", want, installed)
		}
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"} {
		if !strings.Contains(installed, `"`+ev+`": [`) {
			t.Errorf("no %s group:\n%s", ev, installed)
		}
	}
	if n := strings.Count(installed, hookCmd); n != 6 {
		t.Fatalf("%d tether entries, want 6:\n%s", n, installed)
	}
	// A Claude Code entry (no --agent) in the same file is not Codex's:
	// the Codex installer leaves it.
	if strings.Contains(installed, tetherBin+" agent hook\"") {
		t.Fatalf("an entry without --agent codex:\n%s", installed)
	}

	out, _, code = run(t, "agent", "install", "codex", "--dir", dir)
	if code != 0 || out != "codex hooks unchanged: "+hooks+"\n" || readFile(t, hooks) != installed {
		t.Fatalf("second install: exit %d, %q", code, out)
	}
	out, _, code = run(t, "agent", "uninstall", "codex", "--dir", dir)
	if code != 0 || out != "codex hooks removed: "+hooks+"\n" {
		t.Fatalf("uninstall: exit %d, %q", code, out)
	}
	if got := readFile(t, hooks); got != userCodexHooks {
		t.Fatalf("uninstall did not give the file back byte for byte:\n%s", got)
	}

	// User scope: $CODEX_HOME/hooks.json, else ~/.codex/hooks.json.
	home, codexHome := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		env  []string
		path string
	}{
		{[]string{"HOME=" + home, "CODEX_HOME=" + codexHome}, filepath.Join(codexHome, "hooks.json")},
		{[]string{"HOME=" + home, "CODEX_HOME="}, filepath.Join(home, ".codex", "hooks.json")},
	} {
		cmd := exec.Command(tetherBin, "agent", "install", "codex", "--scope", "user", "--dir", dir)
		cmd.Env = append(os.Environ(), tc.env...)
		if out, stderr, code := runCommand(t, cmd); code != 0 || out != "codex hooks installed: "+tc.path+"\n" {
			t.Fatalf("user scope: exit %d, %q %s", code, out, stderr)
		}
	}
}

func TestAgentInstallCodexRefusals(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, ".codex", "hooks.json")
	if err := os.MkdirAll(filepath.Dir(hooks), 0o755); err != nil {
		t.Fatal(err)
	}
	const corrupt = "{\n  \"hooks\": {}\n  // mine\n}\n"
	if err := os.WriteFile(hooks, []byte(corrupt), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "corrupt file", args: []string{"install", "codex", "--dir", dir}, want: hooks + ":3:3: refusing to rewrite a file that is not valid JSON"},
		{name: "comment", args: []string{"install", "codex", "--dir", dir}, want: "Codex hooks files are plain JSON"},
		{name: "corrupt file, uninstall", args: []string{"uninstall", "codex", "--dir", dir}, want: hooks + ":3:3:"},
		{name: "scope codex has not", args: []string{"install", "codex", "--scope", "local", "--dir", dir}, want: `--scope: unknown value "local" for codex`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, append([]string{"agent"}, tt.args...)...)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q, want %q", code, stderr, tt.want)
			}
			if readFile(t, hooks) != corrupt {
				t.Fatal("the file was changed")
			}
		})
	}
}

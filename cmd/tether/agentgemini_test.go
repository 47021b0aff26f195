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

// userGeminiSettings is a Gemini CLI settings file of the user's: comments,
// a hook of theirs, four-space indentation and no trailing newline.
const userGeminiSettings = "// my settings\n{\n    \"ui\": {\"theme\": \"GitHub\"}, /* kept */\n    \"hooks\": {\n        \"BeforeTool\": [\n            {\n                \"matcher\": \"write_.*\",\n                \"hooks\": [{\"type\": \"command\", \"command\": \"./check \\u00e9\"}]\n            }\n        ]\n    }\n}"

func TestAgentInstallGemini(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(userGeminiSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, "agent", "install", "gemini", "--dir", dir)
	if code != 0 || out != "gemini hooks installed: "+settings+"\n" {
		t.Fatalf("install: exit %d, %q %s", code, out, stderr)
	}
	installed := readFile(t, settings)
	for _, want := range []string{
		"// my settings\n{\n    \"ui\": {\"theme\": \"GitHub\"}, /* kept */\n", `"command": "./check \u00e9"`,
		"\n        \"SessionStart\": [\n            {\n                \"hooks\": [\n",
		`"timeout": 10000`, `"matcher": "*"`, `"name": "tether"`,
	} {
		if !strings.Contains(installed, want) {
			t.Errorf("installed file lacks %q:\n%s", want, installed)
		}
	}
	if n := strings.Count(installed, tetherBin+" agent hook --agent gemini"); n != 6 {
		t.Fatalf("%d tether entries, want 6:\n%s", n, installed)
	}
	out, _, code = run(t, "agent", "install", "gemini", "--dir", dir)
	if code != 0 || out != "gemini hooks unchanged: "+settings+"\n" || readFile(t, settings) != installed {
		t.Fatalf("second install: exit %d, %q", code, out)
	}
	out, _, code = run(t, "agent", "uninstall", "gemini", "--dir", dir)
	if code != 0 || out != "gemini hooks removed: "+settings+"\n" {
		t.Fatalf("uninstall: exit %d, %q", code, out)
	}
	if got := readFile(t, settings); got != userGeminiSettings {
		t.Fatalf("uninstall did not give the file back byte for byte:\n%s", got)
	}

	// User scope: $GEMINI_CLI_HOME/.gemini/settings.json, else ~/.gemini.
	home, geminiHome := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		env  []string
		path string
	}{
		{[]string{"HOME=" + home, "GEMINI_CLI_HOME=" + geminiHome}, filepath.Join(geminiHome, ".gemini", "settings.json")},
		{[]string{"HOME=" + home, "GEMINI_CLI_HOME="}, filepath.Join(home, ".gemini", "settings.json")},
	} {
		cmd := exec.Command(tetherBin, "agent", "install", "gemini", "--scope", "user", "--dir", dir)
		cmd.Env = append(os.Environ(), tc.env...)
		if out, stderr, code := runCommand(t, cmd); code != 0 || out != "gemini hooks installed: "+tc.path+"\n" {
			t.Fatalf("user scope: exit %d, %q %s", code, out, stderr)
		}
	}
}

func TestAgentInstallGeminiRefusals(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	const corrupt = "{\n  \"hooks\": {},\n  // mine\n}\n"
	if err := os.WriteFile(settings, []byte(corrupt), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "trailing comma", args: []string{"install", "gemini", "--dir", dir}, want: settings + ":4:1: refusing to rewrite a file that is not valid JSON (comments allowed)"},
		{name: "uninstall", args: []string{"uninstall", "gemini", "--dir", dir}, want: settings + ":4:1:"},
		{name: "scope gemini has not", args: []string{"install", "gemini", "--scope", "local", "--dir", dir}, want: `--scope: unknown value "local" for gemini`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, append([]string{"agent"}, tt.args...)...)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q, want %q", code, stderr, tt.want)
			}
			if readFile(t, settings) != corrupt {
				t.Fatal("the file was changed")
			}
		})
	}
}

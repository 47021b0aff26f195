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
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
)

// userSettings is a project settings file with a key and a hook of the
// user's, indented with tabs and without a trailing newline.
const userSettings = "{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"PostToolUse\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"Write\",\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"gofmt -l .\"\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t]\n\t}\n}"

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func semantic(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

func TestAgentInstallClaude(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	hookCmd := claudesettings.HookCommand(tetherBin)

	// A dry run prints the result and writes nothing.
	out, stderr, code := run(t, "agent", "install", "claude", "--dir", dir, "--dry-run")
	if code != 0 || !strings.Contains(out, hookCmd) || !strings.Contains(out, `"command": "gofmt -l ."`) {
		t.Fatalf("dry run: exit %d, %s\n%s", code, stderr, out)
	}
	if readFile(t, settings) != userSettings {
		t.Fatal("the dry run wrote the file")
	}

	out, stderr, code = run(t, "agent", "install", "claude", "--dir", dir)
	if code != 0 || out != "claude hooks installed: "+settings+"\n" {
		t.Fatalf("install: exit %d, %q %s", code, out, stderr)
	}
	installed := readFile(t, settings)
	if !strings.HasPrefix(installed, "{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"PostToolUse\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"Write\"") {
		t.Fatalf("the user's key, hook or tabs were not kept:\n%s", installed)
	}
	if n := strings.Count(installed, hookCmd); n != len(claudesettings.Events) {
		t.Fatalf("%d tether entries, want %d:\n%s", n, len(claudesettings.Events), installed)
	}

	// Idempotent.
	out, _, code = run(t, "agent", "install", "claude", "--dir", dir, "--scope", "project")
	if code != 0 || out != "claude hooks unchanged: "+settings+"\n" || readFile(t, settings) != installed {
		t.Fatalf("second install: exit %d, %q", code, out)
	}

	// Claude Code (the claudesim stand-in) reads the result and runs tether's
	// command for each event, with the matcher "*" hitting every tool.
	events := simulate(t, dir, "actions:\n- prompt: go\n- run: 'true'\n- write: {path: f.txt, content: x}\n- compact: {}\n- stop: {}\n")
	want := []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUse", "PreCompact", "SessionStart", "Stop", "SessionEnd"}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("tether's command ran for %v, want %v", events, want)
	}

	out, _, code = run(t, "agent", "uninstall", "claude", "--dir", dir)
	if code != 0 || out != "claude hooks removed: "+settings+"\n" {
		t.Fatalf("uninstall: exit %d, %q", code, out)
	}
	if got := readFile(t, settings); !reflect.DeepEqual(semantic(t, got), semantic(t, userSettings)) || strings.Contains(got, "agent hook") {
		t.Fatalf("uninstall did not restore the original:\n%s", got)
	}
	out, _, code = run(t, "agent", "uninstall", "claude", "--dir", dir)
	if code != 0 || out != "claude hooks unchanged: "+settings+"\n" {
		t.Fatalf("second uninstall: exit %d, %q", code, out)
	}
}

func TestAgentInstallClaudeScopes(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tests := []struct {
		scope string
		path  string
	}{
		{scope: "local", path: filepath.Join(dir, ".claude", "settings.local.json")},
		{scope: "user", path: filepath.Join(home, ".claude", "settings.json")},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			cmd := exec.Command(tetherBin, "agent", "install", "claude", "--scope", tt.scope, "--dir", dir)
			cmd.Env = append(os.Environ(), "HOME="+home)
			out, stderr, code := runCommand(t, cmd)
			if code != 0 || out != "claude hooks installed: "+tt.path+"\n" {
				t.Fatalf("exit %d, %q %s", code, out, stderr)
			}
			if !strings.Contains(readFile(t, tt.path), claudesettings.HookCommand(tetherBin)) {
				t.Fatal("no tether entry")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatalf("the project file was written: %v", err)
	}
}

func TestAgentInstallClaudeRefusals(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	const corrupt = "{\n  \"model\": \"opus\"\n  \"env\": {}\n}\n"
	if err := os.WriteFile(settings, []byte(corrupt), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "corrupt file", args: []string{"install", "claude", "--dir", dir}, want: settings + ":3:3: refusing to rewrite a file that is not valid JSON"},
		{name: "corrupt file, uninstall", args: []string{"uninstall", "claude", "--dir", dir}, want: settings + ":3:3:"},
		{name: "unknown scope", args: []string{"install", "claude", "--scope", "team", "--dir", dir}, want: `--scope: unknown value "team"`},
		{name: "unknown agent", args: []string{"install", "cursor", "--dir", dir}, want: `invalid argument "cursor"`},
		{name: "no agent", args: []string{"install"}, want: "accepts 1 arg"},
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

// simulate builds hack/claudesim, plays script in dir, and returns the events
// for which tether's hook command ran, in order.
func simulate(t *testing.T, dir, script string) []string {
	t.Helper()
	sim := claudesimBin(t)
	sp := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), "transcript.jsonl")
	if _, stderr, code := runCommand(t, exec.Command(sim, "-project", dir, "-script", sp, "-transcript", tr)); code != 0 {
		t.Fatalf("claudesim: exit %d: %s", code, stderr)
	}
	f, err := os.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var events []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct{ Kind, Event, Command string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind == "hook" && e.Command == claudesettings.HookCommand(tetherBin) {
			events = append(events, e.Event)
		}
	}
	return events
}

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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestAgentPrompt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	c := openStore(t, dir).Client()
	putHook(t, c, &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: "add-rate-limit", Namespace: "team-a"},
		Spec:       v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}},
	})
	want, err := os.ReadFile(filepath.Join("..", "..", "internal", "agent", "prompt", "testdata", "namespaced.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, "--store", dir, "-n", "team-a", "agent", "prompt", "add-rate-limit")
	if code != 0 || out != string(want) {
		t.Errorf("agent prompt: exit %d, stderr %q, stdout:\n%s\nwant the golden file:\n%s", code, stderr, out, want)
	}
	if _, stderr, code := run(t, "--store", dir, "agent", "prompt", "add-rate-limit"); code != 2 || !strings.Contains(stderr, `"add-rate-limit" not found`) {
		t.Errorf("prompt for a Hook of another namespace: exit %d, stderr %q; want 2, not found", code, stderr)
	}
	if _, stderr, code := run(t, "--store", dir, "agent", "prompt"); code != 1 || !strings.Contains(stderr, "exactly one argument") {
		t.Errorf("prompt without a Hook: exit %d, stderr %q; want 1", code, stderr)
	}
}

// TestAgentPromptWrite drives `tether agent prompt --write` and `--remove`:
// the block goes into the agent's instructions file at the repository root
// between its markers, a second write changes nothing, --remove gives the
// file back byte for byte (and removes the one tether created), and a
// symbolic link, a malformed block or a conflicting flag is refused with
// the file left alone.
func TestAgentPromptWrite(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "store")
	c := openStore(t, store).Client()
	putHook(t, c, &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: "fix-login", Namespace: "default"},
		Spec:       v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}},
	})
	ws := filepath.Join(root, "ws")
	sub := filepath.Join(ws, "src", "pkg")
	for _, d := range []string{filepath.Join(ws, ".git"), sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tether := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(tetherBin, append([]string{"--store", store}, args...)...)
		cmd.Dir = sub
		return runCommand(t, cmd)
	}
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	text, _, _ := tether("agent", "prompt", "fix-login")

	agents := filepath.Join(ws, "AGENTS.md")
	orig := "# Project\n\nKeep it short." // no final newline
	if err := os.WriteFile(agents, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"write", []string{"--write", "--agent", "codex"}, 0, "tether block written: " + agents, ""},
		{"again", []string{"--write", "--agent", "codex"}, 0, "tether block unchanged: " + agents, ""},
		{"claude, at the repository root", []string{"--write"}, 0, "tether block written: " + filepath.Join(ws, "CLAUDE.md"), ""},
		{"both flags", []string{"--write", "--remove"}, 1, "", "--write and --remove"},
		{"unknown agent", []string{"--write", "--agent", "aider"}, 1, "", `--agent: unknown agent "aider"`},
	}
	for _, tt := range tests {
		out, stderr, code := tether(append([]string{"agent", "prompt", "fix-login"}, tt.args...)...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.name, code, out, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
	want := orig + "\n\n<!-- tether:begin fix-login noeol -->\n" + text + "<!-- tether:end -->\n"
	if got := read("AGENTS.md"); got != want {
		t.Fatalf("AGENTS.md after --write:\n%s\nwant:\n%s", got, want)
	}
	if got := read("CLAUDE.md"); got != "<!-- tether:begin fix-login created -->\n"+text+"<!-- tether:end -->\n" {
		t.Fatalf("CLAUDE.md tether created:\n%s", got)
	}
	if _, stderr, code := tether("agent", "prompt", "other", "--remove", "--agent", "codex"); code == 0 || !strings.Contains(stderr, agents+":5: the tether block is hook fix-login's, not other's") {
		t.Fatalf("--remove of another Hook's block: exit %d, stderr %q", code, stderr)
	}

	if out, stderr, code := tether("agent", "prompt", "fix-login", "--remove", "--agent", "codex", "--dir", ws); code != 0 || out != "tether block removed: "+agents+"\n" {
		t.Fatalf("--remove: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if got := read("AGENTS.md"); got != orig {
		t.Fatalf("AGENTS.md after --remove %q, want the bytes before %q", got, orig)
	}
	if fi, err := os.Stat(agents); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("AGENTS.md mode %v, %v; want 0640 kept", fi.Mode(), err)
	}
	if out, _, code := tether("agent", "prompt", "fix-login", "--remove"); code != 0 || !strings.Contains(out, "removed with the file tether created") {
		t.Fatalf("--remove of CLAUDE.md: exit %d, %q", code, out)
	}
	if _, err := os.Lstat(filepath.Join(ws, "CLAUDE.md")); !os.IsNotExist(err) {
		t.Fatalf("CLAUDE.md tether created is still there: %v", err)
	}
	if out, _, code := tether("agent", "prompt", "fix-login", "--remove"); code != 0 || out != "tether block unchanged: "+filepath.Join(ws, "CLAUDE.md")+"\n" {
		t.Fatalf("--remove with no file: exit %d, %q", code, out)
	}

	// Refused, and nothing changed.
	target := filepath.Join(root, "elsewhere.md")
	if err := os.WriteFile(target, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gemini := filepath.Join(ws, "GEMINI.md")
	if err := os.Symlink(target, gemini); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := tether("agent", "prompt", "fix-login", "--write", "--agent", "gemini"); code == 0 || !strings.Contains(stderr, gemini+" is a symbolic link") {
		t.Fatalf("--write through a symbolic link: exit %d, stderr %q", code, stderr)
	}
	if data, _ := os.ReadFile(target); string(data) != "mine\n" {
		t.Fatalf("written through the link: %q", data)
	}
	bad := "# Project\n<!-- tether:begin fix-login -->\nhalf a block\n"
	if err := os.WriteFile(agents, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := tether("agent", "prompt", "fix-login", "--write", "--agent", "codex"); code == 0 || !strings.Contains(stderr, agents+":2: the tether block has no <!-- tether:end --> line") {
		t.Fatalf("--write into a malformed block: exit %d, stderr %q", code, stderr)
	}
	if got := read("AGENTS.md"); got != bad {
		t.Fatalf("a malformed file was changed: %q", got)
	}
}

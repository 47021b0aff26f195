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
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestRecoverLostWork checks the restore-first rule through the binary:
// when files a checkpoint holds are deleted or reverted in the workspace,
// tether recover and the SessionStart context put the exact restore
// command before the step's next action, restore only the lost paths when
// other local changes exist, and skip a checkpoint taken after the loss.
func TestRecoverLostWork(t *testing.T) {
	cases := []struct {
		name string
		// lose damages the workspace after the checkpoint "wip".
		lose func(e *agentEnv)
		// after takes a checkpoint after the loss.
		after   bool
		want    []string
		notWant []string
	}{
		{
			name: "all lost: checkout and clean",
			lose: func(e *agentEnv) { e.git("checkout", "--", "."); e.git("clean", "-fdq") },
			want: []string{"**Work was lost from the workspace.**", "- `README.md`: reverted", "- `src/new.go`: deleted",
				"tether checkpoint restore CP -- README.md src/new.go", "After that: "},
			notWant: []string{"other local change"},
		},
		{
			name: "partially lost",
			lose: func(e *agentEnv) { rm(e, "src/new.go") },
			want: []string{"- `src/new.go`: deleted", "tether checkpoint restore CP -- src/new.go\n", "After that: "},
		},
		{
			name: "a reverted file",
			lose: func(e *agentEnv) { e.git("checkout", "--", "README.md") },
			want: []string{"- `README.md`: reverted", "tether checkpoint restore CP -- README.md\n"},
		},
		{
			name: "lost with other local changes",
			lose: func(e *agentEnv) {
				rm(e, "src/new.go")
				e.write("README.md", "further work\n")
				e.write("other.txt", "other\n")
			},
			want: []string{"tether checkpoint restore CP -- src/new.go\n", "keeps your 2 other local change(s)",
				"- `README.md`: modified", "- `other.txt`: added", "--to DIR"},
		},
		{
			name:  "a checkpoint taken after the wipe",
			lose:  func(e *agentEnv) { e.git("checkout", "--", "."); e.git("clean", "-fdq") },
			after: true,
			want:  []string{"tether checkpoint restore CP -- README.md src/new.go", "is newer but was taken after the files were lost"},
		},
		{
			name:    "further work is not lost",
			lose:    func(e *agentEnv) { e.write("README.md", "further work\n") },
			notWant: []string{"Work was lost", "tether checkpoint restore CP --"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newAgentEnv(t)
			e.createHook("lw", 3, 0, v1.Step{Name: "only"})
			e.write("README.md", "work in progress\n")
			e.write("src/new.go", "package src\n")
			cp := e.checkpointed("checkpoint", "lw", "-m", "wip")
			tc.lose(e)
			var later string
			if tc.after {
				later = e.checkpointed("checkpoint", "lw", "-m", "after the wipe").Name
			}
			if tc.after {
				_, diffErr, code := e.tether("checkpoint", "diff", "lw")
				if want := "note: checkpoint " + later + " was taken after 2 file(s) were lost; " + cp.Name + " still holds them"; code != 0 || !strings.Contains(diffErr, want) {
					t.Errorf("checkpoint diff: exit %d, stderr %q lacks %q", code, diffErr, want)
				}
			}
			cmd := e.command("recover", "lw")
			cmd.Dir = os.TempDir()
			out, stderr, code := runCommand(t, cmd)
			if code != 0 {
				t.Fatalf("recover: exit %d: %s", code, stderr)
			}
			hookOut, _ := e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup", "transcript_path": "transcripts/s1.jsonl"})
			stopOut, _ := e.okHook(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})
			var block struct{ Decision, Reason string }
			if err := json.Unmarshal([]byte(stopOut), &block); err != nil || block.Decision != "block" {
				t.Fatalf("Stop did not continue the agent (%v): %q", err, stopOut)
			}
			for where, text := range map[string]string{"recover": out, "SessionStart": sessionContext(t, hookOut), "Stop": block.Reason} {
				for _, w := range tc.want {
					w = strings.ReplaceAll(w, "CP", cp.Name)
					if !strings.Contains(text, w) {
						t.Errorf("%s lacks %q:\n%s", where, w, text)
					}
				}
				for _, w := range tc.notWant {
					w = strings.ReplaceAll(w, "CP", cp.Name)
					if strings.Contains(text, w) {
						t.Errorf("%s has %q:\n%s", where, w, text)
					}
				}
				if later != "" && !strings.Contains(text, "`"+later+"` is newer") {
					t.Errorf("%s does not say why %s was skipped:\n%s", where, later, text)
				}
				if i, j := strings.Index(text, "Work was lost"), strings.Index(text, "After that: "); i >= 0 && (j < i) {
					t.Errorf("%s: the restore does not come before the next action:\n%s", where, text)
				}
			}
			// Doing what the file says brings the work back and keeps the rest.
			restore := restoreCommand(out)
			if restore == nil {
				return
			}
			before := e.read("README.md")
			if _, stderr, code := e.tether(restore...); code != 0 {
				t.Fatalf("the printed restore %q: exit %d: %s", restore, code, stderr)
			}
			if got := e.read("src/new.go"); got != "package src\n" {
				t.Errorf("src/new.go after the restore: %q", got)
			}
			if got, want := e.read("README.md"), "work in progress\n"; before == "further work\n" {
				if got != before {
					t.Errorf("the restore overwrote further work in README.md: %q", got)
				}
			} else if got != want {
				t.Errorf("README.md after the restore: %q, want %q", got, want)
			}
			if strings.Contains(out, "other.txt") && e.read("other.txt") != "other\n" {
				t.Errorf("the restore changed other.txt: %q", e.read("other.txt"))
			}
			if again, _, _ := e.tether("recover", "lw"); strings.Contains(again, "Work was lost") {
				t.Errorf("recover after the restore still says work was lost:\n%s", again)
			}
		})
	}
}

// restoreCommand is the arguments of the restore command that the "What to
// do now" section of a recovery file prints, or nil.
func restoreCommand(recovery string) []string {
	for _, line := range strings.Split(recovery, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == "tether" && f[1] == "checkpoint" && f[2] == "restore" && slices.Contains(f, "--") {
			return f[1:]
		}
	}
	return nil
}

// TestRestorePaths restores named paths only: a file whose content neither
// the checkpoint nor HEAD holds is refused unless --force (compared by
// content, so an assume-unchanged file counts), and a path outside the
// repository or one the snapshot does not hold is refused by name.
func TestRestorePaths(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("rp", 3, 0, v1.Step{Name: "only"})
	e.write("README.md", "work in progress\n")
	e.write("a.txt", "a\n")
	e.git("add", "a.txt")
	e.git("commit", "-qm", "a")
	e.write("a.txt", "snapshot a\n")
	cp := e.checkpointed("checkpoint", "rp", "-m", "wip")
	e.write("README.md", "unsaved\n")
	e.write("a.txt", "unsaved a\n")
	e.git("update-index", "--assume-unchanged", "a.txt")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "README.md"}, "README.md"},
		{[]string{"--", "a.txt"}, "a.txt"},
		{[]string{"--", "../outside"}, `path "../outside" is outside the repository`},
		{[]string{"--", "missing.txt"}, `the snapshot holds no file at "missing.txt"`},
		{[]string{"README.md"}, "one CHECKPOINT, then -- and the paths"},
	} {
		_, stderr, code := e.tether(append([]string{"checkpoint", "restore", cp.Name}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("restore %v: exit %d, stderr %q; want a refusal naming %q", tc.args, code, stderr, tc.want)
		}
	}
	if e.read("README.md") != "unsaved\n" || e.read("a.txt") != "unsaved a\n" {
		t.Fatalf("a refused restore changed files: README.md %q, a.txt %q", e.read("README.md"), e.read("a.txt"))
	}
	if _, stderr, code := e.tether("checkpoint", "restore", cp.Name, "--force", "--", "a.txt"); code != 0 {
		t.Fatalf("restore --force -- a.txt: exit %d: %s", code, stderr)
	}
	if e.read("a.txt") != "snapshot a\n" || e.read("README.md") != "unsaved\n" {
		t.Errorf("after restore --force -- a.txt: a.txt %q, README.md %q; want only a.txt restored", e.read("a.txt"), e.read("README.md"))
	}
}

func rm(e *agentEnv, name string) {
	e.t.Helper()
	if err := os.Remove(filepath.Join(e.workspace, name)); err != nil {
		e.t.Fatal(err)
	}
}

// read is the content of the workspace file name; empty when it is missing.
func (e *agentEnv) read(name string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.workspace, name))
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	return string(data)
}

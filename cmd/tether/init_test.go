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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// initEnv is the environment of `tether init` in the tests: no TETHER_*
// variables of the machine, and HOME and git's configuration in root.
func initEnv(root string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TETHER_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+root, "TETHER_HOME="+filepath.Join(root, "tether-home"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(root, "gitconfig"))
}

func TestInit(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q", repo)
	git.Env = initEnv(root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	plain := filepath.Join(root, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	hooksDir := filepath.Join(repo, ".git", "hooks")
	initIn := func(dir string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(tetherBin, append([]string{"init"}, args...)...)
		cmd.Dir, cmd.Env = dir, initEnv(root)
		return runCommand(t, cmd)
	}

	cases := []struct {
		name     string
		dir      string
		args     []string
		wantCode int
		want     []string // in stdout, or in stderr when wantCode != 0
		notWant  []string
	}{
		{name: "first run", dir: repo, args: []string{"--agent", "claude", "--git-hooks"}, want: []string{
			"store created: " + filepath.Join(repo, ".tether") + "\n",
			"claude hooks installed: " + filepath.Join(repo, ".claude", "settings.json") + "\n",
			"installed post-commit (" + filepath.Join(hooksDir, "post-commit") + ")\n",
			"installed pre-push (" + filepath.Join(hooksDir, "pre-push") + ")\n",
			"next:\n", "  tether apply -f task.yaml", "  tether run", "  tether agent bind HOOK",
		}, notWant: []string{"--store"}},
		{name: "second run", dir: repo, args: []string{"--agent", "claude", "--git-hooks"}, want: []string{
			"store exists: " + filepath.Join(repo, ".tether") + "\n",
			"claude hooks unchanged: " + filepath.Join(repo, ".claude", "settings.json") + "\n",
			"post-commit unchanged (", "pre-push unchanged (",
		}},
		{name: "store only, from --dir", dir: root, args: []string{"--dir", plain}, want: []string{
			"store created: " + filepath.Join(plain, ".tether") + "\n", "  tether agent prompt HOOK",
		}, notWant: []string{"claude", "post-commit"}},
		{name: "local scope", dir: plain, args: []string{"--agent", "claude", "--scope", "local"}, want: []string{
			"store exists: ", "claude hooks installed: " + filepath.Join(plain, ".claude", "settings.local.json") + "\n",
		}},
		{name: "a store elsewhere is named", dir: plain, args: []string{"--store", filepath.Join(root, "elsewhere"), "-n", "team-a"}, want: []string{
			"store created: " + filepath.Join(root, "elsewhere") + "\n",
			"  tether --store " + filepath.Join(root, "elsewhere") + " -n team-a apply -f task.yaml",
		}},
		{name: "missing dir", dir: root, args: []string{"--dir", filepath.Join(root, "nope")}, wantCode: 1, want: []string{filepath.Join(root, "nope")}},
		{name: "unknown agent", dir: repo, args: []string{"--agent", "cursor"}, wantCode: 1, want: []string{`--agent: unknown agent "cursor"`}},
		{name: "scope without agent", dir: repo, args: []string{"--scope", "user"}, wantCode: 1, want: []string{"--scope: only with --agent claude"}},
		{name: "bad scope", dir: repo, args: []string{"--agent", "claude", "--scope", "team"}, wantCode: 1, want: []string{`scope: unknown value "team"`}},
		{name: "git hooks outside git", dir: plain, args: []string{"--git-hooks"}, wantCode: 1, want: []string{plain}},
		{name: "arguments", dir: repo, args: []string{"extra"}, wantCode: 1, want: []string{"unknown command"}},
	}
	for _, c := range cases {
		out, stderr, code := initIn(c.dir, c.args...)
		text := out
		if c.wantCode != 0 {
			text = stderr
		}
		if code != c.wantCode {
			t.Errorf("%s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", c.name, code, c.wantCode, out, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q in:\n%s", c.name, w, text)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s: unexpected %q in:\n%s", c.name, w, out)
			}
		}
	}

	// The store init created is the one every verb finds from the repository.
	cmd := exec.Command(tetherBin, "get", "hooks")
	cmd.Dir, cmd.Env = repo, initEnv(root)
	if _, stderr, code := runCommand(t, cmd); code != 0 || !strings.Contains(stderr, "No resources found") {
		t.Errorf("get hooks in the initialised repository: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, ".claude", "settings.json")); err != nil {
		t.Error(err)
	}
}

// tree lists every path under root with its size and mode, for comparing
// what a command left behind.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size := fi.Size()
		if d.IsDir() {
			size = 0
		}
		fmt.Fprintf(&b, "%s %v %d\n", path, fi.Mode(), size)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestInitRefusalChangesNothing runs tether init in ways it refuses and
// checks that each refusal left the directory, the home directory and
// tether's home as they were: no store, no agent settings, no git hooks.
func TestInitRefusalChangesNothing(t *testing.T) {
	cases := []struct {
		name string
		// setup prepares root/work; git tells whether it is a repository.
		git   bool
		setup func(t *testing.T, work string)
		args  []string
		want  string
	}{
		{name: "git hooks outside a git repository", args: []string{"--agent", "claude", "--git-hooks"}, want: "not in a git repository"},
		{name: "an unknown scope", args: []string{"--agent", "claude", "--scope", "team"}, want: `scope: unknown value "team"`},
		{name: "agent settings that are not JSON", git: true, setup: func(t *testing.T, work string) {
			must(t, os.MkdirAll(filepath.Join(work, ".claude"), 0o755))
			must(t, os.WriteFile(filepath.Join(work, ".claude", "settings.json"), []byte("{not json"), 0o644))
		}, args: []string{"--agent", "claude", "--git-hooks"}, want: "settings.json"},
		{name: "a git hook tether will not overwrite", git: true, setup: func(t *testing.T, work string) {
			hooks := filepath.Join(work, ".git", "hooks")
			must(t, os.WriteFile(filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\necho mine\n"), 0o755))
			must(t, os.WriteFile(filepath.Join(hooks, "pre-push.tether-chained"), []byte("#!/bin/sh\necho other\n"), 0o755))
		}, args: []string{"--agent", "claude", "--git-hooks"}, want: "pre-push"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			work := filepath.Join(root, "work")
			must(t, os.MkdirAll(work, 0o755))
			if c.git {
				git := exec.Command("git", "init", "-q", work)
				git.Env = initEnv(root)
				if out, err := git.CombinedOutput(); err != nil {
					t.Fatalf("git init: %v\n%s", err, out)
				}
			}
			if c.setup != nil {
				c.setup(t, work)
			}
			before := tree(t, root)
			cmd := exec.Command(tetherBin, append([]string{"init"}, c.args...)...)
			cmd.Dir, cmd.Env = work, initEnv(root)
			out, stderr, code := runCommand(t, cmd)
			if code != 1 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want 1 with %q\nstdout:\n%s\nstderr:\n%s", code, c.want, out, stderr)
			}
			if after := tree(t, root); after != before {
				t.Errorf("the refused init changed files:\nbefore:\n%s\nafter:\n%s\nstdout:\n%s", before, after, out)
			}
		})
	}
}

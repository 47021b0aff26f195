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

package snapshot_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitT runs git in dir as a user would, with a fixed identity, and fails
// the test on error.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitE(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitE(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo is a repository on branch main with one commit of tracked.txt,
// lib/code.go and a .gitignore that ignores *.log and build/.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	write(t, dir, "tracked.txt", "tracked v1\n")
	write(t, dir, "lib/code.go", "package lib\n")
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// userState is everything of the user's git state that a capture must not touch.
type userState struct {
	status, stash, head, heads, symbolic string
	index                                []byte
}

func stateOf(t testing.TB, dir string) userState {
	t.Helper()
	idx, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	head, _ := gitE(dir, "rev-parse", "-q", "--verify", "HEAD")
	sym, _ := gitE(dir, "symbolic-ref", "-q", "HEAD")
	return userState{
		// --no-optional-locks: reading the state must not refresh the index.
		status:   gitT(t, dir, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all"),
		stash:    gitT(t, dir, "stash", "list"),
		head:     head,
		symbolic: sym,
		heads:    gitT(t, dir, "for-each-ref", "refs/heads"),
		index:    idx,
	}
}

// lsTree maps each path of commit's tree to "mode type" and its content.
func lsTree(t testing.TB, dir, commit string) map[string]string {
	t.Helper()
	out := gitT(t, dir, "ls-tree", "-r", "-z", commit)
	files := map[string]string{}
	for _, e := range strings.Split(out, "\x00") {
		if e == "" {
			continue
		}
		meta, path, _ := strings.Cut(e, "\t")
		f := strings.Fields(meta)
		files[path] = f[0] + " " + gitT(t, dir, "cat-file", "-p", f[2])
	}
	return files
}

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

package gitchanges_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/gitchanges"
)

// snapshotRepo makes a repository with committed a.txt and b.txt, an
// untracked u.txt, an ignored file, and a snapshot commit of the whole
// working tree built with a temporary index, as a checkpoint does.
func snapshotRepo(t *testing.T) (dir, snapshot string) {
	t.Helper()
	dir = t.TempDir()
	git := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(nil, "init", "-q")
	write("a.txt", "a\n")
	write("b.txt", "b\n")
	write(".gitignore", "*.log\n")
	git(nil, "add", ".")
	git(nil, "commit", "-q", "-m", "init")
	write("u.txt", "untracked\n")
	write("x.log", "ignored\n")
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	git(index, "add", "-A")
	tree := git(index, "write-tree")
	snapshot = git(nil, "commit-tree", tree, "-p", "HEAD", "-m", "snapshot")
	return dir, snapshot
}

func TestSince(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string
	}{
		{name: "nothing changed, untracked file included in the snapshot", change: func(*testing.T, string) {}},
		{name: "a tracked file modified", change: func(t *testing.T, dir string) { writeFile(t, dir, "a.txt", "A\n") }, want: []string{"a.txt"}},
		{name: "an untracked file modified", change: func(t *testing.T, dir string) { writeFile(t, dir, "u.txt", "U\n") }, want: []string{"u.txt"}},
		{name: "a new file with a space", change: func(t *testing.T, dir string) { writeFile(t, dir, "new file.txt", "n\n") }, want: []string{"new file.txt"}},
		{name: "a file deleted", change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"b.txt"}},
		{name: "an ignored file is not listed", change: func(t *testing.T, dir string) { writeFile(t, dir, "y.log", "y\n") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, snapshot := snapshotRepo(t)
			tc.change(t, dir)
			got, err := gitchanges.Since(context.Background(), dir, snapshot)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Since = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := gitchanges.Since(context.Background(), t.TempDir(), "HEAD"); err == nil {
		t.Error("Since outside a repository gave no error")
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

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

package stepfiles_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
	"github.com/tether-dev/tether/internal/workspace/stepfiles"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// tree is the workspace's tree as a checkpoint's snapshot holds it.
func tree(t *testing.T, ws string) string {
	t.Helper()
	id, err := snapshot.WorkspaceTree(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBegin picks the base of a step on real repositories: the step's own
// base, else the last checkpoint's tree, else the workspace as it is; a
// base git no longer holds is passed over.
func TestBegin(t *testing.T) {
	const gone = "0123456789abcdef0123456789abcdef01234567"
	ctx := context.Background()
	cases := []struct {
		name string
		// setup prepares the workspace and returns the step's base tree
		// and the last checkpoint's tree (either may be empty).
		setup     func(t *testing.T, ws string) (stepBase, checkpointTree string)
		wantBase  string // "step", "checkpoint" or "now"
		wantFiles []string
	}{
		{"first step: files dirty before the task are not its own", func(t *testing.T, ws string) (string, string) {
			write(t, ws, ".claude/settings.json", "{}\n")
			return "", ""
		}, "now", nil},
		{"after a checkpoint: the changes since it", func(t *testing.T, ws string) (string, string) {
			write(t, ws, "before.txt", "1\n")
			cp := tree(t, ws)
			write(t, ws, "after.txt", "2\n")
			write(t, ws, "README.md", "changed\n")
			return "", cp
		}, "checkpoint", []string{"README.md", "after.txt"}},
		{"the step's own base wins over the checkpoint", func(t *testing.T, ws string) (string, string) {
			write(t, ws, "a.txt", "1\n")
			base := tree(t, ws)
			write(t, ws, "b.txt", "2\n")
			return base, tree(t, ws)
		}, "step", []string{"b.txt"}},
		{"a pruned step base falls back to the checkpoint", func(t *testing.T, ws string) (string, string) {
			cp := tree(t, ws)
			write(t, ws, "c.txt", "3\n")
			return gone, cp
		}, "checkpoint", []string{"c.txt"}},
		{"a pruned checkpoint falls back to now", func(t *testing.T, ws string) (string, string) {
			write(t, ws, "d.txt", "4\n")
			return "", gone
		}, "now", nil},
		{"a deleted file is a change", func(t *testing.T, ws string) (string, string) {
			cp := tree(t, ws)
			if err := os.Remove(filepath.Join(ws, "README.md")); err != nil {
				t.Fatal(err)
			}
			return "", cp
		}, "checkpoint", []string{"README.md"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			git(t, ws, "init", "-q")
			write(t, ws, "README.md", "workspace\n")
			git(t, ws, "add", ".")
			git(t, ws, "commit", "-q", "-m", "init")
			stepBase, cpTree := tc.setup(t, ws)
			h := &v1.Hook{Spec: v1.HookSpec{Workspace: ws}, Status: v1.HookStatus{CurrentStep: &v1.CurrentStep{Name: "s", Attempt: 1, BaseTree: stepBase}}}
			if cpTree != "" {
				h.Status.LastCheckpoint = &v1.LastCheckpoint{Name: "cp", SnapshotTree: cpTree}
			}
			c, err := stepfiles.Begin(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			switch tc.wantBase {
			case "step":
				if c.Base != stepBase {
					t.Errorf("base %s, want the step's %s", c.Base, stepBase)
				}
			case "checkpoint":
				if c.Base != cpTree {
					t.Errorf("base %s, want the checkpoint's %s", c.Base, cpTree)
				}
			case "now":
				if now := tree(t, ws); c.Base != now {
					t.Errorf("base %s, want the workspace's tree %s", c.Base, now)
				}
			}
			if !slices.Equal(c.Files, tc.wantFiles) && (len(c.Files) != 0 || len(tc.wantFiles) != 0) {
				t.Errorf("files %q, want %q", c.Files, tc.wantFiles)
			}
			// The base is a tree that Since counts from as Begin did.
			again, err := stepfiles.Since(ctx, ws, c.Base)
			if err != nil || !slices.Equal(again.Files, c.Files) {
				t.Errorf("Since(base) = %v, %v; want %q", again, err, c.Files)
			}
		})
	}
}

// TestNotAGitRepository: without git there is no base, and the error says so.
func TestNotAGitRepository(t *testing.T) {
	h := &v1.Hook{Spec: v1.HookSpec{Workspace: t.TempDir()}}
	if _, err := stepfiles.Begin(context.Background(), h); err == nil {
		t.Fatal("Begin outside a git repository succeeded")
	}
	if _, err := stepfiles.Since(context.Background(), t.TempDir(), "0123456789abcdef0123456789abcdef01234567"); err == nil {
		t.Fatal("Since outside a git repository succeeded")
	}
}

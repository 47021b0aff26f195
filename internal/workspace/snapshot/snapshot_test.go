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
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

func opts(seq int64) snapshot.Options {
	return snapshot.Options{Namespace: "default", Hook: "task", Seq: seq}
}

// assertRefsComplete checks that every checkpoint ref of the repository
// points at a commit whose whole graph is present.
func assertRefsComplete(t *testing.T, dir string) {
	t.Helper()
	out := gitT(t, dir, "for-each-ref", "--format=%(refname)", snapshot.RefPrefix)
	for _, ref := range strings.Fields(out) {
		gitT(t, dir, "cat-file", "-e", ref+"^{commit}")
	}
	gitT(t, dir, "fsck", "--connectivity-only", "--no-dangling", "--no-progress")
}

func TestCaptureLeavesUserStateUntouched(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "tracked.txt", "tracked v2\n")
	gitT(t, dir, "stash", "-q")
	write(t, dir, "tracked.txt", "tracked v3, unstaged\n")
	write(t, dir, "lib/code.go", "package lib // staged\n")
	gitT(t, dir, "add", "lib/code.go")
	write(t, dir, "new.txt", "untracked\n")
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "build/out.bin", "ignored dir\n")

	before := stateOf(t, dir)
	res, err := snapshot.Capture(context.Background(), dir, opts(1))
	if err != nil {
		t.Fatal(err)
	}
	if after := stateOf(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("capture changed the user's state:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := strings.TrimSpace(gitT(t, dir, "rev-parse", res.Ref)); got != res.Commit {
		t.Errorf("ref %s = %s, want %s", res.Ref, got, res.Commit)
	}
	if parent := strings.TrimSpace(gitT(t, dir, "rev-parse", res.Commit+"^")); parent != before.headID() {
		t.Errorf("snapshot parent %s, want HEAD %s", parent, before.headID())
	}
	files := lsTree(t, dir, res.Commit)
	want := map[string]string{
		".gitignore":  "100644 *.log\nbuild/\n",
		"tracked.txt": "100644 tracked v3, unstaged\n",
		"lib/code.go": "100644 package lib // staged\n",
		"new.txt":     "100644 untracked\n",
	}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("snapshot tree = %q, want %q", files, want)
	}
	if !res.Dirty || res.Branch != "main" || len(res.Degraded) != 0 {
		t.Errorf("dirty %t branch %q degraded %q; want dirty on main, not degraded", res.Dirty, res.Branch, res.Degraded)
	}
	var changed []string
	for _, f := range res.Changed {
		changed = append(changed, f.Status+" "+f.Path)
	}
	if wantChanged := []string{"M lib/code.go", "A new.txt", "M tracked.txt"}; !slices.Equal(changed, wantChanged) {
		t.Errorf("changed = %q, want %q", changed, wantChanged)
	}
}

// TestNoWorkspaceCommandRuns: the workspace's core.fsmonitor names a
// command (its configuration is untrusted input); no capture, diff,
// change list or restore runs it, while plain git status does (so the
// check can fail).
func TestNoWorkspaceCommandRuns(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "fsmonitor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" >> "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "config", "core.fsmonitor", script)
	write(t, dir, "tracked.txt", "changed\n")
	write(t, dir, "new.txt", "new\n")
	res, err := snapshot.Capture(ctx, dir, opts(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := snapshot.Changes(ctx, dir, res.Commit, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.WorkspaceTree(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.Diff(ctx, dir, res.Commit, io.Discard, snapshot.DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "new.txt", "lost\n")
	if _, err := snapshot.Restore(ctx, dir, res.Commit, snapshot.RestoreOptions{Paths: []string{"new.txt"}, Force: true}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("tether ran the workspace's core.fsmonitor command: %s", data)
	}
	gitT(t, dir, "status", "--short")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("git status did not run core.fsmonitor either (%v): the test proves nothing", err)
	}
}

func (s userState) headID() string { return strings.TrimSpace(s.head) }

func TestCaptureChangedSincePrevious(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	first, err := snapshot.Capture(ctx, dir, opts(1))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "b.txt", "bb\n")
	if err := os.Remove(filepath.Join(dir, "tracked.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "lib/code.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := opts(2)
	o.Previous = first.Commit
	second, err := snapshot.Capture(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]snapshot.File{}
	for _, f := range second.Changed {
		got[f.Path] = f
	}
	tests := []struct {
		path, status, mode string
		size               int64
		hashed             bool
	}{
		{"b.txt", "A", "100644", 3, true},
		{"tracked.txt", "D", "100644", 0, false},
		{"lib/code.go", "M", "100755", 12, true},
	}
	for _, tt := range tests {
		f, ok := got[tt.path]
		if !ok {
			t.Errorf("%s not in changed files %+v", tt.path, second.Changed)
			continue
		}
		if f.Status != tt.status || f.Mode != tt.mode || f.Size != tt.size || (f.Hash != "") != tt.hashed {
			t.Errorf("%s = %+v, want status %s mode %s size %d hashed %t", tt.path, f, tt.status, tt.mode, tt.size, tt.hashed)
		}
	}
	if len(got) != len(tests) {
		t.Errorf("changed = %+v, want the %d files changed since the first capture", second.Changed, len(tests))
	}

	o = opts(3)
	o.Previous, o.SkipUnchanged = second.Commit, true
	third, err := snapshot.Capture(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if !third.Unchanged || third.Ref != "" || third.Tree != second.Tree {
		t.Errorf("unchanged capture = %+v; want Unchanged with no ref and tree %s", third, second.Tree)
	}
	if out := gitT(t, dir, "for-each-ref", snapshot.Ref("default", "task", 3)); out != "" {
		t.Errorf("a skipped capture created a ref: %s", out)
	}
}

// TestCommitListsChanges: PrepareTree leaves the changed-file list to
// Commit, which lists what Prepare does, also when it is retried after
// ErrRefExists.
func TestCommitListsChanges(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(context.Context, string, snapshot.Options) (*snapshot.Pending, error)
		listed  bool // before Commit
	}{
		{"Prepare", snapshot.Prepare, true},
		{"PrepareTree", snapshot.PrepareTree, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := newRepo(t)
			if _, err := snapshot.Capture(ctx, dir, opts(5)); err != nil {
				t.Fatal(err)
			}
			write(t, dir, "new.txt", "new\n")
			write(t, dir, "tracked.txt", "tracked v2\n")
			p, err := tt.prepare(ctx, dir, opts(0))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(p.Result.Changed) > 0; got != tt.listed {
				t.Errorf("changed files listed before Commit: %t, want %t", got, tt.listed)
			}
			if _, err := p.Commit(ctx, 5, ""); !errors.Is(err, snapshot.ErrRefExists) {
				t.Fatalf("Commit with a taken seq: %v, want ErrRefExists", err)
			}
			res, err := p.Commit(ctx, 6, "")
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range res.Changed {
				paths = append(paths, f.Status+" "+f.Path)
			}
			if want := []string{"A new.txt", "M tracked.txt"}; !slices.Equal(paths, want) {
				t.Errorf("changed = %q, want %q", paths, want)
			}
		})
	}
}

func TestCaptureRefIsCreateOnly(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	first, err := snapshot.Capture(ctx, dir, opts(7))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "later.txt", "later\n")
	_, err = snapshot.Capture(ctx, dir, opts(7))
	if !errors.Is(err, snapshot.ErrRefExists) {
		t.Fatalf("second capture with seq 7: %v, want ErrRefExists", err)
	}
	if got := strings.TrimSpace(gitT(t, dir, "rev-parse", first.Ref)); got != first.Commit {
		t.Errorf("ref overwritten: %s, want %s", got, first.Commit)
	}
}

func TestCaptureBadInputs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T) string
		// wantErr, when set, is the error the capture must fail with.
		wantErr error
		check   func(t *testing.T, dir string, res *snapshot.Result)
	}{
		{
			name:    "missing workspace",
			setup:   func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone") },
			wantErr: snapshot.ErrMissingWorkspace,
		},
		{
			name:    "empty workspace",
			setup:   func(t *testing.T) string { return "" },
			wantErr: snapshot.ErrNoWorkspace,
		},
		{
			name: "workspace is a file",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				write(t, dir, "f", "x")
				return filepath.Join(dir, "f")
			},
			wantErr: snapshot.ErrNotDirectory,
		},
		{
			name:    "not a repository",
			setup:   func(t *testing.T) string { return t.TempDir() },
			wantErr: snapshot.ErrNotRepository,
		},
		{
			name: "bare repository",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				gitT(t, dir, "init", "-q", "--bare")
				return dir
			},
			wantErr: snapshot.ErrBareRepository,
		},
		{
			name: "inside the .git directory",
			setup: func(t *testing.T) string {
				return filepath.Join(newRepo(t), ".git")
			},
			wantErr: snapshot.ErrBareRepository,
		},
		{
			name: "detached HEAD",
			setup: func(t *testing.T) string {
				dir := newRepo(t)
				gitT(t, dir, "checkout", "-q", "--detach")
				write(t, dir, "x.txt", "x\n")
				return dir
			},
			check: func(t *testing.T, dir string, res *snapshot.Result) {
				if res.Branch != "" || res.Head == "" || !res.Dirty {
					t.Errorf("branch %q head %q dirty %t; want no branch, a HEAD, dirty", res.Branch, res.Head, res.Dirty)
				}
			},
		},
		{
			name: "unborn branch",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				gitT(t, dir, "init", "-q")
				write(t, dir, "first.txt", "first\n")
				return dir
			},
			check: func(t *testing.T, dir string, res *snapshot.Result) {
				parents := gitT(t, dir, "rev-list", "--parents", "-n1", res.Commit)
				if len(strings.Fields(parents)) != 1 || res.Head != "" || res.Branch != "main" {
					t.Errorf("rev-list --parents %q, head %q, branch %q; want a parentless commit on unborn main", parents, res.Head, res.Branch)
				}
				if got := lsTree(t, dir, res.Commit)["first.txt"]; got != "100644 first\n" {
					t.Errorf("first.txt in snapshot = %q", got)
				}
				if len(res.Degraded) != 1 || !strings.Contains(res.Degraded[0], "unborn") {
					t.Errorf("degraded = %q, want the unborn branch named", res.Degraded)
				}
			},
		},
		{
			name: "merge in progress with a conflict",
			setup: func(t *testing.T) string {
				dir := newRepo(t)
				gitT(t, dir, "checkout", "-q", "-b", "other")
				write(t, dir, "tracked.txt", "other side\n")
				gitT(t, dir, "commit", "-qam", "other")
				gitT(t, dir, "checkout", "-q", "main")
				write(t, dir, "tracked.txt", "main side\n")
				gitT(t, dir, "commit", "-qam", "main")
				if out, err := gitE(dir, "merge", "other"); err == nil {
					t.Fatalf("merge did not conflict: %s", out)
				}
				return dir
			},
			check: func(t *testing.T, dir string, res *snapshot.Result) {
				if len(res.Degraded) != 1 || !strings.Contains(res.Degraded[0], "merge is in progress") {
					t.Errorf("degraded = %q, want the merge named", res.Degraded)
				}
				if got := lsTree(t, dir, res.Commit)["tracked.txt"]; !strings.Contains(got, "<<<<<<<") {
					t.Errorf("tracked.txt in snapshot = %q, want the conflict markers", got)
				}
			},
		},
		{
			name: "file names with newlines and spaces",
			setup: func(t *testing.T) string {
				dir := newRepo(t)
				write(t, dir, "with space.txt", "space\n")
				write(t, dir, "new\nline.txt", "newline\n")
				write(t, dir, "dir with space/ü \"q\".txt", "quoted\n")
				return dir
			},
			check: func(t *testing.T, dir string, res *snapshot.Result) {
				files := lsTree(t, dir, res.Commit)
				for path, want := range map[string]string{
					"with space.txt":             "100644 space\n",
					"new\nline.txt":              "100644 newline\n",
					"dir with space/ü \"q\".txt": "100644 quoted\n",
				} {
					if files[path] != want {
						t.Errorf("%q in snapshot = %q, want %q", path, files[path], want)
					}
				}
				var changed []string
				for _, f := range res.Changed {
					changed = append(changed, f.Path)
				}
				if !slices.Contains(changed, "new\nline.txt") {
					t.Errorf("changed = %q, want the newline name verbatim", changed)
				}
			},
		},
		{
			name: "a 200 MB file",
			setup: func(t *testing.T) string {
				dir := newRepo(t)
				f, err := os.Create(filepath.Join(dir, "huge.bin"))
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(200 << 20); err != nil {
					t.Fatal(err)
				}
				_ = f.Close()
				write(t, dir, "small.txt", "small\n")
				return dir
			},
			check: func(t *testing.T, dir string, res *snapshot.Result) {
				files := lsTree(t, dir, res.Commit)
				if _, ok := files["huge.bin"]; ok || files["small.txt"] == "" {
					t.Errorf("snapshot has huge.bin %t, small.txt %t; want only small.txt", ok, files["small.txt"] != "")
				}
				if !slices.Equal(res.Skipped, []string{"huge.bin"}) || len(res.Degraded) != 1 {
					t.Errorf("skipped %q degraded %q; want huge.bin named", res.Skipped, res.Degraded)
				}
			},
		},
		{
			name: "symlink out of the workspace",
			setup: func(t *testing.T) string {
				dir := newRepo(t)
				outside := t.TempDir()
				write(t, outside, "secret.txt", "outside content\n")
				if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
					t.Fatal(err)
				}
				return dir
			},
			check: func(t *testing.T, dir string, res *snapshot.Result) {
				files := lsTree(t, dir, res.Commit)
				for _, name := range []string{"link", "linkdir"} {
					if !strings.HasPrefix(files[name], "120000 ") {
						t.Errorf("%s stored as %q, want a symlink (120000)", name, files[name])
					}
				}
				if _, ok := files["linkdir/secret.txt"]; ok {
					t.Errorf("the linked directory was followed: %q", files)
				}
				for _, c := range files {
					if strings.Contains(c, "outside content") {
						t.Errorf("the target's content was stored: %q", files)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t)
			var before userState
			isRepo := tt.wantErr == nil
			if isRepo {
				before = stateOf(t, dir)
			}
			res, err := snapshot.Capture(ctx, dir, opts(1))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Capture = %v, want %v", err, tt.wantErr)
				}
				if dir != "" && !strings.Contains(err.Error(), dir) {
					t.Errorf("error %q does not name the workspace", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Capture: %v", err)
			}
			if after := stateOf(t, dir); !reflect.DeepEqual(before, after) {
				t.Errorf("capture changed the user's state:\nbefore %+v\nafter  %+v", before, after)
			}
			assertRefsComplete(t, dir)
			tt.check(t, dir, res)
		})
	}
}

func TestChangedIsBounded(t *testing.T) {
	dir := newRepo(t)
	for i := range 30 {
		write(t, dir, "many/"+strings.Repeat("x", i+1), "x")
	}
	o := opts(1)
	o.MaxChanged = 10
	res, err := snapshot.Capture(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 10 || !res.Truncated {
		t.Errorf("%d changed, truncated %t; want 10 and truncated", len(res.Changed), res.Truncated)
	}
}

func TestLostWorkComesBack(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	newContent := "brand new work\n\x00binary\xff\n"
	modContent := "tracked, modified\n"
	write(t, dir, "work/new.txt", newContent)
	write(t, dir, "tracked.txt", modContent)
	res, err := snapshot.Capture(ctx, dir, opts(1))
	if err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "reset", "-q", "--hard")
	gitT(t, dir, "clean", "-q", "-fdx")
	if _, err := os.Stat(filepath.Join(dir, "work/new.txt")); !os.IsNotExist(err) {
		t.Fatalf("the work was not lost: %v", err)
	}
	rr, err := snapshot.Restore(ctx, dir, res.Commit, snapshot.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "work/new.txt"); got != newContent {
		t.Errorf("work/new.txt = %q, want %q", got, newContent)
	}
	if got := read(t, dir, "tracked.txt"); got != modContent {
		t.Errorf("tracked.txt = %q, want %q", got, modContent)
	}
	if rr.Files != 4 || rr.Where != dir {
		t.Errorf("restore result %+v, want 4 files into %s", rr, dir)
	}
	if head := strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD")); head != res.Head {
		t.Errorf("restore moved HEAD to %s", head)
	}
}

func TestRestore(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) snapshot.RestoreOptions
		wantErr string
		check   func(t *testing.T, dir string, rr *snapshot.RestoreResult)
	}{
		{
			name: "in place refuses uncommitted changes",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				write(t, dir, "tracked.txt", "unsaved edit\n")
				return snapshot.RestoreOptions{}
			},
			wantErr: "--force",
			check: func(t *testing.T, dir string, _ *snapshot.RestoreResult) {
				if got := read(t, dir, "tracked.txt"); got != "unsaved edit\n" {
					t.Errorf("refused restore overwrote tracked.txt: %q", got)
				}
			},
		},
		{
			name: "in place with force overwrites",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				write(t, dir, "tracked.txt", "unsaved edit\n")
				return snapshot.RestoreOptions{Force: true}
			},
			check: func(t *testing.T, dir string, _ *snapshot.RestoreResult) {
				if got := read(t, dir, "tracked.txt"); got != "snapshotted\n" {
					t.Errorf("tracked.txt = %q", got)
				}
			},
		},
		{
			name: "in place refuses a change git status hides: ignored since the snapshot",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				write(t, dir, ".git/info/exclude", "extra.txt\n")
				write(t, dir, "extra.txt", "unsaved, ignored\n")
				return snapshot.RestoreOptions{}
			},
			wantErr: "(extra.txt): neither the checkpoint nor HEAD holds their content",
			check: func(t *testing.T, dir string, _ *snapshot.RestoreResult) {
				if got := read(t, dir, "extra.txt"); got != "unsaved, ignored\n" {
					t.Errorf("refused restore overwrote extra.txt: %q", got)
				}
			},
		},
		{
			name: "in place refuses a change git status hides: assume-unchanged",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				gitT(t, dir, "update-index", "--assume-unchanged", "tracked.txt")
				write(t, dir, "tracked.txt", "unsaved, assumed unchanged\n")
				return snapshot.RestoreOptions{}
			},
			wantErr: "(tracked.txt): neither",
		},
		{
			name: "in place refuses a change git status hides: skip-worktree",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				gitT(t, dir, "update-index", "--skip-worktree", "tracked.txt")
				write(t, dir, "tracked.txt", "unsaved, skip-worktree\n")
				return snapshot.RestoreOptions{}
			},
			wantErr: "(tracked.txt): neither",
		},
		{
			name: "in place restores over a hidden file the checkpoint holds",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				write(t, dir, ".git/info/exclude", "extra.txt\n")
				write(t, dir, "extra.txt", "extra\n")
				gitT(t, dir, "update-index", "--assume-unchanged", "tracked.txt")
				return snapshot.RestoreOptions{}
			},
			check: func(t *testing.T, dir string, _ *snapshot.RestoreResult) {
				if got := read(t, dir, "tracked.txt"); got != "snapshotted\n" {
					t.Errorf("tracked.txt = %q", got)
				}
			},
		},
		{
			name: "to a new directory",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				return snapshot.RestoreOptions{To: filepath.Join(t.TempDir(), "out")}
			},
			check: func(t *testing.T, dir string, rr *snapshot.RestoreResult) {
				if got := read(t, rr.Where, "tracked.txt"); got != "snapshotted\n" {
					t.Errorf("tracked.txt in --to = %q", got)
				}
				if got := read(t, rr.Where, "extra.txt"); got != "extra\n" {
					t.Errorf("extra.txt in --to = %q", got)
				}
				if target, err := os.Readlink(filepath.Join(rr.Where, "link")); err != nil || target != "../outside/target.txt" {
					t.Errorf("link in --to: %q %v, want a symlink to ../outside/target.txt", target, err)
				}
				if got := read(t, dir, "tracked.txt"); got != "tracked v1\n" {
					t.Errorf("--to touched the workspace: tracked.txt = %q", got)
				}
			},
		},
		{
			name: "to a non-empty directory",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				out := t.TempDir()
				write(t, out, "keep.txt", "keep\n")
				return snapshot.RestoreOptions{To: out}
			},
			wantErr: "not empty",
		},
		{
			name: "to a branch",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				return snapshot.RestoreOptions{Branch: "rescued"}
			},
			check: func(t *testing.T, dir string, rr *snapshot.RestoreResult) {
				if got := gitT(t, dir, "show", "rescued:extra.txt"); got != "extra\n" {
					t.Errorf("rescued:extra.txt = %q", got)
				}
				if got := strings.TrimSpace(gitT(t, dir, "rev-parse", "rescued")); got != rr.Commit {
					t.Errorf("branch at %s, want %s", got, rr.Commit)
				}
			},
		},
		{
			name: "to an existing branch",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				return snapshot.RestoreOptions{Branch: "main"}
			},
			wantErr: "already exists",
		},
		{
			name: "to an invalid branch name",
			prepare: func(t *testing.T, dir string) snapshot.RestoreOptions {
				return snapshot.RestoreOptions{Branch: "bad..name"}
			},
			wantErr: "not a valid branch name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newRepo(t)
			write(t, dir, "tracked.txt", "snapshotted\n")
			write(t, dir, "extra.txt", "extra\n")
			if err := os.Symlink("../outside/target.txt", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			res, err := snapshot.Capture(ctx, dir, opts(1))
			if err != nil {
				t.Fatal(err)
			}
			gitT(t, dir, "reset", "-q", "--hard")
			gitT(t, dir, "clean", "-q", "-fdx")
			ro := tt.prepare(t, dir)
			rr, err := snapshot.Restore(ctx, dir, res.Commit, ro)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Restore = %v, want an error containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, dir, rr)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	res, err := snapshot.Capture(ctx, dir, opts(1))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		patch bool
		want  []string
	}{
		{"stat", false, []string{"tracked.txt   | 2 +-", "untracked.txt | 1 +", "2 files changed"}},
		{"patch", true, []string{"-tracked v1", "+tracked v2", "+fresh", "new file mode 100644"}},
	}
	write(t, dir, "tracked.txt", "tracked v2\n")
	write(t, dir, "untracked.txt", "fresh\n")
	write(t, dir, "ignored.log", "ignored\n")
	before := stateOf(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := snapshot.Diff(ctx, dir, res.Commit, &out, snapshot.DiffOptions{Patch: tt.patch}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("diff output lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String(), "ignored.log") {
				t.Errorf("diff shows an ignored file:\n%s", out.String())
			}
		})
	}
	if after := stateOf(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("diff changed the user's state")
	}
	t.Run("between two snapshots", func(t *testing.T) {
		later, err := snapshot.Capture(ctx, dir, opts(2))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, "tracked.txt", "tracked v3\n")
		var out bytes.Buffer
		if err := snapshot.Diff(ctx, dir, res.Commit, &out, snapshot.DiffOptions{Patch: true, To: later.Commit}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"-tracked v1", "+tracked v2", "+fresh"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("diff between snapshots lacks %q:\n%s", w, out.String())
			}
		}
		if strings.Contains(out.String(), "v3") {
			t.Errorf("diff between snapshots shows the working tree:\n%s", out.String())
		}
		write(t, dir, "tracked.txt", "tracked v2\n")
	})
	files, truncated, err := snapshot.Changes(ctx, dir, res.Commit, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || truncated || files[0].Path != "tracked.txt" || files[1].Path != "untracked.txt" {
		t.Errorf("Changes = %+v, %t", files, truncated)
	}
}

func TestVerifyAndDeleteRef(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	res, err := snapshot.Capture(ctx, dir, opts(1))
	if err != nil {
		t.Fatal(err)
	}
	other, err := snapshot.Capture(ctx, dir, opts(2))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "x", "x")
	moved, err := snapshot.Capture(ctx, dir, opts(3))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		workspace string
		ref       string
		commit    string
		want      error
	}{
		{"present", dir, res.Ref, res.Commit, nil},
		{"points elsewhere", dir, moved.Ref, res.Commit, snapshot.ErrRefMoved},
		{"missing ref", dir, snapshot.Ref("default", "task", 99), res.Commit, snapshot.ErrRefMissing},
		{"missing workspace", filepath.Join(dir, "nope"), res.Ref, res.Commit, snapshot.ErrMissingWorkspace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := snapshot.Verify(ctx, tt.workspace, tt.ref, tt.commit); !errors.Is(err, tt.want) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
	if err := snapshot.DeleteRef(ctx, dir, other.Ref, other.Commit); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.Verify(ctx, dir, other.Ref, other.Commit); !errors.Is(err, snapshot.ErrRefMissing) {
		t.Errorf("after DeleteRef, Verify = %v", err)
	}
	if err := snapshot.DeleteRef(ctx, dir, other.Ref, other.Commit); err != nil {
		t.Errorf("deleting a deleted ref: %v", err)
	}
	if err := snapshot.DeleteRef(ctx, dir, moved.Ref, res.Commit); !errors.Is(err, snapshot.ErrRefMoved) {
		t.Errorf("deleting a moved ref = %v, want ErrRefMoved", err)
	}
	for _, foreign := range []string{"refs/heads/main", "refs/tether/../heads/main", "refs/tether/checkpoints/default/task/1.lock", "refs/tether//x"} {
		if err := snapshot.DeleteRef(ctx, dir, foreign, ""); !errors.Is(err, snapshot.ErrForeignRef) {
			t.Errorf("DeleteRef(%q) = %v, want ErrForeignRef", foreign, err)
		}
	}
	if got := strings.TrimSpace(gitT(t, dir, "rev-parse", "--verify", "refs/heads/main")); got == "" {
		t.Error("DeleteRef deleted a branch")
	}
	refs, err := snapshot.List(ctx, dir, "default", "task")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs[0].Seq != 1 || refs[1].Seq != 3 {
		t.Errorf("List = %+v, want seqs 1 and 3", refs)
	}
}

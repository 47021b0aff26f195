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

package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The errors of a workspace that cannot be snapshotted. Each names the
// problem; errors.Is tells them apart.
var (
	// ErrNoWorkspace means the Hook has no spec.workspace.
	ErrNoWorkspace = errors.New("no workspace: spec.workspace is empty")
	// ErrMissingWorkspace means the workspace directory does not exist.
	ErrMissingWorkspace = errors.New("workspace does not exist")
	// ErrNotDirectory means the workspace is not a directory.
	ErrNotDirectory = errors.New("workspace is not a directory")
	// ErrNotRepository means the workspace is not inside a git repository.
	ErrNotRepository = errors.New("workspace is not a git repository")
	// ErrBareRepository means the workspace is a bare repository (or the
	// inside of a .git directory): it has no working tree to snapshot.
	ErrBareRepository = errors.New("workspace is a bare git repository, without a working tree")
	// ErrRefExists means the checkpoint ref already exists; refs are
	// created only, never overwritten.
	ErrRefExists = errors.New("checkpoint ref already exists")
	// ErrRefMissing means a checkpoint's ref no longer exists.
	ErrRefMissing = errors.New("checkpoint ref does not exist")
	// ErrRefMoved means a checkpoint's ref points at another commit than
	// the one recorded.
	ErrRefMoved = errors.New("checkpoint ref points at another commit")
	// ErrCommitMissing means a snapshot commit is not in the repository.
	ErrCommitMissing = errors.New("snapshot commit is not in the repository")
	// ErrWorkspaceNotOwned means git refuses the workspace's repository
	// because another user owns it (git's safe.directory check): its
	// configuration could run commands as whoever runs git there.
	ErrWorkspaceNotOwned = errors.New("workspace is owned by another user")
	// ErrWorkspaceUnreadable means this process may not read the
	// workspace or its repository.
	ErrWorkspaceUnreadable = errors.New("workspace cannot be read by this process")
	// ErrForeignRef means a ref tether was asked to delete is not one of
	// its own (under RefPrefix, a valid ref name): no retry changes that.
	ErrForeignRef = errors.New("not a tether ref")
)

// repo is what Capture learns about a workspace before it snapshots it.
type repo struct {
	// top is the root of the working tree.
	top string
	// gitDir is the repository's (or linked worktree's) git directory.
	gitDir string
	// userIndex is the path of the user's index file.
	userIndex string
	// head is the HEAD commit, empty on an unborn branch; Capture fills it.
	head string
	// branch is the checked-out branch's short name; empty when detached.
	branch string
	// inProgress names the operations under way: merge, rebase, ...
	inProgress []string
}

// inProgressMarkers are the files in the git directory that tell an
// operation is under way, and what to call it.
var inProgressMarkers = []struct{ file, what string }{
	{"rebase-merge", "rebase"},
	{"rebase-apply", "rebase or am"},
	{"MERGE_HEAD", "merge"},
	{"CHERRY_PICK_HEAD", "cherry-pick"},
	{"REVERT_HEAD", "revert"},
	{"BISECT_LOG", "bisect"},
}

// openRepo checks that workspace is a directory inside a git working tree
// and reads which branch HEAD names.
func openRepo(ctx context.Context, workspace string) (*repo, error) {
	if workspace == "" {
		return nil, ErrNoWorkspace
	}
	fi, err := os.Stat(workspace)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w: %s", ErrMissingWorkspace, workspace)
	case errors.Is(err, os.ErrPermission):
		return nil, unreadable(workspace)
	case err != nil:
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("%w: %s", ErrNotDirectory, workspace)
	}
	out, err := git(ctx, workspace, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel", "--git-path", "index")
	lines := strings.Split(trimNL(out), "\n")
	if len(lines) > 0 && lines[0] == "true" {
		return nil, fmt.Errorf("%w: %s", ErrBareRepository, workspace)
	}
	if err != nil {
		var gerr *GitError
		if errors.As(err, &gerr) {
			switch {
			case strings.Contains(gerr.Stderr, "not a git repository"):
				return nil, fmt.Errorf("%w: %s", ErrNotRepository, workspace)
			case strings.Contains(gerr.Stderr, "must be run in a work tree"):
				return nil, fmt.Errorf("%w: %s", ErrBareRepository, workspace)
			case strings.Contains(gerr.Stderr, "dubious ownership"):
				return nil, notOwned(workspace, gerr.Stderr)
			case strings.Contains(gerr.Stderr, "Permission denied") || errors.Is(gerr.Err, os.ErrPermission):
				return nil, unreadable(workspace)
			}
		}
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	if len(lines) != 4 {
		return nil, fmt.Errorf("workspace %s: unexpected git rev-parse output %q", workspace, out)
	}
	r := &repo{gitDir: lines[1], top: lines[2], userIndex: lines[3]}
	if !filepath.IsAbs(r.userIndex) {
		r.userIndex = filepath.Join(workspace, r.userIndex)
	}
	headFile, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return nil, fmt.Errorf("workspace %s: reading HEAD: %w", workspace, err)
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(headFile)), "ref: "); ok {
		r.branch = strings.TrimPrefix(ref, "refs/heads/")
	}
	for _, m := range inProgressMarkers {
		if _, err := os.Stat(filepath.Join(r.gitDir, m.file)); err == nil {
			r.inProgress = append(r.inProgress, m.what)
		}
	}
	return r, nil
}

// notOwned is ErrWorkspaceNotOwned for workspace, naming the repository's
// owner (from git's message, which quotes the repository's path) and
// this process's user, in place of git's text.
func notOwned(workspace, stderr string) error {
	repo := workspace
	if _, rest, ok := strings.Cut(stderr, "repository at '"); ok {
		if at, _, ok := strings.Cut(rest, "'"); ok {
			repo = at
		}
	}
	owner := "another user"
	if fi, err := os.Stat(repo); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			owner = fmt.Sprintf("uid %d", st.Uid)
		}
	}
	return fmt.Errorf("%w: the repository at %s belongs to %s and this process runs as uid %d; git refuses to read it, "+
		"and tether does not override that (safe.directory), since the repository's configuration could run commands as this process",
		ErrWorkspaceNotOwned, repo, owner, os.Getuid())
}

// unreadable is ErrWorkspaceUnreadable for workspace.
func unreadable(workspace string) error {
	return fmt.Errorf("%w: %s (permission denied to uid %d)", ErrWorkspaceUnreadable, workspace, os.Getuid())
}

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
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrUncommittedChanges means an in-place restore found uncommitted changes
// that it would overwrite; the error's text says how to proceed.
var ErrUncommittedChanges = errors.New("the workspace has uncommitted changes")

// currentTree writes the tree of the working tree as it is now, with a
// throwaway index seeded from the user's (for its stat cache). The blobs of
// new files become unreferenced objects that git gc removes in time.
func currentTree(ctx context.Context, r *repo) (string, error) {
	f, err := os.CreateTemp("", "tether-snapshot-index-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_ = f.Close()
	defer func() {
		_ = os.Remove(tmp)
		_ = os.Remove(tmp + ".lock")
	}()
	seeded, err := copyFile(r.userIndex, tmp)
	if err != nil {
		return "", err
	}
	if !seeded {
		_ = os.Remove(tmp)
	}
	tree, _, err := buildTree(ctx, r, tmp, DefaultMaxFileSize)
	return tree, err
}

// resolveCommit checks that commit (an id or a ref) names a commit in r.
func resolveCommit(ctx context.Context, r *repo, commit string) (string, error) {
	if commit == "" || strings.HasPrefix(commit, "-") {
		return "", fmt.Errorf("snapshot commit %q: %w", commit, ErrCommitMissing)
	}
	out, err := git(ctx, r.top, "rev-parse", "-q", "--verify", commit+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%w: %s in %s", ErrCommitMissing, commit, r.top)
	}
	return trimNL(out), nil
}

// resolveTree checks that rev (an id or a ref) names a commit or a tree in
// r, and returns the tree's id.
func resolveTree(ctx context.Context, r *repo, rev string) (string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("snapshot %q: %w", rev, ErrCommitMissing)
	}
	out, err := git(ctx, r.top, "rev-parse", "-q", "--verify", rev+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("%w: %s in %s", ErrCommitMissing, rev, r.top)
	}
	return trimNL(out), nil
}

// WorkspaceTree writes the tree of workspace's working tree as a snapshot
// would hold it (ignored files and files over DefaultMaxFileSize left out)
// and returns its id, for Changes to count from later. No ref holds it, so
// git gc may prune it after gc.pruneExpire (two weeks by default); Changes
// then fails with ErrCommitMissing.
func WorkspaceTree(ctx context.Context, workspace string) (string, error) {
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return "", err
	}
	return currentTree(ctx, r)
}

// DiffOptions select Diff's output.
type DiffOptions struct {
	// Patch prints the patch (git diff -p) instead of the summary (--stat).
	Patch bool
	// To, when set, is the snapshot commit to compare with instead of the
	// working tree, such as a later checkpoint's.
	To string
}

// Diff writes to w what changed in the working tree of workspace since the
// snapshot commit, untracked files included and .gitignore respected: `git
// diff --stat` output, or the patch with opts.Patch. It writes nothing
// when nothing changed. With opts.To it compares commit with that commit
// instead of the working tree.
func Diff(ctx context.Context, workspace, commit string, w io.Writer, opts DiffOptions) error {
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return err
	}
	commit, err = resolveCommit(ctx, r, commit)
	if err != nil {
		return err
	}
	var tree string
	if opts.To != "" {
		tree, err = resolveCommit(ctx, r, opts.To)
	} else {
		tree, err = currentTree(ctx, r)
	}
	if err != nil {
		return err
	}
	format := "--stat"
	if opts.Patch {
		format = "-p"
	}
	return gitCmd{dir: r.top, args: []string{"diff-tree", "-r", "--no-color", "--no-ext-diff", format, commit, tree}}.runTo(ctx, w)
}

// Changes lists the files of workspace whose content differs from the
// snapshot commit (or a tree, such as WorkspaceTree's): modified, added (untracked included, ignored left out)
// and deleted, sorted by path, at most limit (0: DefaultMaxChanged), and
// whether there were more. It writes nothing, not even objects: contents
// are hashed, not stored, so recover and agent hooks can call it freely.
func Changes(ctx context.Context, workspace, commit string, limit int) ([]File, bool, error) {
	if limit <= 0 {
		limit = DefaultMaxChanged
	}
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return nil, false, err
	}
	commit, err = resolveTree(ctx, r, commit)
	if err != nil {
		return nil, false, err
	}
	diff, err := git(ctx, r.top, "diff", "--name-only", "--no-renames", "-z", commit, "--")
	if err != nil {
		return nil, false, err
	}
	untracked, err := git(ctx, r.top, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, false, err
	}
	candidates := append(splitNUL(diff), splitNUL(untracked)...)
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	if len(candidates) == 0 {
		return nil, false, nil
	}
	// git diff compares through the index, so a file that commit holds but
	// the index does not (an untracked file in the snapshot) is listed
	// although it may be unchanged: compare each candidate's content with
	// commit's blob.
	blobs, err := lsTree(ctx, r, commit, candidates)
	if err != nil {
		return nil, false, err
	}
	stats, hashes, err := hashCandidates(ctx, r, candidates)
	if err != nil {
		return nil, false, err
	}
	var files []File
	size := 0
	for _, p := range candidates {
		b, inTree := blobs[p]
		fi, onDisk := stats[p]
		hash, hashed := hashes[p]
		var f File
		switch {
		case inTree && hashed && b.id == hash && sameType(b.mode, gitMode(fi)):
			continue
		case !inTree && !onDisk:
			continue
		case !onDisk:
			f = File{Path: p, Status: "D", Mode: b.mode}
		case !inTree:
			f = File{Path: p, Status: "A", Hash: hash}
		case !sameType(b.mode, gitMode(fi)):
			f = File{Path: p, Status: "T", Hash: hash}
		default:
			f = File{Path: p, Status: "M", Hash: hash}
		}
		if onDisk {
			f.Size, f.ModTime, f.Mode = fi.Size(), fi.ModTime(), gitMode(fi)
		}
		if len(files) >= limit || size+len(p) > maxChangedBytes {
			return files, true, nil
		}
		size += len(p)
		files = append(files, f)
	}
	return files, false, nil
}

// hashCandidates stats the candidates in the working tree of r and hashes
// the contents of those that are regular files or symlinks, writing no
// object. A candidate missing from the stats is not on disk.
func hashCandidates(ctx context.Context, r *repo, candidates []string) (map[string]os.FileInfo, map[string]string, error) {
	stats := map[string]os.FileInfo{}
	var regular []string
	for _, p := range candidates {
		fi, err := os.Lstat(filepath.Join(r.top, p))
		if err != nil {
			continue
		}
		stats[p] = fi
		if fi.Mode().IsRegular() && !strings.Contains(p, "\n") {
			regular = append(regular, p)
		}
	}
	hashes := map[string]string{}
	for _, p := range candidates {
		// A symlink's blob is its target; symlinks are rare, one git each.
		if fi, ok := stats[p]; ok && fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(filepath.Join(r.top, p))
			if err != nil {
				continue
			}
			out, err := gitCmd{dir: r.top, args: []string{"hash-object", "--stdin"}, stdin: strings.NewReader(target)}.run(ctx)
			if err != nil {
				return nil, nil, err
			}
			hashes[p] = trimNL(out)
		}
	}
	if len(regular) > 0 {
		out, err := gitCmd{dir: r.top, args: []string{"hash-object", "--stdin-paths"},
			stdin: strings.NewReader(strings.Join(regular, "\n") + "\n")}.run(ctx)
		if err != nil {
			return nil, nil, err
		}
		ids := strings.Fields(string(out))
		if len(ids) != len(regular) {
			return nil, nil, fmt.Errorf("git hash-object: %d hashes for %d files", len(ids), len(regular))
		}
		for i, p := range regular {
			hashes[p] = ids[i]
		}
	}
	return stats, hashes, nil
}

// blob is a tree entry's mode and object id.
type blob struct{ mode, id string }

// lsTree is the entries of rev's tree at paths (all of them when there are
// more than 500, to keep the command line short), by path.
func lsTree(ctx context.Context, r *repo, rev string, paths []string) (map[string]blob, error) {
	args := []string{"ls-tree", "-r", "-z", "--full-tree", rev, "--"}
	if len(paths) <= 500 {
		args = append(args, paths...)
	}
	tree, err := gitCmd{dir: r.top, args: args, env: []string{"GIT_LITERAL_PATHSPECS=1"}}.run(ctx)
	if err != nil {
		return nil, err
	}
	blobs := map[string]blob{}
	for _, entry := range splitNUL(tree) {
		meta, path, ok := strings.Cut(entry, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			blobs[path] = blob{mode: f[0], id: f[2]}
		}
	}
	return blobs, nil
}

// sameType reports whether two git modes are of one type (file, symlink,
// submodule); the executable bit is not a type.
func sameType(a, b string) bool {
	return len(a) >= 3 && len(b) >= 3 && a[:3] == b[:3]
}

// ChangedPaths is the paths of Changes, for the recovery file's "files
// changed since the last checkpoint" and the files a step changed.
func ChangedPaths(ctx context.Context, workspace, commit string) ([]string, error) {
	files, _, err := Changes(ctx, workspace, commit, 0)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	return paths, nil
}

// gitMode is the git mode of a file in the working tree.
func gitMode(fi os.FileInfo) string {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return "120000"
	case fi.IsDir():
		return "160000"
	case fi.Mode()&0o111 != 0:
		return "100755"
	default:
		return "100644"
	}
}

func splitNUL(out []byte) []string {
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// RestoreOptions say where Restore puts a snapshot. At most one of To and
// Branch is set; neither restores in place.
type RestoreOptions struct {
	// To is a directory to write the snapshot's files into. It is created
	// if missing and must be empty unless Force.
	To string
	// Branch is the name of a branch to create at the snapshot commit.
	Branch string
	// Force lets an in-place restore overwrite uncommitted changes, lets
	// To be a non-empty directory, and lets Branch move an existing branch.
	Force bool
	// Paths, when set, restores only these files (a directory names every
	// file under it), relative to the top of the repository. Each must
	// name a file of the snapshot. In place, a named file is refused
	// (unless Force) only when its content is saved nowhere: neither the
	// snapshot nor HEAD holds it. Other files are never touched.
	Paths []string
}

// RestoreResult reports what Restore did.
type RestoreResult struct {
	// Commit is the snapshot commit restored.
	Commit string
	// Where is the directory written, or the branch created.
	Where string
	// Files is how many files were written; 0 for a branch.
	Files int
}

// Restore brings back the snapshot commit of workspace's repository.
//
// In place (no To, no Branch) it writes every file of the snapshot into the
// working tree, leaving HEAD, the branch and the index as they are, so the
// restored work shows as uncommitted changes; files absent from the
// snapshot are left alone. It refuses when the working tree has
// uncommitted changes (ErrUncommittedChanges) unless Force, and when a file
// it would overwrite holds content that neither the snapshot nor HEAD
// holds although git status does not show it (ignored since, or marked
// assume-unchanged or skip-worktree).
//
// With To it writes the snapshot's files into that directory; with Branch
// it creates a branch at the snapshot commit (whose parent is the HEAD it
// was taken on). Neither touches the workspace.
func Restore(ctx context.Context, workspace, commit string, opts RestoreOptions) (*RestoreResult, error) {
	if opts.To != "" && opts.Branch != "" {
		return nil, errors.New("restore: --to and --branch are exclusive")
	}
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return nil, err
	}
	commit, err = resolveCommit(ctx, r, commit)
	if err != nil {
		return nil, err
	}
	res := &RestoreResult{Commit: commit}
	if len(opts.Paths) > 0 {
		if opts.Branch != "" {
			return nil, errors.New("restore: paths and --branch are exclusive: a branch holds the whole snapshot")
		}
		if err := checkPaths(opts.Paths); err != nil {
			return nil, err
		}
	}
	if opts.Branch != "" {
		if err := restoreBranch(ctx, r, commit, opts); err != nil {
			return nil, err
		}
		res.Where = opts.Branch
		return res, nil
	}
	dest, err := restoreDest(ctx, r, opts)
	if err != nil {
		return nil, err
	}

	f, err := os.CreateTemp("", "tether-restore-index-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	_ = f.Close()
	_ = os.Remove(tmp)
	defer func() {
		_ = os.Remove(tmp)
		_ = os.Remove(tmp + ".lock")
	}()
	if _, err := (gitCmd{dir: r.top, index: tmp, args: []string{"read-tree", commit}}).run(ctx); err != nil {
		return nil, err
	}
	var files []string
	if len(opts.Paths) > 0 {
		if files, err = snapshotFiles(ctx, r, tmp, opts.Paths); err != nil {
			return nil, err
		}
		if dest == r.top && !opts.Force {
			if err := refuseUnsaved(ctx, r, commit, files); err != nil {
				return nil, err
			}
		}
	} else if dest == r.top && !opts.Force {
		// git status was clean, but it does not show every local change.
		out, err := gitCmd{dir: r.top, index: tmp, args: []string{"ls-files", "-z"}}.run(ctx)
		if err != nil {
			return nil, err
		}
		hidden, err := hiddenFromStatus(ctx, r, splitNUL(out))
		if err != nil {
			return nil, err
		}
		if err := refuseUnsaved(ctx, r, commit, hidden); err != nil {
			return nil, err
		}
	}
	// checkout-index writes symlinks as symlinks and never follows one
	// out of the destination.
	args := []string{"checkout-index", "-f"}
	if dest != r.top {
		args = append(args, "--prefix="+dest+string(filepath.Separator))
	}
	if files == nil {
		args = append(args, "-a")
	} else {
		args = append(append(args, "--"), files...)
	}
	if _, err := (gitCmd{dir: r.top, index: tmp, args: args}).run(ctx); err != nil {
		return nil, err
	}
	res.Files = len(files)
	if files == nil {
		out, err := gitCmd{dir: r.top, index: tmp, args: []string{"ls-files", "-z"}}.run(ctx)
		if err != nil {
			return nil, err
		}
		res.Files = strings.Count(string(out), "\x00")
	}
	res.Where = dest
	return res, nil
}

// checkPaths refuses a path that could leave the repository or is not a
// plain relative path, naming it, before git sees it.
func checkPaths(paths []string) error {
	for _, p := range paths {
		c := filepath.ToSlash(filepath.Clean(p))
		switch {
		case p == "" || strings.ContainsRune(p, 0):
			return fmt.Errorf("restore: path %q is empty or holds a NUL byte", p)
		case filepath.IsAbs(p):
			return fmt.Errorf("restore: path %q is absolute; name it relative to the top of the repository", p)
		case c == "." || c == ".." || strings.HasPrefix(c, "../"):
			return fmt.Errorf("restore: path %q is outside the repository, or all of it (leave the paths out to restore everything)", p)
		}
	}
	return nil
}

// snapshotFiles lists the files of the snapshot (read into index) that
// paths name, refusing a path that names none of them.
func snapshotFiles(ctx context.Context, r *repo, index string, paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		c := filepath.ToSlash(filepath.Clean(p))
		out, err := gitCmd{dir: r.top, index: index, args: []string{"ls-files", "-z", "--", c},
			env: []string{"GIT_LITERAL_PATHSPECS=1"}}.run(ctx)
		if err != nil {
			return nil, err
		}
		named := splitNUL(out)
		if len(named) == 0 {
			return nil, fmt.Errorf("restore: the snapshot holds no file at %q", p)
		}
		files = append(files, named...)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// hiddenFromStatus lists the files among files whose local changes git
// status does not show: those the user's index does not track (ignored
// ones) and those marked assume-unchanged or skip-worktree.
func hiddenFromStatus(ctx context.Context, r *repo, files []string) ([]string, error) {
	out, err := git(ctx, r.top, "ls-files", "-v", "-z")
	if err != nil {
		return nil, err
	}
	tags := map[string]byte{}
	for _, e := range splitNUL(out) {
		if len(e) > 2 {
			tags[e[2:]] = e[0]
		}
	}
	var hidden []string
	for _, f := range files {
		tag, tracked := tags[f]
		// ls-files -v: S is skip-worktree, a lower-case tag assume-unchanged.
		if !tracked || tag == 'S' || (tag >= 'a' && tag <= 'z') {
			hidden = append(hidden, f)
		}
	}
	return hidden, nil
}

// refuseUnsaved fails, naming them, when files of the workspace that a
// restore of only files would overwrite hold content that neither the
// snapshot commit nor HEAD holds. It compares contents, not git status,
// so an ignored, assume-unchanged or skip-worktree file counts as well; a
// missing file has nothing to lose.
func refuseUnsaved(ctx context.Context, r *repo, commit string, files []string) error {
	if len(files) == 0 {
		return nil
	}
	saved := map[string]map[string]bool{}
	for _, rev := range []string{commit, "HEAD"} {
		out, err := gitCmd{dir: r.top, args: append([]string{"ls-tree", "-r", "-z", "--full-tree", rev, "--"}, files...),
			env: []string{"GIT_LITERAL_PATHSPECS=1"}}.run(ctx)
		if err != nil {
			if rev == "HEAD" {
				continue // an unborn branch holds nothing
			}
			return err
		}
		for _, entry := range splitNUL(out) {
			meta, path, ok := strings.Cut(entry, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 {
				if saved[path] == nil {
					saved[path] = map[string]bool{}
				}
				saved[path][f[2]] = true
			}
		}
	}
	var onDisk, unsaved []string
	for _, p := range files {
		fi, err := os.Lstat(filepath.Join(r.top, p))
		switch {
		case err != nil:
			continue
		case !fi.Mode().IsRegular() || strings.Contains(p, "\n"):
			unsaved = append(unsaved, p)
		default:
			onDisk = append(onDisk, p)
		}
	}
	if len(onDisk) > 0 {
		out, err := gitCmd{dir: r.top, args: []string{"hash-object", "--stdin-paths"},
			stdin: strings.NewReader(strings.Join(onDisk, "\n") + "\n")}.run(ctx)
		if err != nil {
			return err
		}
		ids := strings.Fields(string(out))
		if len(ids) != len(onDisk) {
			return fmt.Errorf("git hash-object: %d hashes for %d files", len(ids), len(onDisk))
		}
		for i, p := range onDisk {
			if !saved[p][ids[i]] {
				unsaved = append(unsaved, p)
			}
		}
	}
	if len(unsaved) == 0 {
		return nil
	}
	slices.Sort(unsaved)
	return fmt.Errorf("%w in %s (%s): neither the checkpoint nor HEAD holds their content, and restoring would overwrite it. "+
		"Restore elsewhere with --to DIR, leave these paths out, or pass --force to overwrite them",
		ErrUncommittedChanges, r.top, strings.Join(unsaved, ", "))
}

// restoreBranch creates the branch opts.Branch at commit, moving an
// existing one only with opts.Force.
func restoreBranch(ctx context.Context, r *repo, commit string, opts RestoreOptions) error {
	if _, err := git(ctx, r.top, "check-ref-format", "--branch", opts.Branch); err != nil {
		return fmt.Errorf("--branch %q is not a valid branch name", opts.Branch)
	}
	args := []string{"branch", "--no-track"}
	if opts.Force {
		args = append(args, "-f")
	}
	if _, err := git(ctx, r.top, append(args, "--", opts.Branch, commit)...); err != nil {
		if !opts.Force && strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("branch %q already exists; choose another name, or pass --force to move it to %s", opts.Branch, short(commit))
		}
		return err
	}
	return nil
}

// restoreDest is the directory a restore writes into: opts.To, created
// when missing and refused when not empty (unless opts.Force), or the
// working tree, refused when it has uncommitted changes (unless
// opts.Force or a restore of some paths only).
func restoreDest(ctx context.Context, r *repo, opts RestoreOptions) (string, error) {
	if opts.To == "" {
		if !opts.Force && len(opts.Paths) == 0 {
			if err := refuseUncommitted(ctx, r); err != nil {
				return "", err
			}
		}
		return r.top, nil
	}
	dest, err := filepath.Abs(opts.To)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dest)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dest, 0o755); err != nil {
			return "", err
		}
	case err != nil:
		return "", fmt.Errorf("--to %s: %w", opts.To, err)
	case len(entries) > 0 && !opts.Force:
		return "", fmt.Errorf("--to %s is not empty; choose an empty or new directory, or pass --force to overwrite its files", opts.To)
	}
	return dest, nil
}

// refuseUncommitted fails with a message saying how to proceed when the
// working tree has uncommitted changes or untracked files.
func refuseUncommitted(ctx context.Context, r *repo) error {
	entries, err := status(ctx, r.top, "")
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		paths = append(paths, e.path)
	}
	if len(paths) == 0 {
		return nil
	}
	slices.Sort(paths)
	shown := paths
	if len(shown) > 5 {
		shown = shown[:5]
	}
	list := strings.Join(shown, ", ")
	if len(paths) > len(shown) {
		list += ", ... (" + strconv.Itoa(len(paths)) + " in all)"
	}
	return fmt.Errorf("%w in %s (%s): restoring in place would overwrite them. "+
		"Commit or stash them first, restore elsewhere with --to DIR or --branch NAME, or pass --force to overwrite them",
		ErrUncommittedChanges, r.top, list)
}

// Verify checks that ref exists in workspace's repository and points at
// commit: nil when it does, an error wrapping ErrRefMissing, ErrRefMoved
// or ErrCommitMissing when it does not, and another error when the
// workspace cannot be read (ErrMissingWorkspace, ErrNotRepository, ...).
func Verify(ctx context.Context, workspace, ref, commit string) error {
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return err
	}
	out, err := git(ctx, r.top, "rev-parse", "-q", "--verify", ref)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefMissing, ref)
	}
	if got := trimNL(out); got != commit {
		return fmt.Errorf("%w: %s is %s, not %s", ErrRefMoved, ref, short(got), short(commit))
	}
	if _, err := git(ctx, r.top, "cat-file", "-e", commit+"^{tree}"); err != nil {
		return fmt.Errorf("%w: %s", ErrCommitMissing, commit)
	}
	return nil
}

// DeleteRef deletes ref from workspace's repository if it points at
// commit (any commit when commit is empty). A ref that is already gone is
// not an error; one that points elsewhere is left and reported (ErrRefMoved).
func DeleteRef(ctx context.Context, workspace, ref, commit string) error {
	if !strings.HasPrefix(ref, RefPrefix) {
		return fmt.Errorf("snapshot: refusing to delete %q, which is not under %s: %w", ref, RefPrefix, ErrForeignRef)
	}
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return err
	}
	// A name such as refs/tether/../heads/main starts with the prefix but
	// is no ref of tether's; git's own rule decides.
	if _, err := git(ctx, r.top, "check-ref-format", ref); err != nil {
		return fmt.Errorf("snapshot: refusing to delete %q, which is not a valid ref name: %w", ref, ErrForeignRef)
	}
	out, err := git(ctx, r.top, "rev-parse", "-q", "--verify", ref)
	if err != nil {
		return nil
	}
	if got := trimNL(out); commit != "" && got != commit {
		return fmt.Errorf("%w: %s is %s, not %s; left in place", ErrRefMoved, ref, short(got), short(commit))
	}
	args := []string{"update-ref", "-d", ref}
	if commit != "" {
		args = append(args, commit)
	}
	_, err = git(ctx, r.top, args...)
	return err
}

// RemoveIndex removes the persistent index that captures keep for a Hook in
// workspace's repository (the default location, under the git directory),
// with any temporary copy a killed capture left. The index is only a cache
// of file stat data, so removing it costs the next capture a cold start.
// namespace and hook must be plain names: they become path elements.
func RemoveIndex(ctx context.Context, workspace, namespace, hook string) error {
	for _, n := range []string{namespace, hook} {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\\\x00") {
			return fmt.Errorf("snapshot: refusing to remove the index of %q/%q: not a plain name", namespace, hook)
		}
	}
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return err
	}
	dir := filepath.Join(r.gitDir, "tether", "index", namespace)
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(hook)+".index.*.tmp*"))
	for _, p := range append(matches, filepath.Join(dir, hook+".index")) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// globEscape quotes the metacharacters of filepath.Match in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// RefEntry is one checkpoint ref.
type RefEntry struct {
	// Ref is the full ref name.
	Ref string
	// Commit is the commit it points at.
	Commit string
	// Seq is the ref's sequence number.
	Seq int64
}

// List lists the checkpoint refs of a Hook in workspace's repository,
// oldest (lowest sequence) first.
func List(ctx context.Context, workspace, namespace, hook string) ([]RefEntry, error) {
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return nil, err
	}
	prefix := RefPrefix + namespace + "/" + hook + "/"
	out, err := git(ctx, r.top, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	var refs []RefEntry
	for _, line := range strings.Split(trimNL(out), "\n") {
		id, ref, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		seq, err := strconv.ParseInt(strings.TrimPrefix(ref, prefix), 10, 64)
		if err != nil {
			continue
		}
		refs = append(refs, RefEntry{Ref: ref, Commit: id, Seq: seq})
	}
	slices.SortFunc(refs, func(a, b RefEntry) int { return int(a.Seq - b.Seq) })
	return refs, nil
}

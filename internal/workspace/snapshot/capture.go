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

// Package snapshot stores a git working tree, untracked files included and
// .gitignore respected, as a commit under a private ref
// (refs/tether/checkpoints/<namespace>/<hook>/<seq>), compares the working
// tree with such a commit and restores it. It runs the git binary with a
// temporary index (GIT_INDEX_FILE) and never touches the user's index,
// HEAD, branches, stash or working tree while capturing.
package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// RefPrefix is the prefix of every checkpoint ref.
const RefPrefix = "refs/tether/checkpoints/"

// The defaults of Options.
const (
	// DefaultMaxFileSize is the size above which a file is left out of a
	// snapshot: 50 MiB.
	DefaultMaxFileSize = 50 << 20
	// DefaultMaxChanged is how many changed files a Result lists.
	DefaultMaxChanged = 500
	// maxChangedBytes bounds the summed path lengths of Result.Changed, so
	// that a Checkpoint holding them stays far below etcd's 1 MiB.
	maxChangedBytes = 128 << 10
	// maxSkipped bounds Result.Skipped.
	maxSkipped = 100
)

// Options select what Capture stores and where.
type Options struct {
	// Namespace is the Hook's namespace, a ref name component.
	Namespace string
	// Hook is the Hook's name, a ref name component; it also names the
	// persistent index.
	Hook string
	// Seq is the checkpoint's sequence number, the last ref name component.
	Seq int64
	// Message is the snapshot commit's message; a default names the Hook
	// and the sequence.
	Message string
	// MaxFileSize is the size in bytes above which a new or changed file is
	// left out and named in Result.Skipped; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxChanged bounds Result.Changed; 0 means DefaultMaxChanged.
	MaxChanged int
	// IndexDir is where the per-Hook persistent index is kept, as
	// <IndexDir>/<namespace>/<hook>.index; empty means <git dir>/tether/index.
	IndexDir string
	// Previous is the previous checkpoint's snapshot commit, which
	// Result.Changed is relative to; empty, or a commit that no longer
	// exists, means HEAD.
	Previous string
	// SkipUnchanged makes Capture store nothing and return a Result with
	// Unchanged set when the working tree equals Previous's tree.
	SkipUnchanged bool
	// Commit, when set, is a commit to snapshot instead of the working
	// tree: the snapshot holds its tree and is parented on it. A git hook
	// names the commit it ran for, so that commits made in quick
	// succession each get a snapshot of their own tree, whatever HEAD is
	// by the time the capture runs.
	Commit string
}

// File is one file that differs between two snapshots.
type File struct {
	// Path is the path relative to the working tree's root.
	Path string
	// Size is the size in bytes of the file in the working tree (a
	// symlink's target length); 0 for a deleted file.
	Size int64
	// ModTime is the file's modification time; zero for a deleted file.
	ModTime time.Time
	// Mode is the git mode in octal: 100644, 100755, 120000 (symlink),
	// 160000 (submodule); for a deleted file, the mode it had.
	Mode string
	// Hash is the git object id of the new content; empty when deleted.
	Hash string
	// Status is A (added), M (modified), D (deleted) or T (type changed).
	Status string
}

// Result is what a capture stored.
type Result struct {
	// Workspace is the root of the working tree snapshotted.
	Workspace string
	// Ref is the checkpoint ref, empty when nothing was stored.
	Ref string
	// Commit is the snapshot commit.
	Commit string
	// Tree is the snapshot commit's tree.
	Tree string
	// Head is the HEAD commit; empty on an unborn branch.
	Head string
	// Branch is the checked-out branch; empty for a detached HEAD.
	Branch string
	// Dirty tells whether the working tree differs from HEAD.
	Dirty bool
	// Changed are the files that differ from the previous snapshot (or
	// from HEAD for the first one), at most Options.MaxChanged.
	Changed []File
	// Truncated tells whether more files changed than Changed lists.
	Truncated bool
	// Skipped names the new or changed files left out for their size.
	Skipped []string
	// Degraded says what the snapshot lacks or how it differs from a plain
	// one, e.g. a merge in progress.
	Degraded []string
	// Unchanged is true when SkipUnchanged found nothing new: nothing was stored.
	Unchanged bool
}

// Ref is the checkpoint ref of a Hook's snapshot number seq.
func Ref(namespace, hook string, seq int64) string {
	return RefPrefix + namespace + "/" + hook + "/" + strconv.FormatInt(seq, 10)
}

// Capture stores the working tree of the git repository containing
// workspace as a commit parented on HEAD (parentless on an unborn branch)
// under Ref(opts.Namespace, opts.Hook, opts.Seq), which it creates and
// never overwrites (ErrRefExists). The ref is written atomically after the
// commit, so an interrupted capture leaves at most unreferenced objects or
// a ref to a complete commit. It is PrepareTree followed by Pending.Commit.
func Capture(ctx context.Context, workspace string, opts Options) (*Result, error) {
	if opts.Seq <= 0 {
		return nil, fmt.Errorf("snapshot: a positive seq is required (got %d)", opts.Seq)
	}
	p, err := PrepareTree(ctx, workspace, opts)
	if err != nil {
		return nil, err
	}
	if opts.SkipUnchanged && p.Result.Unchanged {
		return &p.Result, nil
	}
	return p.Commit(ctx, opts.Seq, opts.Message)
}

// Pending is a prepared snapshot: its tree is written, its commit and ref
// are not.
type Pending struct {
	// Result describes the snapshot; Ref and Commit are empty until Commit.
	// Unchanged is true when the tree equals Options.Previous's.
	Result Result
	r      *repo
	ns     string
	hook   string
	// base is what the changed-file list is relative to: the previous
	// snapshot, HEAD, or nothing on an unborn branch.
	base       string
	maxChanged int
	// listed tells whether Result.Changed and Truncated are filled.
	listed bool
}

// Prepare writes the tree of the working tree of the repository containing
// workspace and lists the files changed since opts.Previous (or HEAD),
// without creating a commit or a ref; opts.Seq is not used.
func Prepare(ctx context.Context, workspace string, opts Options) (*Pending, error) {
	p, err := PrepareTree(ctx, workspace, opts)
	if err != nil {
		return nil, err
	}
	if p.Result.Changed, p.Result.Truncated, err = p.changes(ctx); err != nil {
		return nil, err
	}
	p.listed = true
	return p, nil
}

// PrepareTree is Prepare without the changed-file list: Result.Changed and
// Result.Truncated are filled by Pending.Commit, which lists the files
// while it creates the commit and the ref. Result.Unchanged is set.
func PrepareTree(ctx context.Context, workspace string, opts Options) (*Pending, error) {
	if opts.Namespace == "" || opts.Hook == "" {
		return nil, fmt.Errorf("snapshot: namespace and hook are required (got %q, %q)", opts.Namespace, opts.Hook)
	}
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return nil, err
	}
	p := &Pending{r: r, ns: opts.Namespace, hook: opts.Hook, maxChanged: opts.MaxChanged}
	if opts.Commit != "" {
		return p.prepareCommit(ctx, opts)
	}
	idx, err := newIndex(r, opts)
	if err != nil {
		return nil, err
	}
	defer idx.discard()
	// HEAD and the previous snapshot are looked up while git scans the
	// working tree: neither needs the other.
	revc := make(chan revs, 1)
	go func() { revc <- resolveRevs(ctx, r.top, "HEAD", opts.Previous) }()
	tree, skipped, err := buildTree(ctx, r, idx.tmp, maxSize(opts.MaxFileSize))
	if err != nil {
		return nil, err
	}
	// The refreshed index is kept whatever follows: it only speeds up the next capture.
	idx.keep()
	rv := <-revc
	if rv.err != nil {
		return nil, rv.err
	}
	r.head = rv.head

	res := &p.Result
	res.Head, res.Branch, res.Workspace, res.Tree = r.head, r.branch, r.top, tree
	for _, op := range r.inProgress {
		res.Degraded = append(res.Degraded, fmt.Sprintf("a %s is in progress: the snapshot holds the working tree as it is (conflict markers included), parented on HEAD only", op))
	}
	if r.head == "" {
		res.Degraded = append(res.Degraded, "unborn branch: the snapshot commit has no parent")
	}
	res.Skipped = skipped
	if len(skipped) > maxSkipped {
		res.Skipped = skipped[:maxSkipped]
	}
	if len(skipped) > 0 {
		res.Degraded = append(res.Degraded, fmt.Sprintf("%d file(s) larger than %d bytes left out (named in skipped files)", len(skipped), maxSize(opts.MaxFileSize)))
	}
	if rv.headTree != "" {
		res.Dirty = tree != rv.headTree
	} else {
		res.Dirty = tree != emptyTree(ctx, r.top, tree)
	}
	p.base = r.head
	if opts.Previous != "" {
		if rv.previous == "" {
			res.Degraded = append(res.Degraded, fmt.Sprintf("previous snapshot %s is gone: changed files are relative to HEAD", short(opts.Previous)))
		} else {
			p.base = rv.previous
			res.Unchanged = tree == rv.previousTree
		}
	}
	return p, nil
}

// prepareCommit is PrepareTree of opts.Commit: its tree, parented on it.
func (p *Pending) prepareCommit(ctx context.Context, opts Options) (*Pending, error) {
	c := opts.Commit
	if strings.HasPrefix(c, "-") || strings.ContainsAny(c, "\n\r") {
		return nil, fmt.Errorf("snapshot: commit %q: %w", c, ErrCommitMissing)
	}
	rv := resolveRevs(ctx, p.r.top, c, opts.Previous)
	if rv.err != nil {
		return nil, rv.err
	}
	if rv.head == "" {
		return nil, fmt.Errorf("snapshot: commit %q: %w in %s", c, ErrCommitMissing, p.r.top)
	}
	p.r.head = rv.head
	res := &p.Result
	res.Head, res.Branch, res.Workspace, res.Tree = rv.head, p.r.branch, p.r.top, rv.headTree
	p.base = rv.head
	if opts.Previous != "" && rv.previous != "" {
		p.base = rv.previous
		res.Unchanged = res.Tree == rv.previousTree
	}
	return p, nil
}

// changes lists the files that differ from the base of the changed-file
// list (the previous snapshot or HEAD) to the prepared tree.
func (p *Pending) changes(ctx context.Context) ([]File, bool, error) {
	if p.Result.Unchanged {
		return nil, false, nil
	}
	return diffTrees(ctx, p.r.top, p.base, p.Result.Tree, p.maxChanged)
}

// revs are the commits and trees a capture is parented on and compared with.
type revs struct {
	head, headTree         string // empty on an unborn branch
	previous, previousTree string // empty when there is no previous snapshot
	err                    error
}

// resolveRevs looks up head (HEAD, or the commit to snapshot) and the
// previous snapshot commit with one git process; a name that does not
// resolve leaves its fields empty.
func resolveRevs(ctx context.Context, top, head, previous string) revs {
	names := []string{head + "^{commit}", head + "^{tree}"}
	// A line break would end the name early and shift every answer.
	if previous != "" && !strings.ContainsAny(previous, "\n\r") {
		names = append(names, previous+"^{commit}", previous+"^{tree}")
	}
	out, err := gitCmd{dir: top, args: []string{"cat-file", "--batch-check=%(objectname)"},
		stdin: strings.NewReader(strings.Join(names, "\n") + "\n")}.run(ctx)
	if err != nil {
		return revs{err: err}
	}
	ids := make([]string, 4)
	for i, line := range strings.SplitN(trimNL(out), "\n", len(names)) {
		if isObjectID(line) {
			ids[i] = line
		}
	}
	rv := revs{head: ids[0], headTree: ids[1], previous: ids[2], previousTree: ids[3]}
	if rv.head == "" {
		rv.headTree = ""
	}
	if rv.previous == "" {
		rv.previousTree = ""
	}
	return rv
}

// isObjectID tells whether s is a SHA-1 or SHA-256 object id in hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// Commit creates the snapshot commit (once; a retry reuses it) and the
// ref Ref(namespace, hook, seq), create-only: ErrRefExists when it exists.
// After PrepareTree, it also lists the changed files, at the same time.
func (p *Pending) Commit(ctx context.Context, seq int64, message string) (*Result, error) {
	if seq <= 0 {
		return nil, fmt.Errorf("snapshot: a positive seq is required (got %d)", seq)
	}
	type list struct {
		files     []File
		truncated bool
		err       error
	}
	var lc chan list
	if !p.listed {
		lc = make(chan list, 1)
		go func() {
			files, truncated, err := p.changes(ctx)
			lc <- list{files, truncated, err}
		}()
	}
	ref, err := p.commit(ctx, seq, message)
	if lc != nil {
		l := <-lc
		if err == nil && l.err != nil {
			// A ref is only ever handed out with its changed files.
			_, _ = git(context.WithoutCancel(ctx), p.r.top, "update-ref", "-d", ref, p.Result.Commit)
			err = l.err
		}
		if l.err == nil {
			p.Result.Changed, p.Result.Truncated, p.listed = l.files, l.truncated, true
		}
	}
	if err != nil {
		return nil, err
	}
	res := p.Result
	res.Ref = ref
	return &res, nil
}

// commit creates the snapshot commit unless done already, and the ref.
func (p *Pending) commit(ctx context.Context, seq int64, message string) (string, error) {
	if p.Result.Commit == "" {
		msg := message
		if msg == "" {
			msg = fmt.Sprintf("tether checkpoint %s/%s", p.ns, p.hook)
		}
		args := []string{"commit-tree", p.Result.Tree}
		if p.r.head != "" {
			args = append(args, "-p", p.r.head)
		}
		out, err := gitCmd{dir: p.r.top, args: append(args, "-F", "-"), stdin: strings.NewReader(msg + "\n")}.run(ctx)
		if err != nil {
			return "", err
		}
		p.Result.Commit = trimNL(out)
	}
	ref := Ref(p.ns, p.hook, seq)
	if _, err := git(ctx, p.r.top, "update-ref", "-m", "tether checkpoint", ref, p.Result.Commit, ""); err != nil {
		if _, verr := git(ctx, p.r.top, "rev-parse", "-q", "--verify", ref); verr == nil {
			return "", fmt.Errorf("%w: %s", ErrRefExists, ref)
		}
		return "", err
	}
	return ref, nil
}

func maxSize(n int64) int64 {
	if n <= 0 {
		return DefaultMaxFileSize
	}
	return n
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// The ids of the empty tree in SHA-1 and SHA-256 repositories.
const (
	emptyTreeSHA1   = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	emptyTreeSHA256 = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
)

// emptyTree is the id of the empty tree in the repository's hash, which
// like tells from its length.
func emptyTree(ctx context.Context, dir, like string) string {
	switch len(like) {
	case len(emptyTreeSHA1):
		return emptyTreeSHA1
	case len(emptyTreeSHA256):
		return emptyTreeSHA256
	}
	out, err := gitCmd{dir: dir, args: []string{"hash-object", "-t", "tree", "--stdin"}, stdin: strings.NewReader("")}.run(ctx)
	if err != nil {
		return ""
	}
	return trimNL(out)
}

// index is a capture's private copy of the per-Hook persistent index.
// Captures work on a copy and rename it into place when done, so that
// concurrent captures never wait on each other's index.lock and a killed
// capture leaves the persistent index as it was.
type index struct {
	path, tmp string
	kept      bool
}

func newIndex(r *repo, opts Options) (*index, error) {
	dir := opts.IndexDir
	if dir == "" {
		dir = filepath.Join(r.gitDir, "tether", "index")
	}
	dir = filepath.Join(dir, opts.Namespace)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot index directory: %w", err)
	}
	idx := &index{path: filepath.Join(dir, opts.Hook+".index")}
	f, err := os.CreateTemp(dir, opts.Hook+".index.*.tmp")
	if err != nil {
		return nil, fmt.Errorf("snapshot index: %w", err)
	}
	idx.tmp = f.Name()
	_ = f.Close()
	removeStale(dir, opts.Hook)
	// Seed from the persistent index, or the first time from the user's,
	// so git's stat cache spares rehashing unchanged files.
	seeded, err := copyFile(idx.path, idx.tmp)
	if err == nil && !seeded {
		seeded, err = copyFile(r.userIndex, idx.tmp)
	}
	if err != nil {
		idx.discard()
		return nil, err
	}
	if !seeded {
		// git reads an empty file as a corrupt index; no file is an empty one.
		_ = os.Remove(idx.tmp)
	}
	return idx, nil
}

// removeStale removes the temporary indexes a killed capture left behind.
func removeStale(dir, hook string) {
	matches, _ := filepath.Glob(filepath.Join(dir, hook+".index.*.tmp*"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && time.Since(fi.ModTime()) > 10*time.Minute {
			_ = os.Remove(m)
		}
	}
}

// copyFile copies src to dst with src's modification time, which git's
// racy-entry check compares file times with; false when src does not exist.
func copyFile(src, dst string) (bool, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = in.Close() }()
	fi, err := in.Stat()
	if err != nil {
		return false, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return false, err
	}
	if err := out.Close(); err != nil {
		return false, err
	}
	return true, os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// keep makes the refreshed copy the persistent index.
func (i *index) keep() {
	if _, err := os.Stat(i.tmp); err == nil && os.Rename(i.tmp, i.path) == nil {
		i.kept = true
	}
}

func (i *index) discard() {
	if !i.kept {
		_ = os.Remove(i.tmp)
		_ = os.Remove(i.tmp + ".lock")
	}
}

// buildTree brings index up to date with the working tree of r, new and
// changed files larger than maxFileSize excepted, and writes its tree.
// It costs one scan of the working tree (git status) and hashes only the
// files whose stat data changed.
func buildTree(ctx context.Context, r *repo, index string, maxFileSize int64) (string, []string, error) {
	entries, err := status(ctx, r.top, index)
	if err != nil {
		return "", nil, err
	}
	var update bytes.Buffer
	var skipped []string
	for _, e := range entries {
		if !e.worktree {
			continue
		}
		p := e.path
		if fi, err := os.Lstat(filepath.Join(r.top, p)); err == nil && fi.Mode().IsRegular() && fi.Size() > maxFileSize {
			skipped = append(skipped, p)
			continue
		}
		update.WriteString(p)
		update.WriteByte(0)
	}
	if update.Len() > 0 {
		if _, err := (gitCmd{dir: r.top, index: index, stdin: &update,
			args: []string{"update-index", "--add", "--remove", "--replace", "-z", "--stdin"}}).run(ctx); err != nil {
			return "", nil, err
		}
	}
	tree, err := gitCmd{dir: r.top, index: index, args: []string{"write-tree"}}.run(ctx)
	if err != nil {
		return "", nil, err
	}
	return trimNL(tree), skipped, nil
}

// diffTrees lists the files that differ from base (a commit or tree; empty
// for none) to tree, at most limit (0: DefaultMaxChanged).
func diffTrees(ctx context.Context, top, base, tree string, limit int) ([]File, bool, error) {
	if limit <= 0 {
		limit = DefaultMaxChanged
	}
	var out []byte
	var err error
	if base == "" {
		base = emptyTree(ctx, top, tree)
	}
	out, err = git(ctx, top, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", base, tree)
	if err != nil {
		return nil, false, err
	}
	return parseRawDiff(top, out, limit)
}

// parseRawDiff reads `git diff-tree -r -z` raw output:
// ":oldmode newmode oldid newid status\0path\0" per file.
func parseRawDiff(top string, out []byte, limit int) ([]File, bool, error) {
	var files []File
	var size int
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		parts := strings.Fields(strings.TrimPrefix(f, ":"))
		if !strings.HasPrefix(f, ":") || len(parts) != 5 || i+1 >= len(fields) {
			return nil, false, fmt.Errorf("git diff-tree: malformed entry %q", f)
		}
		i++
		path := fields[i]
		if len(files) >= limit || size+len(path) > maxChangedBytes {
			return files, true, nil
		}
		size += len(path)
		file := File{Path: path, Mode: parts[1], Hash: parts[3], Status: parts[4][:1]}
		if file.Status == "D" {
			file.Mode, file.Hash = parts[0], ""
		} else if fi, err := os.Lstat(filepath.Join(top, path)); err == nil {
			file.Size, file.ModTime = fi.Size(), fi.ModTime()
		}
		files = append(files, file)
	}
	return files, false, nil
}

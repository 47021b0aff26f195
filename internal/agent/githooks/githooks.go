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

// Package githooks installs, removes and inspects the git hooks that take
// tether's git_commit and git_push checkpoints: post-commit and pre-push in
// the hooks directory git itself uses (core.hooksPath, husky, worktrees).
//
// A hook that is already there is chained, not replaced: it is kept next to
// tether's script as NAME.tether-chained (a hard link, so its bytes and mode
// are the very same) and still runs with git's arguments and stdin, its exit
// status deciding as before. Uninstall moves it back, so the hooks directory
// is exactly as it was. tether's own part never fails or blocks git.
package githooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// HeaderPrefix starts the second line of every hook script tether installs;
// it is how tether recognises its own scripts.
const HeaderPrefix = "# tether-git-hook:"

// ChainedSuffix is appended to a hook's file name to keep the hook that was
// there before tether's, which tether's script runs.
const ChainedSuffix = ".tether-chained"

// DefaultWait is how many seconds a hook waits for its checkpoint before
// leaving it in the background, unless $TETHER_HOOK_WAIT says otherwise.
const DefaultWait = 1

// DefaultTimeout is how many seconds a checkpoint taken by a hook may run
// where the timeout command exists, unless $TETHER_HOOK_TIMEOUT says otherwise.
const DefaultTimeout = 60

// Hook is one git hook tether installs.
type Hook struct {
	// Name is the hook's file name, as git knows it.
	Name string
	// Trigger is the checkpoint trigger the hook reports.
	Trigger string
	// stdin tells whether git writes data to the hook's stdin.
	stdin bool
}

// Hooks are the git hooks tether installs. git has no post-push hook:
// pre-push runs before the push and cannot be failed by tether.
var Hooks = []Hook{
	{Name: "post-commit", Trigger: "git_commit"},
	{Name: "pre-push", Trigger: "git_push", stdin: true},
}

// Options say where to install and what the hooks run.
type Options struct {
	// Dir is a directory inside the git working tree; empty means the
	// working directory.
	Dir string
	// Tether is the path of the tether binary the hooks run. When it is
	// not executable at hook time, the hooks look tether up in $PATH.
	Tether string
	// Flags are tether global flags the hooks pass on, such as
	// ["--store", "/abs/dir"]; without them tether finds its store from the
	// working tree as the CLI does.
	Flags []string
	// DryRun makes Install report what it would do, and refuse what it
	// would refuse, writing nothing.
	DryRun bool
}

// Action is what Install or Uninstall did to one hook.
type Action string

// The actions.
const (
	// Installed means tether's script was written where no hook was.
	Installed Action = "installed"
	// InstalledChained means tether's script replaced a hook, which it chains.
	InstalledChained Action = "installed (chained existing hook)"
	// Updated means tether's script was rewritten with new content.
	Updated Action = "updated"
	// Unchanged means tether's script was already installed as is.
	Unchanged Action = "unchanged"
	// Removed means tether's script was removed and nothing was there before.
	Removed Action = "removed"
	// Restored means tether's script was removed and the chained hook put back.
	Restored Action = "removed (restored the chained hook)"
	// NotInstalled means there was no tether script to remove.
	NotInstalled Action = "not installed"
)

// Result reports what was done to one hook.
type Result struct {
	// Hook is the hook's name.
	Hook string
	// Path is the hook's file.
	Path string
	// Action is what was done.
	Action Action
}

// String reads as "installed post-commit (chained existing hook)".
func (r Result) String() string {
	verb, rest, _ := strings.Cut(string(r.Action), " ")
	if rest != "" {
		rest = " " + rest
	}
	if r.Action == Unchanged || r.Action == NotInstalled {
		return fmt.Sprintf("%s %s (%s)", r.Hook, verb+rest, r.Path)
	}
	return fmt.Sprintf("%s %s%s (%s)", verb, r.Hook, rest, r.Path)
}

// State is the installation state of one hook.
type State struct {
	// Hook is the hook's name.
	Hook string
	// Path is the hook's file.
	Path string
	// Installed tells whether the file is tether's script.
	Installed bool
	// Current tells whether an installed script is what Install writes now.
	Current bool
	// Chained tells whether a chained hook is kept next to it.
	Chained bool
	// Foreign tells whether a hook tether did not write is there.
	Foreign bool
}

// String describes s in a line.
func (s State) String() string {
	switch {
	case s.Installed && s.Chained:
		return fmt.Sprintf("%s: installed, chaining %s%s (%s)", s.Hook, s.Hook, ChainedSuffix, s.Path)
	case s.Installed:
		return fmt.Sprintf("%s: installed (%s)", s.Hook, s.Path)
	case s.Foreign:
		return fmt.Sprintf("%s: not installed; a hook tether did not write is there (%s)", s.Hook, s.Path)
	}
	return fmt.Sprintf("%s: not installed (%s)", s.Hook, s.Path)
}

// HooksDir is the directory git runs hooks from for the repository at dir,
// as `git rev-parse --git-path hooks` says: core.hooksPath when set, the
// common git directory's hooks otherwise (also from a linked worktree).
func HooksDir(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	bare, err := git(ctx, abs, "rev-parse", "--is-bare-repository")
	if err != nil {
		return "", fmt.Errorf("%s is not in a git repository: %w", abs, err)
	}
	if bare == "true" {
		return "", fmt.Errorf("%s is a bare git repository: nothing is committed there, so it needs no hooks", abs)
	}
	path, err := git(ctx, abs, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(abs, path)
	}
	return filepath.Clean(path), nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Script is the hook script Install writes for h.
func Script(h Hook, tether string, flags []string) []byte {
	quoted := make([]string, len(flags))
	for i, f := range flags {
		quoted[i] = shellQuote(f)
	}
	var buf bytes.Buffer
	err := scriptTemplate.Execute(&buf, scriptData{
		Header: HeaderPrefix + " " + h.Name, Name: h.Name, Trigger: h.Trigger, ChainedSuffix: ChainedSuffix,
		Tether: shellQuote(tether), Flags: quoted, Stdin: h.stdin, Wait: DefaultWait, Timeout: DefaultTimeout,
	})
	if err != nil {
		panic(err) // the template and its data are fixed
	}
	return buf.Bytes()
}

// IsTetherScript tells whether data is a hook script tether wrote.
func IsTetherScript(data []byte) bool {
	_, rest, _ := bytes.Cut(data, []byte("\n"))
	return bytes.HasPrefix(rest, []byte(HeaderPrefix))
}

// Install writes tether's post-commit and pre-push into the hooks directory
// of the repository at opts.Dir, chaining any hook already there. It is
// idempotent. It refuses, changing nothing for that hook, when a hook
// tether did not write is there and a chained hook too, or when a chained
// hook is left without tether's script: either would lose a hook.
func Install(ctx context.Context, opts Options) ([]Result, error) {
	if opts.Tether == "" {
		return nil, errors.New("the path of the tether binary is empty")
	}
	dir, err := HooksDir(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	if !opts.DryRun {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating the hooks directory: %w", err)
		}
	}
	var results []Result
	var errs []error
	for _, h := range Hooks {
		action, err := install(dir, h, Script(h, opts.Tether, opts.Flags), opts.DryRun)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, Result{Hook: h.Name, Path: filepath.Join(dir, h.Name), Action: action})
	}
	return results, errors.Join(errs...)
}

// file is what is at a path: absent, a symlink, or a file with its bytes.
type file struct {
	exists  bool
	symlink string
	data    []byte
	mode    fs.FileMode
}

func readFile(path string) (file, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return file{}, nil
	}
	if err != nil {
		return file{}, err
	}
	f := file{exists: true, mode: fi.Mode()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.symlink, err = os.Readlink(path)
	case fi.Mode().IsRegular():
		f.data, err = os.ReadFile(path)
	default:
		err = fmt.Errorf("%s is not a regular file", path)
	}
	return f, err
}

func (f file) same(g file) bool {
	return f.exists == g.exists && f.symlink == g.symlink && f.mode == g.mode && bytes.Equal(f.data, g.data)
}

func (f file) ours() bool { return f.exists && f.symlink == "" && IsTetherScript(f.data) }

// install writes tether's script for h into dir, unless dryRun.
func install(dir string, h Hook, script []byte, dryRun bool) (Action, error) {
	path := filepath.Join(dir, h.Name)
	chainedPath := path + ChainedSuffix
	cur, err := readFile(path)
	if err != nil {
		return "", err
	}
	chained, err := readFile(chainedPath)
	if err != nil {
		return "", err
	}
	switch {
	case cur.ours():
		if bytes.Equal(cur.data, script) && cur.mode.Perm() == 0o755 {
			return Unchanged, nil
		}
		if dryRun {
			return Updated, nil
		}
		if err := writeScript(path, script); err != nil {
			return "", err
		}
		return Updated, nil
	case !cur.exists && chained.exists:
		return "", fmt.Errorf("%s: %s is there without tether's %s, which chained it; move it back to %s or delete it, then install again",
			h.Name, chainedPath, h.Name, path)
	case !cur.exists:
		if dryRun {
			return Installed, nil
		}
		if err := writeScript(path, script); err != nil {
			return "", err
		}
		return Installed, nil
	case chained.exists && !cur.same(chained):
		return "", fmt.Errorf("%s: %s is not tether's script and %s is there too; tether will not overwrite either. Merge them into one hook, then install again",
			h.Name, path, chainedPath)
	}
	// A hook tether did not write: keep it as the chained hook, under a
	// second name first, so that no crash can lose it. When it is already
	// there, byte for byte (an interrupted install, or a hook manager that
	// rewrote tether's script with what it had chained), the copy stays.
	if dryRun {
		return InstalledChained, nil
	}
	if !chained.exists {
		if err := link(path, chainedPath, cur); err != nil {
			return "", err
		}
	}
	if err := writeScript(path, script); err != nil {
		return "", err
	}
	return InstalledChained, nil
}

// link makes dst the same file as src: a hard link, or for a symlink a
// symlink with the same target.
func link(src, dst string, f file) error {
	var err error
	if f.symlink != "" {
		err = os.Symlink(f.symlink, dst)
	} else if err = os.Link(src, dst); err != nil {
		// No hard links here: a copy with the same bytes and mode.
		if _, err = atomicfs.WriteFileIfChanged(dst, f.data, f.mode.Perm()); err == nil {
			err = os.Chmod(dst, f.mode.Perm())
		}
	}
	if err != nil {
		return fmt.Errorf("keeping the existing hook as %s: %w", dst, err)
	}
	return atomicfs.SyncDir(filepath.Dir(dst))
}

func writeScript(path string, script []byte) error {
	// atomicfile skips equal bytes; a script whose mode was changed is
	// written again through a fresh temp file, so it gets 0755.
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, script) {
		if err := os.Chmod(path, 0o755); err != nil {
			return err
		}
		return nil
	}
	_, err := atomicfs.WriteFileIfChanged(path, script, 0o755)
	return err
}

// Uninstall removes tether's hooks from the repository at opts.Dir and puts
// back the hooks they chained, so the directory is as it was before
// Install: the same bytes and mode, or no file. A hook that is not
// tether's is left alone.
func Uninstall(ctx context.Context, opts Options) ([]Result, error) {
	dir, err := HooksDir(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	var results []Result
	var errs []error
	for _, h := range Hooks {
		action, err := uninstall(dir, h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, Result{Hook: h.Name, Path: filepath.Join(dir, h.Name), Action: action})
	}
	return results, errors.Join(errs...)
}

func uninstall(dir string, h Hook) (Action, error) {
	path := filepath.Join(dir, h.Name)
	chainedPath := path + ChainedSuffix
	cur, err := readFile(path)
	if err != nil {
		return "", err
	}
	chained, err := readFile(chainedPath)
	if err != nil {
		return "", err
	}
	switch {
	case (cur.ours() || !cur.exists) && chained.exists:
		if err := os.Rename(chainedPath, path); err != nil {
			return "", fmt.Errorf("restoring %s: %w", path, err)
		}
		return Restored, atomicfs.SyncDir(dir)
	case cur.ours():
		if err := atomicfs.RemoveDurable(path); err != nil {
			return "", err
		}
		return Removed, nil
	case cur.exists && chained.exists && cur.same(chained):
		// A hook manager rewrote tether's script with the very hook it
		// chained: the copy is redundant.
		if err := atomicfs.RemoveDurable(chainedPath); err != nil {
			return "", err
		}
		return NotInstalled, nil
	case cur.exists && chained.exists:
		return "", fmt.Errorf("%s: %s is not tether's script, so %s was not put back; merge them by hand", h.Name, path, chainedPath)
	}
	return NotInstalled, nil
}

// Status reports the state of tether's hooks in the repository at opts.Dir;
// opts.Tether and opts.Flags tell what a current script runs.
func Status(ctx context.Context, opts Options) ([]State, error) {
	dir, err := HooksDir(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	var states []State
	for _, h := range Hooks {
		path := filepath.Join(dir, h.Name)
		cur, err := readFile(path)
		if err != nil {
			return nil, err
		}
		chained, err := readFile(path + ChainedSuffix)
		if err != nil {
			return nil, err
		}
		states = append(states, State{
			Hook: h.Name, Path: path, Installed: cur.ours(), Chained: chained.exists,
			Current: cur.ours() && bytes.Equal(cur.data, Script(h, opts.Tether, opts.Flags)),
			Foreign: cur.exists && !cur.ours(),
		})
	}
	return states, nil
}

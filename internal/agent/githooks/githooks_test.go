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

package githooks_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/agent/githooks"
)

// repo is a git working tree with an isolated git configuration and a fake
// tether that records each call's arguments and stdin under calls/.
type repo struct {
	t      *testing.T
	root   string // the test's temp dir
	dir    string // the working tree
	tether string // the fake tether binary
	calls  string
	env    []string
}

const fakeTether = `#!/bin/sh
n=$$
printf '%s\n' "$@" >"$FAKE_CALLS/$n.args.tmp"
cat >"$FAKE_CALLS/$n.stdin"
mv "$FAKE_CALLS/$n.args.tmp" "$FAKE_CALLS/$n.args"
`

func newRepo(t *testing.T) *repo {
	t.Helper()
	root := t.TempDir()
	r := &repo{t: t, root: root, dir: filepath.Join(root, "work"), calls: filepath.Join(root, "calls")}
	r.env = append(os.Environ(),
		"HOME="+root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(root, "gitconfig"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"FAKE_CALLS="+r.calls, "TETHER_HOOK=", "TETHER_GIT_HOOKS=", "TETHER_HOOK_WAIT=", "TETHER_HOOK_TIMEOUT=", "TETHER_IN_GIT_HOOK=",
	)
	r.tether = r.script("bin/tether", fakeTether, 0o755)
	for _, d := range []string{r.dir, r.calls} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.git(r.dir, "init", "-q", "-b", "main")
	r.commit(r.dir, "init")
	return r
}

// script writes a file relative to the temp dir and returns its path.
func (r *repo) script(rel, content string, mode fs.FileMode) string {
	r.t.Helper()
	path := filepath.Join(r.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		r.t.Fatal(err)
	}
	return path
}

func (r *repo) cmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = r.env
	return cmd
}

func (r *repo) git(dir string, args ...string) string {
	r.t.Helper()
	out, err := r.cmd(dir, args...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit commits a change in dir and returns git's combined output.
func (r *repo) commit(dir, subject string) string {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte(subject+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.git(dir, "add", "file.txt")
	return r.git(dir, "commit", "-q", "-m", subject)
}

// call is one recorded run of the fake tether.
type call struct {
	args  []string
	stdin string
}

// waitCalls waits until the fake tether was called n times.
func (r *repo) waitCalls(n int) []call {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		matches, _ := filepath.Glob(filepath.Join(r.calls, "*.args"))
		if len(matches) >= n {
			var calls []call
			for _, m := range matches {
				args, _ := os.ReadFile(m)
				stdin, _ := os.ReadFile(strings.TrimSuffix(m, ".args") + ".stdin")
				calls = append(calls, call{args: strings.Split(strings.TrimSuffix(string(args), "\n"), "\n"), stdin: string(stdin)})
			}
			return calls
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("tether was called %d times, want %d", len(matches), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// snapshot records every file under dir: its bytes, or a symlink's target, and mode.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		var content []byte
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			content = []byte("-> " + target)
		} else if content, err = os.ReadFile(path); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = fi.Mode().String() + "\n" + string(content)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}

func argValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// huskyH is husky 9's .husky/_/h, which runs .husky/$(basename $0).
const huskyH = `#!/usr/bin/env sh
[ "$HUSKY" = "2" ] && set -x
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n

[ ! -f "$s" ] && exit 0

[ "${HUSKY-}" = "0" ] && exit 0

sh -e "$s" "$@"
c=$?

[ $c != 0 ] && echo "husky - $n script failed (code $c)"
exit $c
`

const huskyStub = "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n"

// markerHook writes the name of the marker file it was run as, with its
// arguments, into the marker file.
func markerHook(marker string) string {
	return "#!/bin/sh\necho \"ran $(basename \"$0\") $*\" >>" + marker + "\n"
}

func TestInstallCommitUninstall(t *testing.T) {
	cases := []struct {
		name string
		// setup prepares the repository and returns the directory to
		// install from and commit in, and the old hook's marker file, if any.
		setup   func(r *repo) (workdir, marker string)
		hookDir string // relative to r.dir
		chained bool
	}{
		{
			name:    "fresh repository",
			setup:   func(r *repo) (string, string) { return r.dir, "" },
			hookDir: ".git/hooks",
		},
		{
			name: "existing post-commit keeps running",
			setup: func(r *repo) (string, string) {
				marker := filepath.Join(r.root, "marker")
				r.script("work/.git/hooks/post-commit", markerHook(marker), 0o700)
				return r.dir, marker
			},
			hookDir: ".git/hooks",
			chained: true,
		},
		{
			name: "existing python post-commit keeps running",
			setup: func(r *repo) (string, string) {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
				marker := filepath.Join(r.root, "marker")
				r.script("work/.git/hooks/post-commit", "#!/usr/bin/env python3\nimport os, sys\nopen('"+marker+"', 'a').write('ran ' + os.path.basename(sys.argv[0]) + '\\n')\n", 0o755)
				return r.dir, marker
			},
			hookDir: ".git/hooks",
			chained: true,
		},
		{
			name: "husky 8: core.hooksPath .husky",
			setup: func(r *repo) (string, string) {
				marker := filepath.Join(r.root, "marker")
				r.script("work/.husky/post-commit", markerHook(marker), 0o755)
				r.git(r.dir, "config", "core.hooksPath", ".husky")
				return r.dir, marker
			},
			hookDir: ".husky",
			chained: true,
		},
		{
			name: "husky 9: core.hooksPath .husky/_ dispatching on the hook's name",
			setup: func(r *repo) (string, string) {
				marker := filepath.Join(r.root, "marker")
				r.script("work/.husky/_/h", huskyH, 0o755)
				r.script("work/.husky/_/post-commit", huskyStub, 0o755)
				r.script("work/.husky/post-commit", "echo \"ran husky $(basename \"$0\")\" >>"+marker+"\n", 0o644)
				r.git(r.dir, "config", "core.hooksPath", ".husky/_")
				return r.dir, marker
			},
			hookDir: ".husky/_",
			chained: true,
		},
		{
			name: "symlinked post-commit",
			setup: func(r *repo) (string, string) {
				marker := filepath.Join(r.root, "marker")
				target := r.script("hooks/commit-hook", markerHook(marker), 0o755)
				if err := os.Symlink(target, filepath.Join(r.dir, ".git", "hooks", "post-commit")); err != nil {
					t.Fatal(err)
				}
				return r.dir, marker
			},
			hookDir: ".git/hooks",
			chained: true,
		},
		{
			name: "linked worktree uses the common hooks directory",
			setup: func(r *repo) (string, string) {
				wt := filepath.Join(r.root, "wt")
				r.git(r.dir, "worktree", "add", "-q", wt, "-b", "side")
				return wt, ""
			},
			hookDir: ".git/hooks",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			workdir, marker := tc.setup(r)
			hookDir := filepath.Join(r.dir, tc.hookDir)
			before := snapshot(t, hookDir)
			ctx := context.Background()

			dir, err := githooks.HooksDir(ctx, workdir)
			if err != nil || dir != hookDir {
				t.Fatalf("HooksDir = %q, %v; want %q", dir, err, hookDir)
			}
			opts := githooks.Options{Dir: workdir, Tether: r.tether, Flags: []string{"--store", "/a store/it's"}}
			results, err := githooks.Install(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			wantPostCommit := githooks.Installed
			if tc.chained {
				wantPostCommit = githooks.InstalledChained
			}
			if len(results) != 2 || results[0].Action != wantPostCommit || results[1].Action != githooks.Installed {
				t.Fatalf("Install = %v, want post-commit %q and pre-push %q", results, wantPostCommit, githooks.Installed)
			}
			for _, h := range githooks.Hooks {
				path := filepath.Join(hookDir, h.Name)
				fi, err := os.Stat(path)
				if err != nil || fi.Mode().Perm() != 0o755 {
					t.Fatalf("%s: %v, mode %v; want 0755", path, err, fi.Mode())
				}
				data, _ := os.ReadFile(path)
				if !githooks.IsTetherScript(data) {
					t.Errorf("%s is not recognised as tether's", path)
				}
			}
			installed := snapshot(t, hookDir)

			if out := r.commit(workdir, "second commit"); strings.Contains(out, "warning") {
				t.Errorf("commit warned:\n%s", out)
			}
			calls := r.waitCalls(1)
			args := calls[0].args
			top := r.git(workdir, "rev-parse", "--show-toplevel")
			if args[0] != "--store" || args[1] != "/a store/it's" || args[2] != "checkpoint" ||
				argValue(args, "--trigger") != "git_commit" || argValue(args, "-m") != "second commit" || argValue(args, "--workspace") != top {
				t.Errorf("tether ran with %q", args)
			}
			if marker != "" {
				got, err := os.ReadFile(marker)
				if err != nil || !strings.Contains(string(got), "ran") {
					t.Errorf("the chained hook did not run: %q, %v", got, err)
				}
				if tc.chained && !strings.Contains(string(got), "post-commit") {
					t.Errorf("the chained hook did not run as post-commit: %q", got)
				}
			}

			again, err := githooks.Install(ctx, opts)
			if err != nil || again[0].Action != githooks.Unchanged || again[1].Action != githooks.Unchanged {
				t.Fatalf("re-install = %v, %v; want unchanged", again, err)
			}
			if after := snapshot(t, hookDir); !mapsEqual(after, installed) {
				t.Errorf("re-install changed the hooks directory")
			}
			states, err := githooks.Status(ctx, opts)
			if err != nil || !states[0].Installed || !states[0].Current || states[0].Chained != tc.chained || !states[1].Installed {
				t.Errorf("Status = %+v, %v", states, err)
			}

			removed, err := githooks.Uninstall(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			wantRemoved := githooks.Removed
			if tc.chained {
				wantRemoved = githooks.Restored
			}
			if removed[0].Action != wantRemoved || removed[1].Action != githooks.Removed {
				t.Errorf("Uninstall = %v", removed)
			}
			if after := snapshot(t, hookDir); !mapsEqual(after, before) {
				t.Errorf("uninstall left\n%v\nwant exactly\n%v", after, before)
			}
			again, err = githooks.Uninstall(ctx, opts)
			if err != nil || again[0].Action != githooks.NotInstalled {
				t.Errorf("second uninstall = %v, %v", again, err)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestPrePush(t *testing.T) {
	cases := []struct {
		name    string
		chained string // the pre-push hook there before, if any
		refused bool
	}{
		{name: "no hook before"},
		{name: "chained hook passes", chained: "#!/bin/sh\ncat >\"$FAKE_CALLS/../hook-stdin\"\necho \"$1 $2\" >\"$FAKE_CALLS/../hook-args\"\nexit 0\n"},
		{name: "chained hook refuses the push", chained: "#!/bin/sh\ncat >\"$FAKE_CALLS/../hook-stdin\"\necho \"$1 $2\" >\"$FAKE_CALLS/../hook-args\"\necho refused >&2\nexit 1\n", refused: true},
		{name: "chained hook that reads nothing refuses", chained: "#!/bin/bash\nexit 3\n", refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			remote := filepath.Join(r.root, "remote.git")
			r.git(r.root, "init", "-q", "--bare", remote)
			r.git(r.dir, "remote", "add", "origin", remote)
			if tc.chained != "" {
				r.script("work/.git/hooks/pre-push", tc.chained, 0o755)
			}
			if _, err := githooks.Install(context.Background(), githooks.Options{Dir: r.dir, Tether: r.tether}); err != nil {
				t.Fatal(err)
			}
			head := r.git(r.dir, "rev-parse", "HEAD")
			out, err := r.cmd(r.dir, "push", "origin", "main").CombinedOutput()
			if (err != nil) != tc.refused {
				t.Fatalf("push: %v, want refused %t\n%s", err, tc.refused, out)
			}
			remoteHead, _ := r.cmd(remote, "rev-parse", "--verify", "-q", "refs/heads/main").Output()
			if got := strings.TrimSpace(string(remoteHead)); (got == head) == tc.refused {
				t.Errorf("remote main = %q after the push, local %s, refused %t", got, head, tc.refused)
			}
			calls := r.waitCalls(1)
			wantStdin := "refs/heads/main " + head + " refs/heads/main " + strings.Repeat("0", 40) + "\n"
			if c := calls[0]; argValue(c.args, "--trigger") != "git_push" || c.stdin != wantStdin ||
				argValue(c.args, "-m") != "push to origin ("+remote+"): refs/heads/main" {
				t.Errorf("tether ran with %q, stdin %q; want git_push with %q", c.args, c.stdin, wantStdin)
			}
			if strings.Contains(tc.chained, "hook-stdin") {
				got, _ := os.ReadFile(filepath.Join(r.root, "hook-stdin"))
				args, _ := os.ReadFile(filepath.Join(r.root, "hook-args"))
				if string(got) != wantStdin || string(args) != "origin "+remote+"\n" {
					t.Errorf("the chained hook got stdin %q and args %q; want %q and origin %s", got, args, wantStdin, remote)
				}
			}
		})
	}
}

func TestTetherFailureNeverFailsGit(t *testing.T) {
	cases := []struct {
		name       string
		tether     string // script content; empty: a path that does not exist
		env        []string
		wantStderr string
		maxTime    time.Duration
	}{
		{name: "tether exits 1", tether: "#!/bin/sh\necho 'no hook has workspace here' >&2\nexit 1\n",
			wantStderr: "no hook has workspace here", maxTime: 5 * time.Second},
		{name: "tether is false", tether: "#!/bin/sh\nexec false\n", wantStderr: "tether exited 1", maxTime: 5 * time.Second},
		{name: "tether hangs", tether: "#!/bin/sh\nexec sleep 30\n", env: []string{"TETHER_HOOK_TIMEOUT=3"},
			wantStderr: "goes on in the background", maxTime: 10 * time.Second},
		{name: "tether is gone", wantStderr: "tether not found", maxTime: 5 * time.Second},
		{name: "TETHER_GIT_HOOKS=0 skips it", tether: "#!/bin/sh\nexit 1\n", env: []string{"TETHER_GIT_HOOKS=0"}, maxTime: 5 * time.Second},
		{name: "a Hook named 0 in TETHER_HOOK does not skip it", tether: "#!/bin/sh\nexit 1\n", env: []string{"TETHER_HOOK=0"},
			wantStderr: "tether exited 1", maxTime: 5 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.env = append(r.env, "PATH=/usr/bin:/bin")
			r.env = append(r.env, tc.env...)
			marker := filepath.Join(r.root, "marker")
			r.script("work/.git/hooks/post-commit", markerHook(marker), 0o755)
			remote := filepath.Join(r.root, "remote.git")
			r.git(r.root, "init", "-q", "--bare", remote)
			r.git(r.dir, "remote", "add", "origin", remote)
			bin := filepath.Join(r.root, "missing", "tether")
			if tc.tether != "" {
				bin = r.script("bin/failing-tether", tc.tether, 0o755)
			}
			if _, err := githooks.Install(context.Background(), githooks.Options{Dir: r.dir, Tether: bin}); err != nil {
				t.Fatal(err)
			}
			for _, op := range [][]string{{"commit", "-q", "--allow-empty", "-m", "c"}, {"push", "-q", "origin", "main"}} {
				start := time.Now()
				out, err := r.cmd(r.dir, op...).CombinedOutput()
				if took := time.Since(start); err != nil || took > tc.maxTime {
					t.Fatalf("git %s: %v after %v (at most %v)\n%s", op[0], err, took, tc.maxTime, out)
				}
				if tc.wantStderr != "" && !strings.Contains(string(out), tc.wantStderr) {
					t.Errorf("git %s output lacks %q:\n%s", op[0], tc.wantStderr, out)
				}
				if tc.wantStderr == "" && strings.Contains(string(out), "tether") {
					t.Errorf("git %s mentions tether:\n%s", op[0], out)
				}
			}
			if got, err := os.ReadFile(marker); err != nil || !strings.Contains(string(got), "ran post-commit") {
				t.Errorf("the chained post-commit did not run: %q, %v", got, err)
			}
		})
	}
}

func TestInstallRefusesToLoseAHook(t *testing.T) {
	cases := []struct {
		name  string
		setup func(r *repo)
		want  string
	}{
		{
			name: "a foreign hook and a different chained hook",
			setup: func(r *repo) {
				r.script("work/.git/hooks/post-commit", "#!/bin/sh\necho new\n", 0o755)
				r.script("work/.git/hooks/post-commit.tether-chained", "#!/bin/sh\necho old\n", 0o755)
			},
			want: "will not overwrite",
		},
		{
			name: "a chained hook without tether's script",
			setup: func(r *repo) {
				r.script("work/.git/hooks/post-commit.tether-chained", "#!/bin/sh\necho old\n", 0o755)
			},
			want: "without tether's post-commit",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			tc.setup(r)
			hooks := filepath.Join(r.dir, ".git", "hooks")
			before := snapshot(t, hooks)
			results, err := githooks.Install(context.Background(), githooks.Options{Dir: r.dir, Tether: r.tether})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Install: %v, want an error containing %q", err, tc.want)
			}
			if len(results) != 1 || results[0].Hook != "pre-push" {
				t.Errorf("Install results %v, want pre-push alone", results)
			}
			after := snapshot(t, hooks)
			delete(after, "pre-push")
			if !mapsEqual(after, before) {
				t.Errorf("a refused install changed post-commit's files")
			}
		})
	}
}

// TestInstallDryRun checks that a dry run reports what Install would do,
// and refuses what it would refuse, writing nothing.
func TestInstallDryRun(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(r *repo)
		want    []githooks.Action
		wantErr string
	}{
		{name: "no hooks", want: []githooks.Action{githooks.Installed, githooks.Installed}},
		{name: "a foreign hook", setup: func(r *repo) {
			r.script("work/.git/hooks/post-commit", "#!/bin/sh\necho mine\n", 0o755)
		}, want: []githooks.Action{githooks.InstalledChained, githooks.Installed}},
		{name: "a hook it will not overwrite", setup: func(r *repo) {
			r.script("work/.git/hooks/post-commit", "#!/bin/sh\necho new\n", 0o755)
			r.script("work/.git/hooks/post-commit.tether-chained", "#!/bin/sh\necho old\n", 0o755)
		}, want: []githooks.Action{githooks.Installed}, wantErr: "will not overwrite"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			if tc.setup != nil {
				tc.setup(r)
			}
			before := snapshot(t, filepath.Join(r.dir, ".git"))
			results, err := githooks.Install(context.Background(), githooks.Options{Dir: r.dir, Tether: r.tether, DryRun: true})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Install: %v, want error %q", err, tc.wantErr)
			}
			var got []githooks.Action
			for _, res := range results {
				got = append(got, res.Action)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("actions %v, want %v", got, tc.want)
			}
			if after := snapshot(t, filepath.Join(r.dir, ".git")); !mapsEqual(after, before) {
				t.Errorf("a dry run changed the repository")
			}
		})
	}
}

func TestInstallAfterAHookManagerRewroteTheScript(t *testing.T) {
	r := newRepo(t)
	marker := filepath.Join(r.root, "marker")
	original := r.script("work/.git/hooks/post-commit", markerHook(marker), 0o755)
	before := snapshot(t, filepath.Join(r.dir, ".git", "hooks"))
	opts := githooks.Options{Dir: r.dir, Tether: r.tether}
	ctx := context.Background()
	if _, err := githooks.Install(ctx, opts); err != nil {
		t.Fatal(err)
	}
	// The manager writes its own hook again, as husky does on npm install.
	if err := os.Remove(original); err != nil {
		t.Fatal(err)
	}
	r.script("work/.git/hooks/post-commit", markerHook(marker), 0o755)
	results, err := githooks.Install(ctx, opts)
	if err != nil || results[0].Action != githooks.InstalledChained {
		t.Fatalf("Install = %v, %v; want post-commit chained again", results, err)
	}
	r.commit(r.dir, "after")
	if got, _ := os.ReadFile(marker); !bytes.Contains(got, []byte("ran post-commit")) {
		t.Errorf("the chained hook did not run: %q", got)
	}
	if _, err := githooks.Uninstall(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, filepath.Join(r.dir, ".git", "hooks")); !mapsEqual(after, before) {
		t.Errorf("uninstall did not restore the hooks directory")
	}
}

func TestHooksDirErrors(t *testing.T) {
	root := t.TempDir()
	bare := filepath.Join(root, "bare.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	plain := filepath.Join(root, "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", root)
	cases := []struct {
		name, dir, want string
	}{
		{"not a repository", plain, "not in a git repository"},
		{"bare repository", bare, "bare git repository"},
		{"missing directory", filepath.Join(root, "nope"), "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := githooks.Install(context.Background(), githooks.Options{Dir: tc.dir, Tether: "/bin/true"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Install in %s: %v, want an error containing %q", tc.dir, err, tc.want)
			}
		})
	}
}

func TestResultString(t *testing.T) {
	cases := []struct {
		r    githooks.Result
		want string
	}{
		{githooks.Result{Hook: "post-commit", Path: "p", Action: githooks.InstalledChained}, "installed post-commit (chained existing hook) (p)"},
		{githooks.Result{Hook: "pre-push", Path: "p", Action: githooks.Installed}, "installed pre-push (p)"},
		{githooks.Result{Hook: "pre-push", Path: "p", Action: githooks.Unchanged}, "pre-push unchanged (p)"},
		{githooks.Result{Hook: "post-commit", Path: "p", Action: githooks.Restored}, "removed post-commit (restored the chained hook) (p)"},
	}
	for _, tc := range cases {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.r, got, tc.want)
		}
	}
}

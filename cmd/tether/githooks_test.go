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
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// gitEnv is the environment for the user's own git commands: no
// TETHER_STORE, so the hooks find the store through the --store recorded at
// install, and git's configuration isolated from the machine's.
func (e *agentEnv) gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TETHER_") {
			env = append(env, kv)
		}
	}
	root := filepath.Dir(e.workspace)
	return append(env, e.procTag, "TETHER_HOME="+e.home, "HOME="+root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(root, "gitconfig"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
}

// userGit runs git as the user would, hooks included, and returns its output.
func (e *agentEnv) userGit(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.workspace
	cmd.Env = e.gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// huskyWorkspace makes e's workspace use husky-style hooks in .husky with an
// existing post-commit that appends to the returned marker file, and a
// local bare remote named origin.
func huskyWorkspace(e *agentEnv) (marker string) {
	e.t.Helper()
	marker = filepath.Join(filepath.Dir(e.workspace), "marker")
	e.write(".husky/post-commit", "#!/bin/sh\necho \"old hook ran: $(git log -1 --format=%s)\" >>"+marker+"\n")
	if err := os.Chmod(filepath.Join(e.workspace, ".husky", "post-commit"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.git("config", "core.hooksPath", ".husky")
	remote := filepath.Join(filepath.Dir(e.workspace), "remote.git")
	e.git("init", "-q", "--bare", remote)
	e.git("remote", "add", "origin", remote)
	return marker
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		fi, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, d.Name()))
		out[d.Name()] = fi.Mode().String() + "\n" + string(data)
	}
	return out
}

func TestGitHooksInstallChainAndUninstall(t *testing.T) {
	e := newAgentEnv(t)
	marker := huskyWorkspace(e)
	hooksDir := filepath.Join(e.workspace, ".husky")
	before := snapshotDir(t, hooksDir)

	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"install", []string{"hooks", "install", "git", "--workspace", e.workspace, "--store", e.store}, 0,
			[]string{"installed post-commit (chained existing hook) (" + filepath.Join(hooksDir, "post-commit") + ")", "installed pre-push ("}},
		{"re-install", []string{"hooks", "install", "git", "--workspace", e.workspace, "--store", e.store}, 0,
			[]string{"post-commit unchanged", "pre-push unchanged"}},
		{"status", []string{"hooks", "status", "git", "--workspace", e.workspace}, 0,
			[]string{"post-commit: installed, chaining post-commit.tether-chained", "pre-push: installed"}},
		{"unknown integration", []string{"hooks", "install", "svn"}, 1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := e.tether(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	script, err := os.ReadFile(filepath.Join(hooksDir, "post-commit"))
	if err != nil || !strings.Contains(string(script), "'--store' '"+e.store+"'") || !strings.Contains(string(script), tetherBin) {
		t.Errorf("the post-commit hook does not record --store and the binary: %v\n%s", err, script)
	}

	e.write("a.txt", "a\n")
	e.userGit("add", "a.txt")
	start := time.Now()
	e.userGit("commit", "-q", "-m", "add a")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the commit took %v", took)
	}
	if got, err := os.ReadFile(marker); err != nil || string(got) != "old hook ran: add a\n" {
		t.Errorf("the husky post-commit did not run once: %q, %v", got, err)
	}
	e.userGit("push", "-q", "origin", "HEAD")

	out := e.ok("hooks", "uninstall", "git", "--workspace", e.workspace)
	if !strings.Contains(out, "removed post-commit (restored the chained hook)") || !strings.Contains(out, "removed pre-push") {
		t.Errorf("uninstall printed:\n%s", out)
	}
	if after := snapshotDir(t, hooksDir); len(after) != len(before) || after["post-commit"] != before["post-commit"] {
		t.Errorf("uninstall left %v, want exactly %v", after, before)
	}
}

// TestGitHooksTakeCheckpoints drives real git commit and git push through
// the installed hooks to Checkpoints. It needs `tether checkpoint`.
func TestGitHooksTakeCheckpoints(t *testing.T) {
	if _, _, code := run(t, "checkpoint", "--help"); code != 0 {
		t.Skip("needs the checkpoint verb")
	}
	e := newAgentEnv(t)
	marker := huskyWorkspace(e)
	e.createHook("gh", 3, 0, v1.Step{Name: "only"})
	e.ok("hooks", "install", "git", "--workspace", e.workspace, "--store", e.store)

	e.write("a.txt", "a\n")
	e.userGit("add", "a.txt")
	if out := e.userGit("commit", "-q", "-m", "add a"); strings.Contains(out, "warning") {
		t.Errorf("the commit warned:\n%s", out)
	}
	commit := e.waitCheckpoint("gh", v1.TriggerGitCommit)
	if commit.Spec.Description != "add a" {
		t.Errorf("git_commit checkpoint description %q, want the commit subject", commit.Spec.Description)
	}
	if got, _ := os.ReadFile(marker); !strings.Contains(string(got), "old hook ran: add a") {
		t.Errorf("the chained post-commit did not run: %q", got)
	}

	if out := e.userGit("push", "-q", "origin", "HEAD"); strings.Contains(out, "warning") {
		t.Errorf("the push warned:\n%s", out)
	}
	push := e.waitCheckpoint("gh", v1.TriggerGitPush)
	if !strings.Contains(push.Spec.Description, "push to origin") {
		t.Errorf("git_push checkpoint description %q, want the remote", push.Spec.Description)
	}
}

// waitCheckpoint waits for a Checkpoint of hook with trigger; the hooks take
// them in the background.
func (e *agentEnv) waitCheckpoint(hook string, trigger v1.CheckpointTrigger) *v1.Checkpoint {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list := &v1.CheckpointList{}
		if err := e.client.List(context.Background(), list, client.InNamespace("default")); err != nil {
			e.t.Fatal(err)
		}
		for i := range list.Items {
			if cp := &list.Items[i]; cp.Spec.HookName == hook && cp.Spec.Trigger == trigger {
				return cp
			}
		}
		if time.Now().After(deadline) {
			logs, _ := filepath.Glob(filepath.Join(e.workspace, ".git", "tether-*.log"))
			var text []string
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				text = append(text, l+": "+string(data))
			}
			e.t.Fatalf("no %s Checkpoint of %s within 30s; hook logs:\n%s", trigger, hook, strings.Join(text, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestQuickCommitsEachGetTheirCheckpoint: five commits in quick
// succession (TETHER_HOOK_WAIT=0: no hook waits for its checkpoint, as
// when a checkpoint is slower than the wait), give five
// git_commit checkpoints, each of its own commit: HEAD, subject and a
// snapshot of that commit's tree, whatever HEAD is when it runs.
func TestQuickCommitsEachGetTheirCheckpoint(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("quick", 3, 0, v1.Step{Name: "only"})
	e.ok("hooks", "install", "git", "--workspace", e.workspace, "--store", e.store)
	// One shell command, as an agent's tool call makes them.
	script := `for i in 1 2 3 4 5; do echo $i > f$i.txt && git add -A && git commit -q -m "commit $i" || exit 1; done`
	commits := exec.Command("sh", "-c", script)
	commits.Dir, commits.Env = e.workspace, append(e.gitEnv(), "TETHER_HOOK_WAIT=0")
	if out, err := commits.CombinedOutput(); err != nil {
		t.Fatalf("five commits: %v\n%s", err, out)
	}
	want := map[string]string{} // commit -> subject
	for _, line := range strings.Split(strings.TrimSpace(e.userGit("log", "-5", "--format=%H %s")), "\n") {
		id, subject, _ := strings.Cut(line, " ")
		want[id] = subject
	}
	deadline := time.Now().Add(30 * time.Second)
	var got []v1.Checkpoint
	for time.Now().Before(deadline) {
		got = e.checkpointsBy("quick", v1.TriggerGitCommit)
		if len(got) >= 5 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	seen := map[string]bool{}
	for _, cp := range got {
		c := cp.Spec.Git.Commit
		if subject, ok := want[c]; !ok || cp.Spec.Description != subject {
			t.Errorf("checkpoint %s: commit %s %q, want one of the five with its own subject", cp.Name, c, cp.Spec.Description)
		}
		if tree := strings.TrimSpace(e.userGit("rev-parse", c+"^{tree}")); cp.Spec.Git.SnapshotTree != tree {
			t.Errorf("checkpoint %s of %s holds tree %s, want the commit's %s", cp.Name, c, cp.Spec.Git.SnapshotTree, tree)
		}
		seen[c] = true
	}
	if len(got) != 5 || len(seen) != 5 {
		t.Errorf("%d git_commit checkpoints of %d distinct commits, want 5 of 5", len(got), len(seen))
	}
	for _, bad := range []string{"no-such-commit", "--all", ""} {
		if _, stderr, code := e.tether("checkpoint", "quick", "--commit", bad); code != 1 || !strings.Contains(stderr, "commit") {
			t.Errorf("checkpoint --commit %q: exit %d, %q", bad, code, stderr)
		}
	}
}

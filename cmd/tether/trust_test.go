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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hookManifest is a Hook with one step that validates with `true`.
func hookManifest(name, workspace string) string {
	return fmt.Sprintf(`apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: %s
  namespace: default
spec:
  goal: trust nothing on disk
  workspace: %s
  steps:
  - name: one
    validate:
    - command: ["true"]
`, name, workspace)
}

// applyHook applies hookManifest(name) with tether and returns its exit
// code and stderr.
func (e *agentEnv) applyHook(name string) (int, string) {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(hookManifest(name, e.workspace)), 0o600); err != nil {
		e.t.Fatal(err)
	}
	_, stderr, code := e.tether("apply", "-f", path)
	return code, stderr
}

// tetherWithin runs tether, killing it after timeout: a read that blocks
// (on a FIFO, say) fails the test instead of hanging it.
func (e *agentEnv) tetherWithin(timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tetherBin, args...)
	cmd.Dir = e.workspace
	cmd.Env = e.command().Env
	stdout, stderr, code = runCommand(e.t, cmd)
	if ctx.Err() != nil {
		e.t.Fatalf("tether %s did not finish within %s", strings.Join(args, " "), timeout)
	}
	return stdout, stderr, code
}

// TestPoisonPillsUnderTetherRun puts, under a running `tether run`, one
// entry the store cannot read into it at a time, and checks that the Hook
// already there stays listed, that a Hook applied afterwards is still
// initialized at once, that the entry is reported with its path (the run
// log and `tether doctor`, which exits non-zero), and that `get hooks`
// lists the rest without hanging.
func TestPoisonPillsUnderTetherRun(t *testing.T) {
	hookFile := func(e *agentEnv, name string) string {
		return filepath.Join(e.store, "hooks", "default", name+".yaml")
	}
	pills := []struct {
		name string
		// root names what the pill needs root for; it is skipped without.
		root string
		// place puts the pill into the store and returns its path.
		place func(t *testing.T, e *agentEnv) string
	}{
		{name: "a new file with a duration the schema refuses", place: func(t *testing.T, e *agentEnv) string {
			path := hookFile(e, "bad-duration")
			content := strings.Replace(hookManifest("bad-duration", e.workspace), "spec:\n", "spec:\n  staleAfter: 2562048h\n", 1)
			must(t, os.WriteFile(path, []byte(content), 0o600))
			return path
		}},
		{name: "a hand edit with a duration Go cannot decode", place: func(t *testing.T, e *agentEnv) string {
			path := hookFile(e, "steady")
			data, err := os.ReadFile(path)
			must(t, err)
			edited := strings.Replace(string(data), "spec:\n", "spec:\n  staleAfter: 99999999999999999999h\n", 1)
			if edited == string(data) {
				t.Fatalf("no spec in %s", data)
			}
			must(t, os.WriteFile(path, []byte(edited), 0o600))
			return path
		}},
		{name: "a symlink", place: func(t *testing.T, e *agentEnv) string {
			target := filepath.Join(t.TempDir(), "outside.yaml")
			must(t, os.WriteFile(target, []byte(hookManifest("link", e.workspace)), 0o600))
			path := hookFile(e, "link")
			must(t, os.Symlink(target, path))
			return path
		}},
		{name: "a FIFO", place: func(t *testing.T, e *agentEnv) string {
			path := hookFile(e, "fifo")
			must(t, unix.Mkfifo(path, 0o600))
			return path
		}},
		{name: "a socket", place: func(t *testing.T, e *agentEnv) string {
			path := hookFile(e, "sock")
			l, err := net.Listen("unix", path)
			must(t, err)
			t.Cleanup(func() { _ = l.Close() })
			return path
		}},
		{name: "a device", root: "creating a device node needs CAP_MKNOD", place: func(t *testing.T, e *agentEnv) string {
			path := hookFile(e, "device")
			must(t, unix.Mknod(path, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
			return path
		}},
		{name: "a corrupt line in the middle of the journal", place: func(t *testing.T, e *agentEnv) string {
			path := filepath.Join(e.store, "journal")
			data, err := os.ReadFile(path)
			must(t, err)
			lines := bytes.SplitAfter(data, []byte("\n"))
			mid := len(lines) / 2
			var out []byte
			for i, l := range lines {
				if i == mid {
					out = append(out, []byte("{\"rv\":7,\"type\":\"MODI\x00garbage\n")...)
				}
				out = append(out, l...)
			}
			// In place, as a disk error would leave it: the same inode.
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteAt(out, 0)
			must(t, err)
			must(t, f.Close())
			return path
		}},
	}
	for _, p := range pills {
		t.Run(p.name, func(t *testing.T) {
			if p.root != "" && os.Geteuid() != 0 {
				t.Skip(p.root + ", and this test does not run as root")
			}
			e := newAgentEnv(t)
			logs := e.startRun()
			if code, stderr := e.applyHook("steady"); code != 0 {
				t.Fatalf("apply steady: exit %d: %s", code, stderr)
			}
			e.waitGet("steady", 30*time.Second, "{.status.state}", "step_pending")
			if code, stderr := e.applyHook("second"); code != 0 {
				t.Fatalf("apply second: exit %d: %s", code, stderr)
			}
			e.waitGet("second", 30*time.Second, "{.status.state}", "step_pending")

			path := p.place(t, e)
			// Give tether run's watch the time to meet the pill.
			time.Sleep(300 * time.Millisecond)

			start := time.Now()
			if code, stderr := e.applyHook("fresh"); code != 0 {
				t.Fatalf("apply after the pill: exit %d: %s", code, stderr)
			}
			e.waitGet("fresh", 10*time.Second, "{.status.state}", "step_pending")
			took := time.Since(start)
			t.Logf("a Hook applied after the pill was initialized in %s", took.Round(time.Millisecond))
			// The issue asks for 1 s; a loaded machine running -race gets more.
			if took > 5*time.Second {
				t.Fatalf("a Hook applied after the pill took %s to be initialized", took)
			}

			stdout, stderr, code := e.tetherWithin(20*time.Second, "get", "hooks")
			if code != 0 || !strings.Contains(stdout, "second") || !strings.Contains(stdout, "fresh") || !strings.Contains(stdout, "steady") {
				t.Fatalf("get hooks: exit %d\n%s%s\nwant the other Hooks listed", code, stdout, stderr)
			}

			stdout, stderr, code = e.tetherWithin(20*time.Second, "doctor")
			if code == 0 || !strings.Contains(stdout+stderr, path) {
				t.Fatalf("doctor: exit %d\n%s%s\nwant a non-zero exit naming %s", code, stdout, stderr, path)
			}
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(logs.String(), path) {
				if time.Now().After(deadline) {
					t.Fatalf("tether run never reported %s", path)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// treeBytes returns every file's bytes below root (root itself when it is
// a file), by path, following no link.
func treeBytes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = string(data)
		}
		return nil
	}))
	return out
}

// TestSymlinkRefusalsThroughTheBinary replaces an entry of a store by a
// symbolic link to a copy outside it and runs the writing verbs (apply of
// a new and of a changed Hook, heartbeat, delete): none may write a byte
// outside, and those that would go through the link must fail.
func TestSymlinkRefusalsThroughTheBinary(t *testing.T) {
	tests := []struct {
		name, link string
		// createFails: the create of a new Hook must fail (it would go
		// through the link).
		createFails bool
	}{
		{name: "namespace directory", link: "hooks/default", createFails: true},
		{name: "kind directory", link: "hooks", createFails: true},
		{name: "journal", link: "journal", createFails: true},
		{name: "lock file", link: ".lock", createFails: true},
		{name: "object file", link: "hooks/default/existing.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newAgentEnv(t)
			if code, stderr := e.applyHook("existing"); code != 0 {
				t.Fatalf("apply: exit %d: %s", code, stderr)
			}
			e.ok("step", "begin", "existing")
			outside := filepath.Join(t.TempDir(), "outside")
			must(t, os.Rename(filepath.Join(e.store, tt.link), outside))
			must(t, os.Symlink(outside, filepath.Join(e.store, tt.link)))
			before := treeBytes(t, outside)

			changed := filepath.Join(t.TempDir(), "changed.yaml")
			must(t, os.WriteFile(changed, []byte(strings.Replace(hookManifest("existing", e.workspace), "trust nothing on disk", "through the link", 1)), 0o600))
			codes := map[string]int{}
			for _, args := range [][]string{
				{"apply", "-f", changed},
				{"heartbeat", "existing"},
				{"delete", "hook", "existing"},
			} {
				_, _, codes[args[0]] = e.tetherWithin(30*time.Second, args...)
			}
			code, stderr := e.applyHook("new")
			if tt.createFails && code == 0 {
				t.Errorf("apply of a new Hook through a symlinked %s succeeded", tt.name)
			}
			if tt.createFails && code != 0 && !strings.Contains(stderr, "symbolic link") {
				t.Errorf("apply through a symlinked %s: %s, want the link named", tt.name, stderr)
			}
			t.Logf("exit codes: %v, create %d", codes, code)
			if after := treeBytes(t, outside); !mapsEqual(before, after) {
				t.Fatalf("a verb wrote outside the store through the symlinked %s:\nbefore %q\nafter  %q", tt.name, before, after)
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

// TestFullDiskThroughTheVerbs runs apply, edit, claim, heartbeat, step
// done and abandon on a store on a full tmpfs: each must exit non-zero,
// and once space is freed and the store opened again by a writer, its
// failed write must not be visible; run again with space, each is
// acknowledged and all of them are visible at the end. Mounting needs
// root; without it the fault-injecting filestore tests
// (TestFailedWriteNeverTakesEffect, TestFailedRollbackNeverTakesEffect,
// TestFailedWritesInAGroup, which `make torture-disk` runs) cover the
// same store writes.
func TestFullDiskThroughTheVerbs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; `make torture-disk` runs the fault-injecting filestore tests that stand in for this one")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s); `make torture-disk` runs the fault-injecting filestore tests that stand in for this one", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	e := newAgentEnv(t)
	e.store = filepath.Join(mnt, "store")
	ballast := filepath.Join(mnt, "ballast")
	fill := func() {
		f, err := os.OpenFile(ballast, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		must(t, err)
		chunk := make([]byte, 4096)
		for {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
		_ = f.Close()
	}
	// state is what a reader sees of Hook h: its resourceVersion, goal,
	// state and assignee, "" when there is none.
	state := func() string {
		out, _, code := e.tetherWithin(30*time.Second, "get", "hook", "h", "-o", "json")
		if code != 0 {
			return ""
		}
		var h struct {
			Metadata struct{ ResourceVersion string }
			Spec     struct{ Goal string }
			Status   struct{ State, Assignee string }
		}
		must(t, json.Unmarshal([]byte(out), &h))
		return fmt.Sprintf("rv %s goal %q state %q assignee %q", h.Metadata.ResourceVersion, h.Spec.Goal, h.Status.State, h.Status.Assignee)
	}
	editor := filepath.Join(t.TempDir(), "editor.sh")
	must(t, os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/^  goal: .*/  goal: edited/' \"$1\"\n"), 0o700))
	manifest := filepath.Join(t.TempDir(), "h.yaml")
	// Two steps, so that the Hook is not terminal after step done.
	must(t, os.WriteFile(manifest, []byte(hookManifest("h", e.workspace)+"  - name: two\n"), 0o600))
	other := filepath.Join(t.TempDir(), "other.yaml")
	must(t, os.WriteFile(other, []byte(hookManifest("other", e.workspace)), 0o600))
	touches := 0
	// touch writes through a new process, whose write lock rolls forward.
	touch := func() {
		touches++
		must(t, os.WriteFile(other, []byte(strings.Replace(hookManifest("other", e.workspace), "trust nothing on disk", fmt.Sprintf("touch %d", touches), 1)), 0o600))
		e.ok("apply", "-f", other)
	}
	// The first apply creates the store, which needs space.
	touch()
	worker := filepath.Join(t.TempDir(), "w.yaml")
	must(t, os.WriteFile(worker, []byte("apiVersion: agents.tether.dev/v1alpha1\nkind: Worker\nmetadata:\n  name: w\n  namespace: default\nspec:\n  command: [\"sleep\", \"3600\"]\n  workdir: "+e.workspace+"\n"), 0o600))
	e.ok("apply", "-f", worker)

	verbs := []struct {
		name string
		args []string
		env  []string
	}{
		{name: "apply", args: []string{"apply", "-f", manifest}},
		{name: "edit", args: []string{"edit", "hook", "h"}, env: []string{"KUBE_EDITOR=", "EDITOR=" + editor}},
		{name: "claim", args: []string{"claim", "h", "--worker", "w"}},
		{name: "step begin", args: []string{"step", "begin", "h"}},
		{name: "heartbeat", args: []string{"heartbeat", "h"}},
		{name: "step done", args: []string{"step", "done", "h"}},
		{name: "abandon", args: []string{"abandon", "h", "--reason", "full disk test"}},
	}
	for _, v := range verbs {
		before := state()
		run := func() (string, int) {
			cmd := e.command(v.args...)
			cmd.Env = append(cmd.Env, v.env...)
			out, stderr, code := runCommand(t, cmd)
			return out + stderr, code
		}
		if v.name != "step begin" {
			fill()
			out, code := run()
			if code == 0 || !strings.Contains(out, "no space left on device") {
				t.Fatalf("%s on a full disk: exit %d:\n%s\nwant a failure for the full disk", v.name, code, out)
			}
			must(t, os.Remove(ballast))
			// A writer opens the store again: its roll-forward must not
			// bring the failed write back.
			touch()
			if got := state(); got != before {
				t.Fatalf("after a failed %s (%s) and a restart: %s, want %s, as before", v.name, strings.TrimSpace(out), got, before)
			}
		}
		if out, code := run(); code != 0 {
			t.Fatalf("%s with space: exit %d:\n%s", v.name, code, out)
		}
		if got := state(); got == before {
			t.Fatalf("%s with space was acknowledged but changed nothing: %s", v.name, got)
		}
	}
	if got := state(); !strings.Contains(got, `goal "edited"`) || !strings.Contains(got, `state "abandoned"`) {
		t.Fatalf("at the end: %s, want every acknowledged write visible", got)
	}
}

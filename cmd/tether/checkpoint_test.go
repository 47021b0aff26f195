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
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

var createdRE = regexp.MustCompile(`(?m)^checkpoint\.agents\.tether\.dev/(\S+) created\nsnapshot ([0-9a-f]{40}) refs/tether/checkpoints/default/\S+$`)

// checkpointed runs a checkpoint verb and returns the Checkpoint it created.
func (e *agentEnv) checkpointed(args ...string) *v1.Checkpoint {
	e.t.Helper()
	out := e.ok(args...)
	m := createdRE.FindStringSubmatch(out)
	if m == nil {
		e.t.Fatalf("tether %s printed %q, want checkpoint.agents.tether.dev/NAME created and the snapshot commit", strings.Join(args, " "), out)
	}
	cp := &v1.Checkpoint{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: m[1]}, cp); err != nil {
		e.t.Fatal(err)
	}
	if cp.Spec.Git.SnapshotCommit != m[2] {
		e.t.Errorf("printed snapshot %s, object has %s", m[2], cp.Spec.Git.SnapshotCommit)
	}
	return cp
}

func (e *agentEnv) gitOut(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.workspace
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// checkpointsBy lists the hook's Checkpoints with the trigger.
func (e *agentEnv) checkpointsBy(hook string, trigger v1.CheckpointTrigger) []v1.Checkpoint {
	e.t.Helper()
	list := &v1.CheckpointList{}
	if err := e.client.List(context.Background(), list, client.InNamespace("default")); err != nil {
		e.t.Fatal(err)
	}
	var cps []v1.Checkpoint
	for _, cp := range list.Items {
		if cp.Spec.HookName == hook && cp.Spec.Trigger == trigger {
			cps = append(cps, cp)
		}
	}
	return cps
}

func TestCheckpointTriggersEndToEnd(t *testing.T) {
	e := newAgentEnv(t)
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cp"},
		Spec: v1.HookSpec{
			Goal: "checkpoint everything", Workspace: e.workspace,
			Steps:              []v1.Step{step("build", 0, "true"), {Name: "ship"}},
			CheckpointInterval: &metav1.Duration{Duration: 2 * time.Second},
		},
	}
	if err := e.client.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	e.startRun()
	e.waitGet("cp", 10*time.Second, "{.status.state}", "step_pending")

	tests := []struct {
		name    string
		args    []string
		trigger v1.CheckpointTrigger
		check   func(t *testing.T, cp *v1.Checkpoint)
	}{
		{"manual", []string{"checkpoint", "cp", "-m", "before the refactor"}, v1.TriggerManual, func(t *testing.T, cp *v1.Checkpoint) {
			if cp.Spec.Description != "before the refactor" || cp.Spec.Seq != 1 || cp.Name != "cp-1" {
				t.Errorf("manual checkpoint %s seq %d description %q", cp.Name, cp.Spec.Seq, cp.Spec.Description)
			}
		}},
		{"pr_created", []string{"checkpoint", "cp", "--trigger", "pr_created", "--pr", "https://example.invalid/org/repo/pull/7"}, v1.TriggerPRCreated, func(t *testing.T, cp *v1.Checkpoint) {
			if cp.Spec.PullRequest != "https://example.invalid/org/repo/pull/7" {
				t.Errorf("pullRequest = %q", cp.Spec.PullRequest)
			}
		}},
		{"pre_compact by workspace", []string{"checkpoint", "--workspace", e.workspace, "--trigger", "pre_compact"}, v1.TriggerPreCompact, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.write(tt.name+".txt", tt.name+"\n")
			cp := e.checkpointed(tt.args...)
			if cp.Spec.Trigger != tt.trigger || cp.Spec.HookName != "cp" {
				t.Errorf("checkpoint %s: trigger %s hook %s, want %s of cp", cp.Name, cp.Spec.Trigger, cp.Spec.HookName, tt.trigger)
			}
			if got := strings.TrimSpace(e.gitOut("rev-parse", cp.Spec.Git.SnapshotRef)); got != cp.Spec.Git.SnapshotCommit {
				t.Errorf("ref %s = %s, want %s", cp.Spec.Git.SnapshotRef, got, cp.Spec.Git.SnapshotCommit)
			}
			if !strings.Contains(e.gitOut("ls-tree", "-r", "--name-only", cp.Spec.Git.SnapshotCommit), tt.name+".txt") {
				t.Errorf("the snapshot lacks the untracked %s.txt", tt.name)
			}
			if tt.check != nil {
				tt.check(t, cp)
			}
		})
	}

	// interval: while the step runs, every 2s, skipped while nothing changes.
	e.ok("step", "begin", "cp")
	e.write("progress.txt", "interval work\n")
	deadline := time.Now().Add(20 * time.Second)
	for len(e.checkpointsBy("cp", v1.TriggerInterval)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if iv := e.checkpointsBy("cp", v1.TriggerInterval); len(iv) == 0 || iv[0].Spec.Step != "build" {
		t.Fatalf("interval checkpoints %+v, want one of step build within 20s", iv)
	}

	// step_complete and validation_pass: step done after the validation passes.
	_, stderr, code := e.tether("step", "done", "cp")
	if code != 0 {
		t.Fatalf("step done: exit %d: %s", code, stderr)
	}
	for _, trig := range []v1.CheckpointTrigger{v1.TriggerValidationPass, v1.TriggerStepComplete} {
		cps := e.checkpointsBy("cp", trig)
		if len(cps) != 1 || cps[0].Spec.Step != "build" {
			t.Errorf("%s checkpoints %+v, want one of step build; step done stderr:\n%s", trig, cps, stderr)
		}
	}
	if hk := e.hook("cp"); hk.Status.LastCheckpoint == nil || hk.Status.LastCheckpoint.Trigger != v1.TriggerStepComplete {
		t.Errorf("lastCheckpoint %+v, want the step_complete one", hk.Status.LastCheckpoint)
	}

	out := e.ok("get", "checkpoints")
	for _, col := range []string{"HOOK", "TRIGGER", "STEP", "SEQ", "SNAPSHOT", "READY", "AGE", "step_complete", "validation_pass", "interval", "pr_created", "pre_compact", "manual"} {
		if !strings.Contains(out, col) {
			t.Errorf("get checkpoints lacks %q:\n%s", col, out)
		}
	}

	// Every checkpoint records a CheckpointTaken Event naming its actor
	// (the agent environment's $TETHER_ACTOR for the verbs).
	wantEvents := []string{
		"manual checkpoint cp-1 by agent-1",
		"pr_created checkpoint cp-2 by agent-1",
		"pre_compact checkpoint cp-3 by agent-1",
		"interval checkpoint cp-4 by tether-checkpoint-controller",
		"validation_pass checkpoint cp-5 by agent-1",
		"step_complete checkpoint cp-6 by agent-1",
	}
	var events string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		events = e.ok("events", "--for", "hook/cp")
		missing := 0
		for _, want := range wantEvents {
			if !strings.Contains(events, want) {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range wantEvents {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %q:\n%s", want, events)
		}
	}
	if n := strings.Count(events, "CheckpointTaken"); n < len(wantEvents) {
		t.Errorf("%d CheckpointTaken Events, want %d:\n%s", n, len(wantEvents), events)
	}

	// diff against the latest checkpoint.
	e.write("README.md", "workspace, edited after the checkpoint\n")
	e.write("later.txt", "later\n")
	stat := e.ok("checkpoint", "diff", "cp")
	if !strings.Contains(stat, "README.md") || !strings.Contains(stat, "later.txt") || !strings.Contains(stat, "2 files changed") {
		t.Errorf("checkpoint diff:\n%s", stat)
	}
	if patch := e.ok("checkpoint", "diff", "cp", "-p"); !strings.Contains(patch, "+workspace, edited after the checkpoint") {
		t.Errorf("checkpoint diff -p:\n%s", patch)
	}

	// Lost work comes back, byte for byte.
	e.write("lost/new.go", "package lost\n")
	lost := e.checkpointed("checkpoint", "cp", "-m", "work in progress")
	e.git("reset", "-q", "--hard")
	e.git("clean", "-q", "-fdx")
	if _, err := os.Stat(filepath.Join(e.workspace, "lost/new.go")); !os.IsNotExist(err) {
		t.Fatalf("the work was not lost: %v", err)
	}
	e.ok("checkpoint", "restore", lost.Name)
	for name, want := range map[string]string{"lost/new.go": "package lost\n", "README.md": "workspace, edited after the checkpoint\n"} {
		if got, err := os.ReadFile(filepath.Join(e.workspace, name)); err != nil || string(got) != want {
			t.Errorf("restored %s = %q (%v), want %q", name, got, err, want)
		}
	}

	// Uncommitted changes block an in-place restore, which says how to proceed.
	_, stderr, code = e.tether("checkpoint", "restore", lost.Name)
	if code != 1 || !strings.Contains(stderr, "--force") || !strings.Contains(stderr, "--to DIR") {
		t.Errorf("restore over uncommitted changes: exit %d, stderr %q", code, stderr)
	}
	to := filepath.Join(t.TempDir(), "rescued")
	e.ok("checkpoint", "restore", lost.Name, "--to", to)
	if got, err := os.ReadFile(filepath.Join(to, "lost/new.go")); err != nil || string(got) != "package lost\n" {
		t.Errorf("--to: lost/new.go = %q, %v", got, err)
	}
	e.ok("checkpoint", "restore", lost.Name, "--branch", "rescued")
	if got := e.gitOut("show", "rescued:lost/new.go"); got != "package lost\n" {
		t.Errorf("--branch: rescued:lost/new.go = %q", got)
	}

	// No hook for a directory elsewhere: a clear error.
	_, stderr, code = e.tether("checkpoint", "--workspace", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "no non-terminal hook") {
		t.Errorf("checkpoint --workspace elsewhere: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = e.tether("checkpoint", "cp", "--trigger", "sometimes")
	if code != 1 || !strings.Contains(stderr, "--trigger") {
		t.Errorf("bad --trigger: exit %d, stderr %q", code, stderr)
	}

	// Deleting the hook deletes its checkpoints and their refs.
	e.ok("delete", "hook", "cp", "--timeout", "30s")
	deadline = time.Now().Add(20 * time.Second)
	for strings.TrimSpace(e.gitOut("for-each-ref", "refs/tether/")) != "" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if refs := e.gitOut("for-each-ref", "refs/tether/"); strings.TrimSpace(refs) != "" {
		t.Errorf("refs left after deleting the hook:\n%s", refs)
	}
}

// TestStepFilesFromBeginToPass is issue 25's item 6: each step records
// the files it changed from its first begin to its pass. A file dirty
// before the task began (the settings file tether init writes) is not the
// first step's; a file the step creates after its begin is; work a step
// leaves uncommitted is not counted again by the next one (whose base is
// the checkpoint the pass took), while work done between that pass and the
// next begin is the next step's. A failed validation and a second begin
// keep the step's base. The files reach describe and the recovery file.
func TestStepFilesFromBeginToPass(t *testing.T) {
	e := newAgentEnv(t)
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "files"},
		Spec: v1.HookSpec{Goal: "two steps", Workspace: e.workspace, Steps: []v1.Step{
			step("one", 0, "true"), step("two", 0, "sh", "-c", "test -f two.txt || exec sleep 60"), step("three", 0, "true")}},
	}
	if err := e.client.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	want := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
	e.write(".claude/settings.json", "{}\n")
	e.ok("step", "begin", "files")
	cs := e.hook("files").Status.CurrentStep
	want("step one at begin", cs.FilesTouched, nil)
	if cs.BaseTree == "" {
		t.Fatal("step begin recorded no base tree")
	}
	e.write("one.txt", "step one\n")
	e.write("README.md", "workspace, edited\n")
	e.ok("step", "done", "files")
	want("step one passed", e.hook("files").Status.Steps[0].FilesTouched, []string{"README.md", "one.txt"})

	e.write("between.txt", "after step one passed\n")
	e.ok("step", "begin", "files")
	cs = e.hook("files").Status.CurrentStep
	want("step two at begin", cs.FilesTouched, []string{"between.txt"})
	base := cs.BaseTree
	// The validation is interrupted (the agent's crash): the Hook recovers,
	// and the begin that resumes it counts from the same base.
	done := e.command("step", "done", "files")
	if err := done.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for e.hook("files").Status.State != v1.HookStepValidating && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if err := done.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = done.Wait()
	if st := e.hook("files").Status.State; st != v1.HookRecovering {
		t.Fatalf("after the interrupted validation the hook is %s, want recovering", st)
	}
	e.write("two.txt", "step two\n")
	e.ok("step", "begin", "files", "--working-on", "resumed")
	cs = e.hook("files").Status.CurrentStep
	want("step two, resumed", cs.FilesTouched, []string{"between.txt", "two.txt"})
	if cs.BaseTree != base {
		t.Fatalf("the resuming begin moved the base from %s to %s", base, cs.BaseTree)
	}
	e.ok("step", "done", "files")
	want("step two passed", e.hook("files").Status.Steps[1].FilesTouched, []string{"between.txt", "two.txt"})

	// Explicit --files are what the agent declares until the pass, where
	// git's answer wins.
	e.ok("step", "begin", "files", "--files", "declared.txt")
	want("step three, --files", e.hook("files").Status.CurrentStep.FilesTouched, []string{"declared.txt"})
	e.write("three.txt", "3\n")
	e.ok("step", "done", "files")
	want("step three passed", e.hook("files").Status.Steps[2].FilesTouched, []string{"three.txt"})

	out := e.ok("describe", "hook", "files")
	for _, line := range []string{"Files Changed By Passed Steps:", "1 one:", "README.md, one.txt", "2 two:", "between.txt, two.txt", "3 three:"} {
		if !strings.Contains(out, line) {
			t.Errorf("describe lacks %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "settings.json") {
		t.Errorf("describe counts the file dirty before the task began:\n%s", out)
	}
	rec := e.ok("recover", "files")
	for _, line := range []string{"- files it changed: `README.md`, `one.txt`\n", "- files it changed: `between.txt`, `two.txt`\n", "- files it changed: `three.txt`\n"} {
		if !strings.Contains(rec, line) {
			t.Errorf("the recovery file lacks %q:\n%s", line, rec)
		}
	}
}

var undoRE = regexp.MustCompile(`(?m)^to undo the restore: (tether checkpoint restore (\S+) --force(?: -- (.+))?)$`)

// TestForcedRestoreCanBeUndone: restore --force in place first takes a
// pre_restore checkpoint of the workspace as it is and prints the command
// that undoes the restore, which brings every overwritten change back;
// with paths, the undo names the same paths. When that checkpoint cannot be
// taken, nothing is restored.
func TestForcedRestoreCanBeUndone(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("cp", 0, 0, step("one", 0, "true"))
	e.write("a.txt", "saved\n")
	e.write("b.txt", "saved b\n")
	saved := e.checkpointed("checkpoint", "cp", "-m", "saved")
	e.write("a.txt", "local work\n")
	e.write("b.txt", "local b\n")

	for _, tc := range []struct {
		name  string
		paths []string
		want  map[string]string // after the restore
	}{
		{"whole", nil, map[string]string{"a.txt": "saved\n", "b.txt": "saved b\n"}},
		{"paths", []string{"a.txt"}, map[string]string{"a.txt": "saved\n", "b.txt": "local b\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"checkpoint", "restore", saved.Name, "--force"}
			if tc.paths != nil {
				args = append(append(args, "--"), tc.paths...)
			}
			out := e.ok(args...)
			m := undoRE.FindStringSubmatch(out)
			if m == nil || !strings.Contains(out, "(pre_restore, snapshot ") {
				t.Fatalf("restore --force printed %q: want the pre_restore checkpoint and the undo command", out)
			}
			if got := strings.Fields(m[3]); !slices.Equal(got, tc.paths) && len(tc.paths) > 0 {
				t.Errorf("undo names paths %q, want %q", got, tc.paths)
			}
			pre := &v1.Checkpoint{}
			if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: m[2]}, pre); err != nil {
				t.Fatal(err)
			}
			if pre.Spec.Trigger != v1.TriggerPreRestore || pre.Spec.HookName != "cp" {
				t.Errorf("the checkpoint before the restore: trigger %s hook %s", pre.Spec.Trigger, pre.Spec.HookName)
			}
			for name, want := range tc.want {
				if got := e.read(name); got != want {
					t.Errorf("after the restore %s = %q, want %q", name, got, want)
				}
			}
			e.ok(strings.Fields(m[1])[1:]...)
			for name, want := range map[string]string{"a.txt": "local work\n", "b.txt": "local b\n"} {
				if got := e.read(name); got != want {
					t.Errorf("after the undo %s = %q, want %q", name, got, want)
				}
			}
		})
	}

	// A pre_restore checkpoint that cannot be taken (its ref cannot be
	// written: a file stands where the Hook's ref directory goes) refuses
	// the restore, which changes nothing.
	e.git("pack-refs", "--all", "--prune")
	refs := filepath.Join(e.workspace, ".git", "refs", "tether", "checkpoints", "default")
	if err := os.RemoveAll(refs); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(refs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(refs, "cp"), []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.tether("checkpoint", "restore", saved.Name, "--force")
	if code == 0 || !strings.Contains(stderr, "pre_restore checkpoint") || !strings.Contains(stderr, "nothing was restored") {
		t.Errorf("restore --force without its checkpoint: exit %d, %q", code, stderr)
	}
	if got := e.read("a.txt"); got != "local work\n" {
		t.Errorf("a refused restore changed a.txt to %q", got)
	}
}

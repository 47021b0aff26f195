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
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestRecoverShowsCheckpoints checks that tether recover lists the Hook's
// checkpoints and finds the files changed since the newest one with git.
func TestRecoverShowsCheckpoints(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("cp-hook", 3, 0, v1.Step{Name: "only"})
	headCmd := exec.Command("git", "rev-parse", "HEAD")
	headCmd.Dir = e.workspace
	head, err := headCmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))
	for i, trigger := range []v1.CheckpointTrigger{v1.TriggerManual, v1.TriggerGitCommit} {
		cp := &v1.Checkpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cp-hook-" + string(rune('1'+i))},
			Spec: v1.CheckpointSpec{HookName: "cp-hook", Trigger: trigger, Step: "only", Description: "checkpoint " + string(trigger),
				Git: &v1.GitState{Branch: "main", Commit: commit}},
		}
		if err := e.client.Create(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		change  func()
		want    []string
		notWant []string
	}{
		{
			name:    "nothing changed",
			change:  func() {},
			want:    []string{"## Last checkpoint", "trigger `git_commit`", "No file changed since the last checkpoint.", "## Checkpoint timeline", "`cp-hook-1` (manual)"},
			notWant: []string{"**Warning:**"},
		},
		{
			name: "a changed and a new file",
			change: func() {
				e.write("README.md", "changed\n")
				e.write("new.txt", "new\n")
			},
			want: []string{"**Warning:** these files changed since the last checkpoint", "- `README.md`", "- `new.txt`"},
		},
		{
			name: "the workspace is gone",
			change: func() {
				if err := os.RemoveAll(e.workspace); err != nil {
					t.Fatal(err)
				}
			},
			want:    []string{"## Last checkpoint", "## Checkpoint timeline"},
			notWant: []string{"No file changed", "README.md"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			cmd := e.command("recover", "cp-hook")
			cmd.Dir = os.TempDir()
			out, stderr, code := runCommand(t, cmd)
			if code != 0 {
				t.Fatalf("recover: exit %d: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("recover output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("recover output has %q:\n%s", w, out)
				}
			}
		})
	}
}

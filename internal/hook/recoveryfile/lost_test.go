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

package recoveryfile_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestFindLost checks the choice of checkpoint on real repositories: the
// newest of the step that still holds the lost files, the newer ones
// named as taken after the loss, none when nothing is lost, and never one
// of an earlier step.
func TestFindLost(t *testing.T) {
	cases := []struct {
		name string
		// takes are the checkpoints taken, oldest first: "w" holds the
		// work, "x" is taken after the wipe; steps are their steps.
		takes     []string
		steps     []string
		wantCP    string
		wantNewer []string
		wantPaths []string
	}{
		{name: "the last checkpoint holds the work", takes: []string{"w"}, steps: []string{"s"}, wantCP: "cp-1", wantPaths: []string{"a.go", "b.txt"}},
		{name: "one checkpoint after the wipe", takes: []string{"w", "x"}, steps: []string{"s", "s"}, wantCP: "cp-1", wantNewer: []string{"cp-2"}, wantPaths: []string{"a.go", "b.txt"}},
		{name: "two after the wipe", takes: []string{"w", "w", "x", "x"}, steps: []string{"s", "s", "s", "s"}, wantCP: "cp-2", wantNewer: []string{"cp-4", "cp-3"}, wantPaths: []string{"a.go", "b.txt"}},
		{name: "the work is of an earlier step", takes: []string{"w", "x"}, steps: []string{"old", "s"}},
		{name: "nothing lost", takes: []string{"x"}, steps: []string{"s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			put(t, dir, "a.go", "package a\n")
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-qm", "base")
			put(t, dir, "a.go", "package a // work\n")
			put(t, dir, "b.txt", "new work\n")
			var cps []recoveryfile.CheckpointSummary
			wiped := false
			for i, take := range tc.takes {
				if take == "x" && !wiped {
					git(t, dir, "checkout", "--", ".")
					git(t, dir, "clean", "-fdq")
					wiped = true
				}
				res, err := snapshot.Capture(ctx, dir, snapshot.Options{Namespace: "default", Hook: "h", Seq: int64(i + 1), IndexDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				name := "cp-" + string(rune('1'+i))
				cps = append([]recoveryfile.CheckpointSummary{{Name: name, Step: tc.steps[i], Commit: res.Head, SnapshotCommit: res.Commit,
					Created: metav1.Unix(int64(i), 0)}}, cps...)
			}
			if !wiped {
				git(t, dir, "checkout", "--", ".")
				git(t, dir, "clean", "-fdq")
			}
			hook := &v1.Hook{Spec: v1.HookSpec{Workspace: dir}}
			lost, err := recoveryfile.FindLost(ctx, hook, cps)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantCP == "" {
				if lost != nil {
					t.Fatalf("FindLost = %+v, want none", lost)
				}
				return
			}
			if lost == nil || lost.Checkpoint != tc.wantCP || !reflect.DeepEqual(lost.Newer, tc.wantNewer) || !reflect.DeepEqual(lost.Paths, tc.wantPaths) {
				t.Fatalf("FindLost = %+v, want %s newer %q paths %q", lost, tc.wantCP, tc.wantNewer, tc.wantPaths)
			}
		})
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func put(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

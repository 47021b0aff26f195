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
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestRenderLive checks the recovery file tether recover prints: the
// files changed since the last checkpoint from git, the lost work a
// checkpoint holds, and a warning (the file still rendered) when git
// cannot tell.
func TestRenderLive(t *testing.T) {
	cases := []struct {
		name string
		// checkpoint: "" none, "good" a snapshot of the workspace, "bogus"
		// one whose snapshot commit the repository lacks.
		checkpoint string
		// then is what happens in the workspace after the checkpoint:
		// "new" adds new.go, "wipe" loses the work.
		then       string
		want       []string
		wantWarn   string
		wantLostIn string
	}{
		{name: "no checkpoint", then: "new", want: []string{"# Recovery file: hook task"}},
		{name: "a file since", checkpoint: "good", then: "new",
			want: []string{"these files changed since the last checkpoint", "- `new.go`"}},
		{name: "nothing since", checkpoint: "good", want: []string{"No file changed since the last checkpoint."}},
		{name: "lost work", checkpoint: "good", then: "wipe", wantLostIn: "task-1",
			want: []string{"tether checkpoint restore task-1"}},
		{name: "git cannot tell", checkpoint: "bogus", then: "new",
			want: []string{"## Last checkpoint"}, wantWarn: "finding the files changed since checkpoint task-1: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			put(t, dir, "a.go", "package a\n")
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-qm", "base")
			put(t, dir, "work.go", "package a // work\n")
			hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"},
				Spec: v1.HookSpec{Goal: "g", Workspace: dir, Steps: []v1.Step{{Name: "s"}}}}
			objs := []client.Object{hook}
			if tc.checkpoint != "" {
				res, err := snapshot.Capture(ctx, dir, snapshot.Options{Namespace: "default", Hook: "task", Seq: 1, IndexDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				g := &v1.GitState{Commit: res.Head, SnapshotCommit: res.Commit}
				if tc.checkpoint == "bogus" {
					g.SnapshotCommit = strings.Repeat("0", 40)
				}
				objs = append(objs, &v1.Checkpoint{
					ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task-1"},
					Spec:       v1.CheckpointSpec{HookName: "task", Seq: 1, Step: "s", Trigger: v1.TriggerManual, Git: g},
				})
			}
			switch tc.then {
			case "new":
				put(t, dir, "new.go", "package a\n")
			case "wipe":
				git(t, dir, "clean", "-fdq")
			}
			sch := runtime.NewScheme()
			if err := v1.AddToScheme(sch); err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(sch).WithObjects(objs...).Build()
			var warnings []string
			text, err := recoveryfile.RenderLive(ctx, c, client.ObjectKeyFromObject(hook), nil, func(m string) { warnings = append(warnings, m) })
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(text), w) {
					t.Errorf("the file lacks %q:\n%s", w, text)
				}
			}
			if tc.wantWarn == "" && len(warnings) > 0 || tc.wantWarn != "" && !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, tc.wantWarn) }) {
				t.Errorf("warnings %q, want %q", warnings, tc.wantWarn)
			}
			// LostSince names the checkpoint that holds the work unless it
			// is the one a diff is taken against.
			if lost := recoveryfile.LostSince(ctx, c, hook, "newer"); tc.wantLostIn == "" && lost != nil || tc.wantLostIn != "" && (lost == nil || lost.Checkpoint != tc.wantLostIn) {
				t.Errorf("LostSince = %+v, want in %q", lost, tc.wantLostIn)
			}
			if lost := recoveryfile.LostSince(ctx, c, hook, "task-1"); lost != nil {
				t.Errorf("LostSince(task-1) = %+v, want none: the diff is against it", lost)
			}
		})
	}
}

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

package checkpoint_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
)

// TestPlanDiff checks tether checkpoint diff's use case: which checkpoint
// it compares with (the latest by default, or the one named), its
// refusals, the note of work lost before the latest checkpoint, and the
// summary or patch it writes.
func TestPlanDiff(t *testing.T) {
	// Each case starts from a Hook "task" on a git workspace with two
	// checkpoints: "first" holding a.txt, "second" holding a.txt and b.txt.
	cases := []struct {
		name string
		// after changes the workspace after the second checkpoint.
		after func(t *testing.T, ws string)
		// laterCheckpoint takes a third checkpoint after after.
		laterCheckpoint bool
		hook            string
		req             checkpoint.DiffRequest
		// want is the checkpoint compared with: "first", "second" or
		// "third"; wantErr instead what the refusal says.
		want     string
		wantErr  func(error) bool
		wantOut  []string
		wantLost []string
	}{
		{name: "the latest by default", after: writeFile("c.txt", "c\n"), want: "second", wantOut: []string{"c.txt | 1 +"}},
		{name: "nothing changed writes nothing", want: "second", wantOut: []string{""}},
		{name: "a checkpoint named, as a patch", req: checkpoint.DiffRequest{Checkpoint: "first", Patch: true},
			want: "first", wantOut: []string{"+++ b/b.txt", "+b\n"}},
		{name: "lost work is noted", after: removeFile("b.txt"), laterCheckpoint: true,
			want: "third", wantLost: []string{"b.txt"}},
		{name: "lost work is not noted for a named checkpoint", after: removeFile("b.txt"), laterCheckpoint: true,
			req: checkpoint.DiffRequest{Checkpoint: "third"}, want: "third"},
		{name: "a Hook without a checkpoint", hook: "bare", wantErr: containing(`hook "bare" has no checkpoint yet`)},
		{name: "another Hook's checkpoint", hook: "bare", req: checkpoint.DiffRequest{Checkpoint: "first"},
			wantErr: containing(`belongs to hook "task", not "bare"`)},
		{name: "no such Hook", hook: "missing", wantErr: apierrors.IsNotFound},
		{name: "no such checkpoint", req: checkpoint.DiffRequest{Checkpoint: "missing"}, wantErr: apierrors.IsNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t)
			ws := t.TempDir()
			gitInit(t, ws)
			key := createHook(t, c, "task", ws)
			createHook(t, c, "bare", ws)
			names := map[string]string{}
			take := func(label string) {
				out, err := checkpoint.Take(ctx, c, key, checkpoint.Request{Trigger: v1.TriggerManual})
				if err != nil {
					t.Fatal(err)
				}
				names[label] = out.Checkpoint.Name
			}
			writeFile("a.txt", "a\n")(t, ws)
			take("first")
			writeFile("b.txt", "b\n")(t, ws)
			take("second")
			if tc.after != nil {
				tc.after(t, ws)
			}
			if tc.laterCheckpoint {
				take("third")
			}
			req := tc.req
			if n, ok := names[req.Checkpoint]; ok {
				req.Checkpoint = n
			}
			hook := key
			if tc.hook != "" {
				hook.Name = tc.hook
			}
			plan, err := checkpoint.PlanDiff(ctx, c, hook, req)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("PlanDiff = %v, want a refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.Checkpoint != names[tc.want] || plan.Workspace != ws {
				t.Errorf("compares with %s in %s, want %s in %s", plan.Checkpoint, plan.Workspace, names[tc.want], ws)
			}
			var lost []string
			if plan.Lost != nil {
				lost = plan.Lost.Paths
				if plan.Lost.Checkpoint != names["second"] {
					t.Errorf("the lost work is held by %s, want %s", plan.Lost.Checkpoint, names["second"])
				}
			}
			if !slices.Equal(lost, tc.wantLost) {
				t.Errorf("lost %v, want %v", lost, tc.wantLost)
			}
			var out bytes.Buffer
			if err := plan.Write(ctx, &out); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.wantOut {
				if want == "" && out.Len() != 0 || !strings.Contains(out.String(), want) {
					t.Errorf("the diff:\n%s\nlacks %q", out.String(), want)
				}
			}
		})
	}
}

func writeFile(name, content string) func(*testing.T, string) {
	return func(t *testing.T, ws string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func removeFile(name string) func(*testing.T, string) {
	return func(t *testing.T, ws string) {
		t.Helper()
		if err := os.Remove(filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func containing(s string) func(error) bool {
	return func(err error) bool { return strings.Contains(err.Error(), s) }
}

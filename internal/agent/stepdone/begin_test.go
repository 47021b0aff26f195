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

package stepdone_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/agent/stepdone"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
)

// TestBegin checks what `step begin` records: the files named, else those
// git finds changed in spec.workspace, with a warning and no files when git
// cannot tell.
func TestBegin(t *testing.T) {
	tests := []struct {
		name string
		// workspace is "git", "plain" (not a repository) or "" (none).
		workspace string
		files     []string
		// checkpoint takes a checkpoint before new.go is written: the
		// step's base is its tree.
		checkpoint bool
		wantFiles  []string
		wantBase   bool
		wantOut    string
	}{
		{name: "first begin", workspace: "git", wantBase: true},
		{name: "detected", workspace: "git", checkpoint: true, wantFiles: []string{"new.go"}, wantBase: true},
		{name: "named", workspace: "git", files: []string{"a.go", "b.go"}, wantFiles: []string{"a.go", "b.go"}, wantBase: true},
		{name: "named none", workspace: "git", files: []string{}, wantBase: true},
		{name: "no workspace", files: []string{"a.go"}, wantFiles: []string{"a.go"}},
		{name: "not a repository", workspace: "plain", wantOut: "warning: detecting the files touched: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newStore(t)
			hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"}}
			hook.Spec.Goal = "step begin"
			hook.Spec.Steps = []v1.Step{{Name: "build"}}
			if tt.workspace != "" {
				hook.Spec.Workspace = t.TempDir()
				if tt.workspace == "git" {
					gitInit(t, hook.Spec.Workspace)
				}
			}
			if err := c.Create(ctx, hook); err != nil {
				t.Fatal(err)
			}
			out := &syncBuffer{}
			opts := stepdone.BeginOptions{Client: c, Key: client.ObjectKeyFromObject(hook),
				Write: hookwrite.Options{Actor: "agent-7"}, WorkingOn: "the parser", Files: tt.files, Out: out}
			if tt.checkpoint {
				if _, err := checkpoint.Take(ctx, c, opts.Key, checkpoint.Request{Trigger: v1.TriggerManual}); err != nil {
					t.Fatal(err)
				}
			}
			if hook.Spec.Workspace != "" {
				if err := os.WriteFile(filepath.Join(hook.Spec.Workspace, "new.go"), []byte("package x\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := stepdone.Begin(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			cs := got.Status.CurrentStep
			if got.Status.State != v1.HookStepRunning || cs == nil || cs.WorkingOn != "the parser" {
				t.Fatalf("state %s, current step %+v", got.Status.State, cs)
			}
			if !slices.Equal(cs.FilesTouched, tt.wantFiles) {
				t.Errorf("files touched %q, want %q", cs.FilesTouched, tt.wantFiles)
			}
			if (cs.BaseTree != "") != tt.wantBase {
				t.Errorf("base tree %q; want one: %v", cs.BaseTree, tt.wantBase)
			}
			if !strings.Contains(out.String(), tt.wantOut) || tt.wantOut == "" && out.String() != "" {
				t.Errorf("output %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}

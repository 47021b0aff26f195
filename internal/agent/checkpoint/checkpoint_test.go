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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

func newClient(t testing.TB) client.Client {
	t.Helper()
	return testsupport.Store(t, "").Client()
}

func gitInit(t testing.TB, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func createHook(t testing.TB, c client.Client, name, workspace string) client.ObjectKey {
	t.Helper()
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.HookSpec{Goal: "g", Workspace: workspace, Steps: []v1.Step{{Name: "build"}}},
	}
	if err := c.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(h)
}

func TestTakeConcurrentlyAllocatesDistinctSequences(t *testing.T) {
	c := newClient(t)
	ws := t.TempDir()
	gitInit(t, ws)
	key := createHook(t, c, "busy", ws)
	const n = 6
	var wg sync.WaitGroup
	seqs := make([]int64, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := checkpoint.Take(context.Background(), c, key, checkpoint.Request{Trigger: v1.TriggerManual, Description: fmt.Sprint(i)})
			errs[i] = err
			if err == nil {
				seqs[i] = out.Checkpoint.Spec.Seq
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
	}
	slices.Sort(seqs)
	if want := []int64{1, 2, 3, 4, 5, 6}; !slices.Equal(seqs, want) {
		t.Errorf("sequences %v, want %v", seqs, want)
	}
	h := &v1.Hook{}
	if err := c.Get(context.Background(), key, h); err != nil {
		t.Fatal(err)
	}
	if h.Status.CheckpointSeq != n || h.Status.LastCheckpoint == nil || h.Status.LastCheckpoint.Seq != n {
		t.Errorf("checkpointSeq %d lastCheckpoint %+v, want %d", h.Status.CheckpointSeq, h.Status.LastCheckpoint, n)
	}
	refs, err := snapshot.List(context.Background(), ws, "default", "busy")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != n {
		t.Errorf("%d refs, want %d", len(refs), n)
	}
}

func TestTake(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, c client.Client, ws string)
		req     checkpoint.Request
		wantErr error
		check   func(t *testing.T, out *checkpoint.Outcome)
	}{
		{
			name: "owned, finalized, labelled, with the step and the files",
			prepare: func(t *testing.T, c client.Client, ws string) {
				if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			req: checkpoint.Request{Trigger: v1.TriggerManual, Description: "first"},
			check: func(t *testing.T, out *checkpoint.Outcome) {
				cp := out.Checkpoint
				ref := cp.OwnerReferences
				if len(ref) != 1 || ref[0].Kind != "Hook" || ref[0].Name != "h" || ref[0].UID == "" || !*ref[0].BlockOwnerDeletion {
					t.Errorf("owner references %+v", ref)
				}
				if !slices.Contains(cp.Finalizers, checkpoint.Finalizer) || cp.Labels[checkpoint.HookLabel] != "h" {
					t.Errorf("finalizers %v labels %v", cp.Finalizers, cp.Labels)
				}
				if len(cp.Spec.Files) != 1 || cp.Spec.Files[0].Path != "a.txt" || cp.Spec.Files[0].Size != 1 || cp.Spec.Files[0].Hash == "" {
					t.Errorf("files %+v", cp.Spec.Files)
				}
				if g := cp.Spec.Git; g == nil || !g.Dirty || g.Branch == "" || len(g.SnapshotShort) != 12 || g.SnapshotTree == "" {
					t.Errorf("git %+v", g)
				}
			},
		},
		{
			name: "unchanged is skipped when asked",
			prepare: func(t *testing.T, c client.Client, ws string) {
				if _, err := checkpoint.Take(context.Background(), c, client.ObjectKey{Namespace: "default", Name: "h"}, checkpoint.Request{Trigger: v1.TriggerManual}); err != nil {
					t.Fatal(err)
				}
			},
			req: checkpoint.Request{Trigger: v1.TriggerInterval, SkipUnchanged: true},
			check: func(t *testing.T, out *checkpoint.Outcome) {
				if !out.Skipped || out.Checkpoint != nil {
					t.Errorf("outcome %+v, want skipped", out)
				}
			},
		},
		{
			name: "not a repository",
			prepare: func(t *testing.T, c client.Client, ws string) {
				if err := os.RemoveAll(filepath.Join(ws, ".git")); err != nil {
					t.Fatal(err)
				}
			},
			req:     checkpoint.Request{Trigger: v1.TriggerManual},
			wantErr: snapshot.ErrNotRepository,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t)
			ws := t.TempDir()
			gitInit(t, ws)
			key := createHook(t, c, "h", ws)
			tt.prepare(t, c, ws)
			out, err := checkpoint.Take(context.Background(), c, key, tt.req)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Take = %v, want %v", err, tt.wantErr)
				}
				list := &v1.CheckpointList{}
				if err := c.List(context.Background(), list); err != nil || len(list.Items) != 0 {
					t.Errorf("a failed take left %d checkpoints (%v)", len(list.Items), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, out)
		})
	}
}

// TestTakeWithoutWorkspace checks a Hook without spec.workspace: refused
// unless the request snapshots the working directory (OrWorkingDir), as
// tether checkpoint and step done do.
func TestTakeWithoutWorkspace(t *testing.T) {
	for _, tt := range []struct {
		name         string
		orWorkingDir bool
		wantErr      error
	}{
		{name: "refused", wantErr: snapshot.ErrNoWorkspace},
		{name: "the working directory", orWorkingDir: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t)
			wd := t.TempDir()
			gitInit(t, wd)
			t.Chdir(wd)
			key := createHook(t, c, "h", "")
			out, err := checkpoint.Take(context.Background(), c, key, checkpoint.Request{Trigger: v1.TriggerManual, OrWorkingDir: tt.orWorkingDir})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Take = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Checkpoint.Spec.Workspace != wd {
				t.Errorf("workspace %q, want the working directory %q", out.Checkpoint.Spec.Workspace, wd)
			}
		})
	}
}

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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestRestore checks tether checkpoint restore: in place, a forced
// restore first takes a pre_restore checkpoint of the local changes it
// overwrites, and refuses, restoring nothing, when it cannot; --to takes
// none.
func TestRestore(t *testing.T) {
	cases := []struct {
		name string
		opts snapshot.RestoreOptions
		// deleteHook removes the Hook before the restore: no pre_restore
		// checkpoint can be taken.
		deleteHook     bool
		wantPreRestore bool
		wantErr        string
		// wantFile is work.txt's content afterwards.
		wantFile string
	}{
		{name: "in place over local changes", wantErr: "uncommitted", wantFile: "local\n"},
		{name: "forced", opts: snapshot.RestoreOptions{Force: true}, wantPreRestore: true, wantFile: "saved\n"},
		{name: "forced without its Hook", opts: snapshot.RestoreOptions{Force: true}, deleteHook: true,
			wantErr: "which failed (nothing was restored)", wantFile: "local\n"},
		{name: "to a directory", opts: snapshot.RestoreOptions{To: "elsewhere"}, wantFile: "local\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t)
			ws := t.TempDir()
			gitInit(t, ws)
			key := createHook(t, c, "task", ws)
			work := filepath.Join(ws, "work.txt")
			if err := os.WriteFile(work, []byte("saved\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			taken, err := checkpoint.Take(ctx, c, key, checkpoint.Request{Trigger: v1.TriggerManual})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(work, []byte("local\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.deleteHook {
				h := &v1.Hook{}
				if err := c.Get(ctx, key, h); err != nil {
					t.Fatal(err)
				}
				if err := c.Delete(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			opts := tc.opts
			if opts.To != "" {
				opts.To = filepath.Join(t.TempDir(), opts.To)
			}
			res, err := checkpoint.Restore(ctx, c, client.ObjectKeyFromObject(taken.Checkpoint), checkpoint.RestoreRequest{Options: opts, Actor: "test"})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Restore = %v, want %q", err, tc.wantErr)
			}
			if got, _ := os.ReadFile(work); string(got) != tc.wantFile {
				t.Errorf("work.txt = %q, want %q", got, tc.wantFile)
			}
			if (res != nil && res.PreRestore != nil) != tc.wantPreRestore {
				t.Fatalf("pre_restore checkpoint %+v; want one: %v", res, tc.wantPreRestore)
			}
			if !tc.wantPreRestore {
				return
			}
			pre := res.PreRestore
			if pre.Spec.Trigger != v1.TriggerPreRestore || pre.Spec.Workspace != ws {
				t.Errorf("pre_restore checkpoint: trigger %s, workspace %s", pre.Spec.Trigger, pre.Spec.Workspace)
			}
			// It holds the local changes the restore overwrote.
			dir := t.TempDir()
			if _, err := snapshot.Restore(ctx, ws, pre.Spec.Git.SnapshotCommit, snapshot.RestoreOptions{To: dir, Force: true}); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "work.txt")); string(got) != "local\n" {
				t.Errorf("the pre_restore checkpoint holds %q, want the local changes", got)
			}
		})
	}
}

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

package controllers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestCachedCheckpointsServeTheirReaders runs the reconcilers over the
// Manager's cache, which holds Checkpoints trimmed (storemanager's
// CacheTransform), and checks each reader got what it needs: Ready from
// the ref (workspace, snapshot ref and commit), the recovery file's
// timeline as the whole objects render it (trigger, step, commit,
// description, creation time), the finalizer's ref deletion; and that no
// reconciler's write dropped what the cache trims (labels, files, the
// snapshot's tree and short commit).
func TestCachedCheckpointsServeTheirReaders(t *testing.T) {
	env := newStore(t)
	recoveryDir := env.startManager(t, testConfig(t))
	ctx := context.Background()
	h := checkpointHook(t, env, "cached", nil)
	key := client.ObjectKey{Namespace: "default", Name: "cached"}
	var names []string
	for i, desc := range []string{"first draft", "second draft"} {
		if err := os.WriteFile(filepath.Join(h.Spec.Workspace, "file.txt"), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := checkpoint.Take(ctx, env.c, key, checkpoint.Request{Trigger: v1.TriggerManual, Description: desc, Step: "build"})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, out.Checkpoint.Name)
	}

	stored := func(name string) *v1.Checkpoint {
		t.Helper()
		cp := &v1.Checkpoint{}
		if err := env.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, cp); err != nil {
			t.Fatal(err)
		}
		return cp
	}
	for _, name := range names {
		eventually(t, name+" Ready=True", 20*time.Second, func() bool {
			return meta.IsStatusConditionTrue(stored(name).Status.Conditions, v1.ConditionReady)
		})
		cp := stored(name)
		if cp.Labels[checkpoint.HookLabel] != "cached" || len(cp.Spec.Files) == 0 || cp.Spec.Git.SnapshotTree == "" || cp.Spec.Git.SnapshotShort == "" {
			t.Errorf("%s after the reconciler's writes: labels %v, %d files, snapshotTree %q, snapshotShort %q; want them kept",
				name, cp.Labels, len(cp.Spec.Files), cp.Spec.Git.SnapshotTree, cp.Spec.Git.SnapshotShort)
		}
		if len(cp.ManagedFields) != 0 {
			t.Errorf("%s stored with managedFields %v", name, cp.ManagedFields)
		}
	}

	// The timeline the reconciler renders from the cache is the one the
	// whole objects render.
	hook := &v1.Hook{}
	if err := env.c.Get(ctx, key, hook); err != nil {
		t.Fatal(err)
	}
	cps, err := recoveryfile.ListCheckpoints(ctx, env.c, hook)
	if err != nil {
		t.Fatal(err)
	}
	wantDir := t.TempDir()
	if _, err := recoveryfile.Write(wantDir, hook, recoveryfile.Options{Checkpoints: cps}); err != nil {
		t.Fatal(err)
	}
	want := timelineOf(t, recoveryfile.Path(wantDir, "default", "cached"))
	if !strings.Contains(want, "second draft") || !strings.Contains(want, "first draft") {
		t.Fatalf("the whole objects' timeline lacks the descriptions:\n%s", want)
	}
	var got string
	eventually(t, "the recovery file's timeline", 20*time.Second, func() bool {
		got = timelineOf(t, recoveryfile.Path(recoveryDir, "default", "cached"))
		return got == want
	})

	// The finalizer deletes the ref the cached copy names.
	if err := env.c.Delete(ctx, stored(names[0])); err != nil {
		t.Fatal(err)
	}
	eventually(t, names[0]+" gone with its ref", 20*time.Second, func() bool {
		err := env.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: names[0]}, &v1.Checkpoint{})
		refs, lerr := snapshot.List(ctx, h.Spec.Workspace, "default", "cached")
		return client.IgnoreNotFound(err) == nil && err != nil && lerr == nil && len(refs) == 1
	})
}

// timelineOf returns the checkpoint timeline section of the recovery file
// at path; empty when the file or the section is missing.
func timelineOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	_, rest, ok := strings.Cut(string(data), "## Checkpoint timeline\n")
	if !ok {
		return ""
	}
	// The section's end differs as the section after it (the recent
	// history) is there or not: the Hook's reconcile may not have
	// initialized it when the reference was rendered.
	section, _, _ := strings.Cut(rest, "\n## ")
	return strings.TrimRight(section, "\n")
}

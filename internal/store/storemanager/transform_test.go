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

package storemanager_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/storemanager"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestCacheTransform checks, on both backends, that the Manager's cache
// holds objects without managedFields, and that a reconciler's Update of
// a cached object keeps the stored last-applied annotation and, on the API
// server, the managedFields.
func TestCacheTransform(t *testing.T) {
	cases := []struct {
		name string
		// backend returns a client writing to the backend and a started
		// Manager on it.
		backend func(t *testing.T) (client.Client, manager.Manager)
		// tracksFields is whether the backend records managedFields.
		tracksFields bool
	}{
		{name: "file", backend: func(t *testing.T) (client.Client, manager.Manager) {
			store := testsupport.Store(t, t.TempDir())
			return store.Client(), testsupport.LocalManager(t, store)
		}},
		{name: "kube-apiserver", tracksFields: true, backend: func(t *testing.T) (client.Client, manager.Manager) {
			env := testenv.Start(t)
			mgr, err := manager.New(env.Config, manager.Options{
				Scheme:    env.Client.Scheme(),
				Metrics:   metricsserver.Options{BindAddress: "0"},
				Cache:     cache.Options{DefaultTransform: storemanager.CacheTransform()},
				NewClient: storemanager.NewGuardedClient,
			})
			if err != nil {
				t.Fatal(err)
			}
			return env.Client, mgr
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, mgr := tc.backend(t)
			ctx := context.Background()
			const applied = `{"apiVersion":"agents.tether.dev/v1alpha1","kind":"Hook"}`
			h := &agentsv1alpha1.Hook{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cached", Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: applied}},
				Spec:       agentsv1alpha1.HookSpec{Goal: "g", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
			}
			if err := c.Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			if _, err := mgr.GetCache().GetInformer(ctx, &agentsv1alpha1.Hook{}); err != nil {
				t.Fatal(err)
			}
			testsupport.Start(t, mgr)
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				t.Fatal("cache did not sync")
			}
			key := client.ObjectKeyFromObject(h)
			cached := &agentsv1alpha1.Hook{}
			if err := mgr.GetClient().Get(ctx, key, cached); err != nil {
				t.Fatal(err)
			}
			if cached.ManagedFields != nil {
				t.Errorf("the cache holds managedFields: %v", cached.ManagedFields)
			}
			if got := cached.Annotations[corev1.LastAppliedConfigAnnotation]; got != applied {
				t.Errorf("the cache holds last-applied %q, want %q", got, applied)
			}
			cached.Spec.Goal = "reconciled"
			if err := mgr.GetClient().Update(ctx, cached); err != nil {
				t.Fatal(err)
			}
			stored := &agentsv1alpha1.Hook{}
			if err := mgr.GetAPIReader().Get(ctx, key, stored); err != nil {
				t.Fatal(err)
			}
			if stored.Spec.Goal != "reconciled" {
				t.Fatalf("stored goal %q after the Update", stored.Spec.Goal)
			}
			if got := stored.Annotations[corev1.LastAppliedConfigAnnotation]; got != applied {
				t.Errorf("after an Update of the cached object the stored last-applied is %q, want %q", got, applied)
			}
			if tc.tracksFields && len(stored.ManagedFields) == 0 {
				t.Error("an Update of the cached object dropped the stored managedFields")
			}
		})
	}
}

// TestTrimmedCheckpointsAreNeverWrittenWhole checks, on both backends, that
// the cache holds Checkpoints trimmed and marked, that the Manager's client
// refuses to Update one or its status (which would store it without what
// the cache dropped), and that a patch of what changed keeps the rest.
func TestTrimmedCheckpointsAreNeverWrittenWhole(t *testing.T) {
	cases := []struct {
		name    string
		backend func(t *testing.T) (client.Client, manager.Manager)
	}{
		{name: "file", backend: func(t *testing.T) (client.Client, manager.Manager) {
			store := testsupport.Store(t, t.TempDir())
			return store.Client(), testsupport.LocalManager(t, store)
		}},
		{name: "kube-apiserver", backend: func(t *testing.T) (client.Client, manager.Manager) {
			mgr, env := testsupport.EnvtestManager(t)
			return env.Client, mgr
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, mgr := tc.backend(t)
			ctx := context.Background()
			commit := strings.Repeat("a", 40)
			full := &agentsv1alpha1.Checkpoint{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: "default", Name: "cp-1",
					Labels:      map[string]string{"agents.tether.dev/hook": "task"},
					Annotations: map[string]string{"note": "kept", agentsv1alpha1.CaptureDurationAnnotation: "1.5s"},
				},
				Spec: agentsv1alpha1.CheckpointSpec{
					HookName: "task", Trigger: agentsv1alpha1.TriggerManual, Seq: 1, Description: "d", Step: "s", Workspace: "/w",
					Git: &agentsv1alpha1.GitState{
						Branch: "main", Commit: commit, SnapshotRef: "refs/tether/checkpoints/default/task/1",
						SnapshotCommit: commit, SnapshotShort: commit[:12], SnapshotTree: commit,
					},
					Files:        []agentsv1alpha1.FileSnapshot{{Path: "a.go", Change: agentsv1alpha1.FileAdded}},
					SkippedFiles: []string{"big.bin"},
				},
			}
			if err := c.Create(ctx, full.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			if _, err := mgr.GetCache().GetInformer(ctx, &agentsv1alpha1.Checkpoint{}); err != nil {
				t.Fatal(err)
			}
			testsupport.Start(t, mgr)
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				t.Fatal("cache did not sync")
			}
			key := client.ObjectKeyFromObject(full)
			cached := &agentsv1alpha1.Checkpoint{}
			if err := mgr.GetClient().Get(ctx, key, cached); err != nil {
				t.Fatal(err)
			}
			if !storemanager.IsTrimmed(cached) || cached.Labels != nil || cached.Spec.Files != nil || cached.Spec.SkippedFiles != nil ||
				cached.Spec.Git.SnapshotShort != "" || len(cached.Annotations) != 1 {
				t.Errorf("cached checkpoint not trimmed: %+v", cached)
			}
			if cached.Spec.Description != "d" || cached.Spec.Workspace != "/w" || cached.Spec.Git.SnapshotRef != full.Spec.Git.SnapshotRef ||
				cached.Spec.Git.SnapshotTree != full.Spec.Git.SnapshotTree ||
				cached.Annotations[agentsv1alpha1.CaptureDurationAnnotation] != "1.5s" {
				t.Errorf("cached checkpoint lost what its readers read: %+v", cached)
			}

			edited := cached.DeepCopy()
			edited.Finalizers = []string{"agents.tether.dev/test"}
			if err := mgr.GetClient().Update(ctx, edited); err == nil || !strings.Contains(err.Error(), "trimmed") {
				t.Errorf("Update of the trimmed copy: %v; want refused", err)
			}
			edited.Status.ObservedGeneration = 1
			if err := mgr.GetClient().Status().Update(ctx, edited); err == nil || !strings.Contains(err.Error(), "trimmed") {
				t.Errorf("status Update of the trimmed copy: %v; want refused", err)
			}
			if err := mgr.GetClient().Patch(ctx, edited, client.MergeFromWithOptions(cached, client.MergeFromWithOptimisticLock{})); err != nil {
				t.Fatal(err)
			}
			stored := &agentsv1alpha1.Checkpoint{}
			if err := mgr.GetAPIReader().Get(ctx, key, stored); err != nil {
				t.Fatal(err)
			}
			if len(stored.Finalizers) != 1 || stored.Labels == nil || len(stored.Spec.Files) != 1 || stored.Spec.Git.SnapshotTree == "" ||
				stored.Annotations["note"] != "kept" || storemanager.IsTrimmed(stored) {
				t.Errorf("after the patch the stored checkpoint is %+v; want the finalizer added and the rest kept", stored)
			}
		})
	}
}

// TestCacheTransformChangesNothingTwice applies CacheTransform to each kind
// it changes, twice: the store applies it as it decodes
// (filestore.Transform), and the informer again, so the second time must
// change nothing, and it must change the object in place.
func TestCacheTransformChangesNothingTwice(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Namespace: "default", Name: name, UID: "u-" + types.UID(name),
			Labels:          map[string]string{"agents.tether.dev/hook": "h"},
			Annotations:     map[string]string{agentsv1alpha1.CaptureDurationAnnotation: "12ms", "other": "x"},
			Finalizers:      []string{"agents.tether.dev/snapshot-ref"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "agents.tether.dev/v1alpha1", Kind: "Hook", Name: "h", UID: "u-h"}},
		}
	}
	history := make([]agentsv1alpha1.HistoryEntry, 3, 8)
	for _, tc := range []struct {
		name string
		obj  client.Object
	}{
		{name: "checkpoint", obj: &agentsv1alpha1.Checkpoint{
			ObjectMeta: meta("cp"),
			Spec: agentsv1alpha1.CheckpointSpec{
				HookName: "h", Step: "build",
				Files:        []agentsv1alpha1.FileSnapshot{{Path: "a.go"}},
				SkippedFiles: []string{"big.bin"}, Degraded: []string{"no git"}, FilesTruncated: true,
				Git: &agentsv1alpha1.GitState{Branch: "main", Commit: "c0ffee", SnapshotCommit: "c0ffee", SnapshotShort: "c0ffee"},
			},
			Status: agentsv1alpha1.CheckpointStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "SnapshotRecorded"}}},
		}},
		{name: "hook", obj: &agentsv1alpha1.Hook{
			ObjectMeta: meta("h"),
			Spec:       agentsv1alpha1.HookSpec{Goal: "g", Assignee: "w", Steps: make([]agentsv1alpha1.Step, 2, 4)},
			Status:     agentsv1alpha1.HookStatus{State: "step_pending", History: history},
		}},
		{name: "worker", obj: &agentsv1alpha1.Worker{
			ObjectMeta: meta("w"),
			Spec:       agentsv1alpha1.WorkerSpec{Command: []string{"claude"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transform := storemanager.CacheTransform()
			once, err := transform(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if once != any(tc.obj) {
				t.Fatalf("the transform returned another object (%T), not the one it was given", once)
			}
			want := tc.obj.DeepCopyObject()
			twice, err := transform(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if twice != any(tc.obj) {
				t.Fatalf("the second transform returned another object (%T)", twice)
			}
			if !equality.Semantic.DeepEqual(want, tc.obj) {
				t.Errorf("the second transform changed the object:\nonce  %+v\ntwice %+v", want, tc.obj)
			}
		})
	}
}

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

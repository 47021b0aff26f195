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

package controllers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestIntervalCheckpointWritesOnlyCheckpoints drives the interval
// reconciler and then the Hook reconciler by hand: the interval reconciler
// creates Checkpoints and posts its looks but never writes the Hook (its
// resourceVersion stays), and the Hook reconciler, the one writer of a
// Hook's status, records the Checkpoint and the look.
func TestIntervalCheckpointWritesOnlyCheckpoints(t *testing.T) {
	ctx := context.Background()
	c := testsupport.Store(t, "").Client()
	ws := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	key := client.ObjectKey{Namespace: "default", Name: "task"}
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	h.Spec.Goal, h.Spec.Steps, h.Spec.Workspace = "g", []v1.Step{{Name: "one"}}, ws
	h.Spec.CheckpointInterval = &metav1.Duration{Duration: time.Minute}
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hookwrite.Transition(ctx, c, key, hookwrite.Input(hookfsm.Input{Event: hookfsm.Begin}), hookwrite.Options{Actor: "test-agent"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.HomeEnv, t.TempDir())
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	looks := newIntervalLooks()
	var now time.Time
	ir := &IntervalCheckpointReconciler{Client: c, Events: events.NewFakeRecorder(16), Config: cfg, Now: func() time.Time { return now }, looks: looks}
	hr := &HookReconciler{Client: c, Events: events.NewFakeRecorder(16), Config: cfg, looks: looks}

	// One look after another, an interval apart, in one workspace.
	tests := []struct {
		name string
		// change writes a file before the look.
		change string
		// checkpoints is how many Checkpoints the Hook has after the look.
		checkpoints int
		// looked is whether the look took nothing.
		looked bool
	}{
		{"the first look takes a checkpoint", "", 1, false},
		{"an unchanged workspace gets a look", "", 1, true},
		{"a changed workspace gets a checkpoint", "work.txt", 2, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.change != "" {
				if err := os.WriteFile(filepath.Join(ws, tt.change), []byte("progress\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := &v1.Hook{}
			if err := c.Get(ctx, key, before); err != nil {
				t.Fatal(err)
			}
			now = time.Now().Add(time.Duration(2*(i+1)) * time.Minute)
			if _, err := ir.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			after := &v1.Hook{}
			if err := c.Get(ctx, key, after); err != nil {
				t.Fatal(err)
			}
			if after.ResourceVersion != before.ResourceVersion {
				t.Fatalf("the interval reconciler wrote the hook: resourceVersion %s → %s, status %+v", before.ResourceVersion, after.ResourceVersion, after.Status)
			}
			cps := &v1.CheckpointList{}
			if err := c.List(ctx, cps, client.InNamespace("default")); err != nil {
				t.Fatal(err)
			}
			if len(cps.Items) != tt.checkpoints {
				t.Fatalf("%d checkpoints, want %d", len(cps.Items), tt.checkpoints)
			}
			if look, ok := looks.pending(key); ok != tt.looked || ok && !look.at.Equal(now) {
				t.Fatalf("pending look %+v (%v), want one at %s: %v", look, ok, now, tt.looked)
			}

			if _, err := hr.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			got := &v1.Hook{}
			if err := c.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			newest := cps.Items[0]
			for _, cp := range cps.Items {
				if cp.Spec.Seq > newest.Spec.Seq {
					newest = cp
				}
			}
			if lc := got.Status.LastCheckpoint; lc == nil || lc.Name != newest.Name || lc.Seq != newest.Spec.Seq || lc.Trigger != v1.TriggerInterval ||
				lc.SnapshotCommit != newest.Spec.Git.SnapshotCommit || got.Status.CheckpointSeq != newest.Spec.Seq {
				t.Errorf("hook records last checkpoint %+v, seq %d; want %s (seq %d)", lc, got.Status.CheckpointSeq, newest.Name, newest.Spec.Seq)
			}
			if at := got.Status.IntervalCheckedAt; tt.looked && (at == nil || at.Unix() != now.Unix()) {
				t.Errorf("intervalCheckedAt %v, want %s", at, now)
			}
			if _, ok := looks.pending(key); ok {
				t.Errorf("the look is still pending once stored")
			}
		})
	}
}

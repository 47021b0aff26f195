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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestReadyAgrees holds the probe's verdict to the one a reconcile sets:
// a Checkpoint is queued unless its Ready condition already says what a
// look at its workspace's refs says.
func TestReadyAgrees(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "initial"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "work.txt"), []byte("work"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Capture(ctx, dir, snapshot.Options{Namespace: "default", Hook: "task", Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := snapshot.ReadRefs(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	good := &refLook{refs: refs}
	failed := &refLook{err: errors.New("not a git repository")}
	other := strings.Repeat("e", len(snap.Commit))
	missing := snapshot.RefPrefix + "default/task/2"

	tests := []struct {
		name         string
		ref, commit  string
		cond         *metav1.Condition
		generationAt int64
		look         *refLook
		want         bool
	}{
		{name: "ref holds, Ready=True", ref: snap.Ref, commit: snap.Commit, cond: ready(metav1.ConditionTrue, v1.ReasonSnapshotRecorded), look: good, want: true},
		{name: "ref holds, Ready=False", ref: snap.Ref, commit: snap.Commit, cond: ready(metav1.ConditionFalse, v1.ReasonSnapshotMissing), look: good},
		{name: "ref holds, Ready=Unknown", ref: snap.Ref, commit: snap.Commit, cond: ready(metav1.ConditionUnknown, ReasonWorkspaceUnavailable), look: good},
		{name: "ref holds, no Ready yet", ref: snap.Ref, commit: snap.Commit, look: good},
		{name: "ref holds, Ready of an older generation", ref: snap.Ref, commit: snap.Commit, cond: ready(metav1.ConditionTrue, v1.ReasonSnapshotRecorded), generationAt: 1, look: good},
		{name: "ref moved, Ready=True", ref: snap.Ref, commit: other, cond: ready(metav1.ConditionTrue, v1.ReasonSnapshotRecorded), look: good},
		{name: "ref moved, Ready=False", ref: snap.Ref, commit: other, cond: ready(metav1.ConditionFalse, v1.ReasonSnapshotMissing), look: good, want: true},
		{name: "ref deleted, Ready=True", ref: missing, commit: snap.Commit, cond: ready(metav1.ConditionTrue, v1.ReasonSnapshotRecorded), look: good},
		{name: "ref deleted, Ready=False", ref: missing, commit: snap.Commit, cond: ready(metav1.ConditionFalse, v1.ReasonSnapshotMissing), look: good, want: true},
		{name: "workspace unreadable, Ready=Unknown", ref: snap.Ref, commit: snap.Commit, cond: ready(metav1.ConditionUnknown, ReasonWorkspaceUnavailable), look: failed, want: true},
		{name: "workspace unreadable, Ready=True", ref: snap.Ref, commit: snap.Commit, cond: ready(metav1.ConditionTrue, v1.ReasonSnapshotRecorded), look: failed},
		{name: "a ref no look covers", ref: "refs/heads/main", commit: snap.Commit, cond: ready(metav1.ConditionTrue, v1.ReasonSnapshotRecorded), look: good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := &v1.Checkpoint{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task-1", Generation: 2},
				Spec:       v1.CheckpointSpec{Workspace: dir, Git: &v1.GitState{SnapshotRef: tt.ref, SnapshotCommit: tt.commit}},
			}
			cp.Status.ObservedGeneration = 2
			if tt.generationAt != 0 {
				cp.Status.ObservedGeneration = tt.generationAt
			}
			if tt.cond != nil {
				cp.Status.Conditions = []metav1.Condition{*tt.cond}
			}
			if got := readyAgrees(cp, tt.look); got != tt.want {
				t.Errorf("readyAgrees = %v, want %v", got, tt.want)
			}
		})
	}
}

func ready(status metav1.ConditionStatus, reason string) *metav1.Condition {
	return &metav1.Condition{Type: v1.ConditionReady, Status: status, Reason: reason}
}

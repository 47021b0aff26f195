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

package checkpoint

import (
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// DiffRequest is what PlanDiff compares and how the plan prints it.
type DiffRequest struct {
	// Checkpoint names the checkpoint to compare with; empty is the Hook's
	// latest (status.lastCheckpoint).
	Checkpoint string
	// Patch prints the patch instead of git diff --stat.
	Patch bool
}

// DiffPlan is a diff of a Hook's workspace against one of its
// checkpoints, its inputs resolved: PlanDiff makes one, Write prints it.
type DiffPlan struct {
	// Checkpoint is the checkpoint the workspace is compared with.
	Checkpoint string
	// Workspace is the Hook's spec.workspace, else the working directory.
	Workspace string
	// Lost, set only when the checkpoint is the default one, is the lost
	// work an older checkpoint still holds: the default was taken after
	// it was lost, so that a diff against it does not show it.
	Lost *recoveryfile.LostWork

	commit string
	patch  bool
}

// PlanDiff resolves what tether checkpoint diff compares for the Hook key:
// the checkpoint req names, else the Hook's latest, refusing a checkpoint
// of another Hook or one without a snapshot commit, and the workspace.
func PlanDiff(ctx context.Context, c client.Reader, key client.ObjectKey, req DiffRequest) (*DiffPlan, error) {
	hook, err := readHook(ctx, c, key)
	if err != nil {
		return nil, err
	}
	name := req.Checkpoint
	if name == "" {
		last := hook.Status.LastCheckpoint
		if last == nil {
			return nil, fmt.Errorf("hook %q has no checkpoint yet; take one with tether checkpoint %s", hook.Name, hook.Name)
		}
		name = last.Name
	}
	cp, err := Get(ctx, c, client.ObjectKey{Namespace: key.Namespace, Name: name})
	if err != nil {
		return nil, err
	}
	if cp.Spec.HookName != hook.Name {
		return nil, fmt.Errorf("checkpoint %q belongs to hook %q, not %q", cp.Name, cp.Spec.HookName, hook.Name)
	}
	ws, err := workspaceOf(hook)
	if err != nil {
		return nil, err
	}
	plan := &DiffPlan{Checkpoint: cp.Name, Workspace: ws, commit: cp.Spec.Git.SnapshotCommit, patch: req.Patch}
	if req.Checkpoint == "" {
		plan.Lost = recoveryfile.LostSince(ctx, c, hook, cp.Name)
	}
	return plan, nil
}

// Write writes to out what changed in the workspace since the checkpoint:
// the workspace as it is now, untracked files included and .gitignore
// respected, against the checkpoint's snapshot; git diff --stat, or the
// patch. Nothing is written when nothing changed.
func (p *DiffPlan) Write(ctx context.Context, out io.Writer) error {
	return snapshot.Diff(ctx, p.Workspace, p.commit, out, snapshot.DiffOptions{Patch: p.patch})
}

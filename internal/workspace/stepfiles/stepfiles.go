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

// Package stepfiles finds the files a Hook's step changed: from a base tree
// recorded at the step's first begin to the workspace as it is.
package stepfiles

import (
	"context"
	"errors"
	"slices"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// Max is status.currentStep.filesTouched's MaxItems.
const Max = 256

// Changes is what Begin and Since found.
type Changes struct {
	// Base is the tree the step's changes are counted from.
	Base string
	// Files are the paths that differ from Base, sorted, at most Max.
	Files []string
	// Truncated tells whether more than Max files differ.
	Truncated bool
}

// Begin finds the base of the current step of hook and the files changed
// since: the step's recorded base tree, else the snapshot tree of the
// Hook's last checkpoint (the previous step's pass takes one, so work left
// uncommitted by earlier steps is not counted again), else the workspace as
// it is now (the task's first step: files dirty before it began are not
// its own). A base that git no longer holds (pruned) is passed over. The
// Hook must have a spec.workspace in a git repository.
func Begin(ctx context.Context, hook *v1.Hook) (*Changes, error) {
	ws := hook.Spec.Workspace
	var candidates []string
	if cs := hook.Status.CurrentStep; cs != nil && cs.BaseTree != "" {
		candidates = append(candidates, cs.BaseTree)
	}
	if lc := hook.Status.LastCheckpoint; lc != nil {
		if lc.SnapshotTree != "" {
			candidates = append(candidates, lc.SnapshotTree)
		} else if lc.SnapshotCommit != "" {
			candidates = append(candidates, lc.SnapshotCommit)
		}
	}
	for _, base := range candidates {
		c, err := Since(ctx, ws, base)
		if errors.Is(err, snapshot.ErrCommitMissing) {
			continue
		}
		return c, err
	}
	tree, err := snapshot.WorkspaceTree(ctx, ws)
	if err != nil {
		return nil, err
	}
	return &Changes{Base: tree, Files: []string{}}, nil
}

// Since lists the files of workspace that differ from base, a tree or a
// snapshot commit; base stays as given.
func Since(ctx context.Context, workspace, base string) (*Changes, error) {
	files, more, err := snapshot.Changes(ctx, workspace, base, Max)
	if err != nil {
		return nil, err
	}
	c := &Changes{Base: base, Files: make([]string, 0, len(files)), Truncated: more}
	for _, f := range files {
		c.Files = append(c.Files, f.Path)
	}
	slices.Sort(c.Files)
	return c, nil
}

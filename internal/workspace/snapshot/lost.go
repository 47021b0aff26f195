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

package snapshot

import (
	"context"
)

// Kinds of Change.How.
const (
	// Deleted: the snapshot holds the file; the workspace does not.
	Deleted = "deleted"
	// Reverted: the workspace holds the file as it was in a base commit
	// (the HEAD the snapshot was taken on, or HEAD now), not the
	// snapshot's content.
	Reverted = "reverted"
	// Modified: the workspace's content differs from both the snapshot
	// and the base: further work, not a loss.
	Modified = "modified"
	// Added: the snapshot does not hold the file.
	Added = "added"
	// TypeChanged: a file became a symlink or the reverse, other than back
	// to the base.
	TypeChanged = "type changed"
)

// Change is how one workspace file differs from a snapshot.
type Change struct {
	File
	// How is Deleted, Reverted, Modified, Added or TypeChanged.
	How string
	// Lost tells that the snapshot holds work the workspace no longer
	// has (Deleted or Reverted), which restoring the path brings back
	// without overwriting newer work.
	Lost bool
}

// Classify lists how the files of workspace differ from the snapshot
// commit, as Changes does, and tells which of them are lost: deleted,
// or with content back to what base (the commit the snapshot was taken
// on; may be empty) or HEAD holds. A file modified to content neither
// the snapshot nor a base holds is further work and is not lost. Like
// Changes it writes nothing to the repository.
func Classify(ctx context.Context, workspace, commit, base string) ([]Change, error) {
	files, _, err := Changes(ctx, workspace, commit, 0)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range files {
		if f.Status == "M" || f.Status == "T" {
			paths = append(paths, f.Path)
		}
	}
	baseBlobs := map[string]bool{}
	for _, rev := range []string{base, "HEAD"} {
		if rev == "" || len(paths) == 0 {
			continue
		}
		if _, err := resolveCommit(ctx, r, rev); err != nil {
			continue
		}
		blobs, err := lsTree(ctx, r, rev, paths)
		if err != nil {
			return nil, err
		}
		for path, b := range blobs {
			baseBlobs[path+"\x00"+b.id] = true
		}
	}
	out := make([]Change, 0, len(files))
	for _, f := range files {
		c := Change{File: f}
		switch f.Status {
		case "D":
			c.How, c.Lost = Deleted, true
		case "A":
			c.How = Added
		default:
			switch {
			case f.Hash != "" && baseBlobs[f.Path+"\x00"+f.Hash]:
				c.How, c.Lost = Reverted, true
			case f.Status == "T":
				c.How = TypeChanged
			default:
				c.How = Modified
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// LostPaths is the paths among changes that are lost, in order.
func LostPaths(changes []Change) []string {
	var paths []string
	for _, c := range changes {
		if c.Lost {
			paths = append(paths, c.Path)
		}
	}
	return paths
}

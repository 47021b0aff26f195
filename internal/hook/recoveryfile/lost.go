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

package recoveryfile

import (
	"context"
	"fmt"
	"strings"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// LostWork is work that the workspace lost and a checkpoint still holds.
type LostWork struct {
	// Checkpoint is the newest checkpoint that holds the lost files.
	Checkpoint string
	// Changes are how the workspace differs from it, lost or not.
	Changes []snapshot.Change
	// Paths are the lost paths, sorted.
	Paths []string
	// Newer are the checkpoints newer than Checkpoint, newest first,
	// taken after the files were lost: they do not hold them.
	Newer []string
}

// Action is the one next action for lost work: the restore command, why
// that checkpoint, and how other local changes are kept.
func (l *LostWork) Action() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Work was lost from the workspace.** Checkpoint `%s` holds %d file(s) that are now deleted or reverted:\n\n", l.Checkpoint, len(l.Paths))
	other := 0
	for _, c := range l.Changes {
		if c.Lost {
			fmt.Fprintf(&b, "- %s: %s; the checkpoint can bring it back\n", codePath(c.Path), c.How)
		} else {
			other++
		}
	}
	b.WriteString("\nRestore them first, before anything else:\n\n")
	fmt.Fprintf(&b, "    tether checkpoint restore %s --", l.Checkpoint)
	for _, p := range l.Paths {
		fmt.Fprintf(&b, " %s", shellQuote(p))
	}
	b.WriteString("\n\n")
	if len(l.Newer) > 0 {
		verb := "Checkpoint `%s` is newer but was taken after the files were lost: it does not hold them, so restore from `%s`.\n\n"
		if len(l.Newer) > 1 {
			verb = "Checkpoints `%s` are newer but were taken after the files were lost: they do not hold them, so restore from `%s`.\n\n"
		}
		fmt.Fprintf(&b, verb, strings.Join(l.Newer, "`, `"), l.Checkpoint)
	}
	if other > 0 {
		fmt.Fprintf(&b, "It restores only the lost paths and keeps your %d other local change(s), which are newer work:\n\n", other)
		for _, c := range l.Changes {
			if !c.Lost {
				fmt.Fprintf(&b, "- %s: %s\n", codePath(c.Path), c.How)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "To inspect the checkpoint's files first instead, `tether checkpoint restore %s --to DIR` writes them to DIR and leaves the workspace alone.", l.Checkpoint)
	return b.String()
}

// shellQuote quotes p for a POSIX shell when it needs it.
func shellQuote(p string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+,=@%:", r)
	}
	if p != "" && strings.IndexFunc(p, func(r rune) bool { return !safe(r) }) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// FindLost walks cps newest first, among those of the Hook's current step
// (a step's own checkpoints never go back to an older state on their
// own), and returns the newest whose snapshot holds files that the
// workspace has deleted or reverted to the base (snapshot.Classify): the
// checkpoints before it were taken after the loss. A file modified further
// is newer work and never counted lost. It reads at most TimelineEntries
// checkpoints and returns nil when none holds lost work.
func FindLost(ctx context.Context, hook *v1.Hook, cps []CheckpointSummary) (*LostWork, error) {
	var newer []string
	for i, cp := range cps {
		if i >= TimelineEntries || cp.SnapshotCommit == "" || (i > 0 && cp.Step != cps[0].Step) {
			break
		}
		changes, err := snapshot.Classify(ctx, hook.Spec.Workspace, cp.SnapshotCommit, cp.Commit)
		if err != nil {
			return nil, err
		}
		if paths := snapshot.LostPaths(changes); len(paths) > 0 {
			return &LostWork{Checkpoint: cp.Name, Changes: changes, Paths: paths, Newer: newer}, nil
		}
		newer = append(newer, cp.Name)
	}
	return nil, nil
}

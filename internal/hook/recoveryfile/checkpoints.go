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
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TimelineEntries is how many of the newest checkpoints the file lists.
const TimelineEntries = 10

// CheckpointSummary is what the recovery file shows of one Checkpoint.
type CheckpointSummary struct {
	// Name is the Checkpoint object's name.
	Name string
	// Created is when it was taken.
	Created metav1.Time
	// Trigger is what caused it.
	Trigger v1.CheckpointTrigger
	// Step is the Hook's step when it was taken.
	Step string
	// Description is its free-text note.
	Description string
	// Branch, Commit and Dirty are the workspace's git state then.
	Branch, Commit string
	// Dirty tells whether the working tree differed from HEAD.
	Dirty bool
	// SnapshotCommit is the git commit holding the whole working tree.
	SnapshotCommit string
}

// Summarize turns hook's Checkpoints among cps into summaries, newest
// first; Checkpoints of other Hooks are left out.
func Summarize(hook *v1.Hook, cps []v1.Checkpoint) []CheckpointSummary {
	var out []CheckpointSummary
	for i := range cps {
		cp := &cps[i]
		if cp.Spec.HookName != hook.Name || cp.Namespace != hook.Namespace {
			continue
		}
		s := CheckpointSummary{
			Name: cp.Name, Created: cp.CreationTimestamp, Trigger: cp.Spec.Trigger,
			Step: cp.Spec.Step, Description: cp.Spec.Description,
		}
		if g := cp.Spec.Git; g != nil {
			s.Branch, s.Commit, s.Dirty, s.SnapshotCommit = g.Branch, g.Commit, g.Dirty, g.SnapshotCommit
		}
		out = append(out, s)
	}
	SortNewestFirst(out)
	return out
}

// SortNewestFirst orders summaries newest first, by creation time and then
// by name, so that equal times still give one order.
func SortNewestFirst(s []CheckpointSummary) {
	sort.SliceStable(s, func(i, j int) bool {
		if !s[i].Created.Equal(&s[j].Created) {
			return s[j].Created.Before(&s[i].Created)
		}
		return s[i].Name > s[j].Name
	})
}

// CheckpointHookNameField indexes Checkpoints in a cache by
// spec.hookName: a reconciler that lists one Hook's Checkpoints through the
// index copies those, not every Checkpoint of the namespace (50,000 in a
// fleet of 10,000 Hooks, at each Hook's every reconcile).
const CheckpointHookNameField = "spec.hookName"

// IndexCheckpointHookName is the CheckpointHookNameField index function.
func IndexCheckpointHookName(o client.Object) []string {
	if cp, ok := o.(*v1.Checkpoint); ok && cp.Spec.HookName != "" {
		return []string{cp.Spec.HookName}
	}
	return nil
}

// ListCheckpoints lists hook's Checkpoints through c and summarizes them,
// newest first. It is what `tether recover` and the Hook reconciler pass
// as Options.Checkpoints. From a cache it reads the cache's own objects:
// a summary copies what it keeps.
func ListCheckpoints(ctx context.Context, c client.Reader, hook *v1.Hook) ([]CheckpointSummary, error) {
	own, err := HookCheckpoints(ctx, c, hook, client.UnsafeDisableDeepCopy)
	if err != nil {
		return nil, err
	}
	return Summarize(hook, own), nil
}

// HookCheckpoints lists hook's Checkpoints, in any order, deletions under
// way included. It asks c through the CheckpointHookNameField index first,
// which a cache indexed so answers with the Hook's Checkpoints alone, and
// lists the namespace when c has no such index (a client of the store or
// the API server, which refuse the field). opts go to both lists: with
// client.UnsafeDisableDeepCopy, a cache answers with its own objects,
// which the caller must then only read.
func HookCheckpoints(ctx context.Context, c client.Reader, hook *v1.Hook, opts ...client.ListOption) ([]v1.Checkpoint, error) {
	list := &v1.CheckpointList{}
	indexed := append([]client.ListOption{client.InNamespace(hook.Namespace), client.MatchingFields{CheckpointHookNameField: hook.Name}}, opts...)
	if err := c.List(ctx, list, indexed...); err != nil {
		list = &v1.CheckpointList{}
		if ferr := c.List(ctx, list, append([]client.ListOption{client.InNamespace(hook.Namespace)}, opts...)...); ferr != nil {
			return nil, errors.Join(err, ferr)
		}
	}
	// Filtered in place: the list is this call's own slice.
	own := list.Items[:0]
	for i := range list.Items {
		if list.Items[i].Spec.HookName == hook.Name {
			own = append(own, list.Items[i])
		}
	}
	clear(list.Items[len(own):])
	return own, nil
}

// LiveChanges sets opts.ChangedFiles, live, to the workspace files changed
// since the newest of opts.Checkpoints (its snapshot commit, else the HEAD
// it was taken on), and opts.Lost to the work lost from the workspace that
// a checkpoint still holds (FindLost), with git bounded by timeout. Without a checkpoint, or
// with a workspace that is not a directory here, it does nothing; a git
// failure leaves opts as it was and is returned for the caller to report.
func LiveChanges(ctx context.Context, hook *v1.Hook, opts *Options, timeout time.Duration) error {
	if len(opts.Checkpoints) == 0 || hook.Spec.Workspace == "" {
		return nil
	}
	base := opts.Checkpoints[0].SnapshotCommit
	if base == "" {
		base = opts.Checkpoints[0].Commit
	}
	if fi, err := os.Stat(hook.Spec.Workspace); base == "" || err != nil || !fi.IsDir() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	files, err := snapshot.ChangedPaths(ctx, hook.Spec.Workspace, base)
	if err != nil {
		return err
	}
	opts.ChangedFiles, opts.ChangedFilesLive = files, true
	cps := slices.Clone(opts.Checkpoints)
	SortNewestFirst(cps)
	lost, err := FindLost(ctx, hook, cps)
	if err != nil {
		return err
	}
	opts.Lost = lost
	return nil
}

// lastCheckpoint writes the last checkpoint, the files changed since it,
// and a warning for those that a passed step touched.
func (r *renderer) lastCheckpoint() {
	rec := r.hook.Status.Recovery
	var last *CheckpointSummary
	if len(r.opts.Checkpoints) > 0 {
		cps := slices.Clone(r.opts.Checkpoints)
		SortNewestFirst(cps)
		last = &cps[0]
	}
	files := r.opts.ChangedFiles
	live := r.opts.ChangedFilesLive
	if !live && rec != nil {
		files = rec.FilesChangedSinceCheckpoint
	}
	if last == nil && len(files) == 0 && (rec == nil || rec.LastCheckpoint == "") {
		return
	}
	r.printf("## Last checkpoint\n\n")
	switch {
	case last != nil:
		r.printf("- `%s` at %s, trigger `%s`", last.Name, stamp(last.Created), last.Trigger)
		if last.Step != "" {
			r.printf(", step %q", last.Step)
		}
		r.printf("\n")
		if last.Commit != "" {
			r.printf("- Commit `%s`", short(last.Commit))
			if last.Branch != "" {
				r.printf(" on branch `%s`", last.Branch)
			}
			if last.Dirty {
				r.printf(", with uncommitted changes")
			}
			r.printf("\n")
		}
		if last.SnapshotCommit != "" {
			r.printf("- Snapshot `%s`: `tether checkpoint restore %s` brings that working tree back\n", short(last.SnapshotCommit), last.Name)
		}
		if last.Description != "" {
			r.printf("- Note: %s\n", oneLine(last.Description))
		}
	default:
		r.printf("- `%s`\n", rec.LastCheckpoint)
	}
	r.printf("\n")
	switch {
	case len(files) > 0:
		r.printf("**Warning:** these files changed since the last checkpoint; check them before going on:\n\n")
		for _, f := range files {
			r.printf("- %s\n", codePath(f))
		}
		r.printf("\n")
	case live:
		r.printf("No file changed since the last checkpoint.\n\n")
	}
	r.overlap(files)
}

// overlap warns about changed files that a passed step touched: work that
// must not be repeated may have been changed since.
func (r *renderer) overlap(files []string) {
	if len(files) == 0 {
		return
	}
	changed := map[string]bool{}
	for _, f := range files {
		changed[f] = true
	}
	var lines []string
	h := r.hook
	for i := range h.Status.Steps {
		res := &h.Status.Steps[i]
		if res.Phase != v1.StepPassed {
			continue
		}
		var hit []string
		for _, f := range res.FilesTouched {
			if changed[f] {
				hit = append(hit, codePath(f)+r.lostNote(f))
			}
		}
		if len(hit) > 0 {
			lines = append(lines, "- "+stepLabel(h, stepIndex(h, res.Name, i))+": "+strings.Join(hit, ", "))
		}
	}
	if len(lines) == 0 {
		return
	}
	r.printf("**Warning:** files of passed steps changed since the last checkpoint. Those steps stay passed (DO NOT REPEAT them); check that the changes keep their work intact:\n\n%s\n\n",
		strings.Join(lines, "\n"))
}

// timeline lists the newest checkpoints, newest first.
func (r *renderer) timeline() {
	if len(r.opts.Checkpoints) == 0 {
		return
	}
	cps := slices.Clone(r.opts.Checkpoints)
	SortNewestFirst(cps)
	total := len(cps)
	if len(cps) > TimelineEntries {
		cps = cps[:TimelineEntries]
	}
	r.printf("## Checkpoint timeline\n\nThe newest %d of %d checkpoints, newest first:\n\n", len(cps), total)
	for _, c := range cps {
		r.printf("- %s `%s` (%s)", stamp(c.Created), c.Name, c.Trigger)
		if c.Step != "" {
			r.printf(", step %q", c.Step)
		}
		if c.Commit != "" {
			r.printf(", commit `%s`", short(c.Commit))
		}
		if c.Description != "" {
			r.printf(": %s", oneLine(c.Description))
		}
		r.printf("\n")
	}
	r.printf("\n")
}

// lostNote says, for a file of a passed step, how it differs from the
// checkpoint that holds lost work and whether that checkpoint restores it;
// empty when no lost work was found.
func (r *renderer) lostNote(path string) string {
	l := r.opts.Lost
	if l == nil {
		return ""
	}
	for _, c := range l.Changes {
		if c.Path != path {
			continue
		}
		if c.Lost {
			return fmt.Sprintf(" (%s; checkpoint `%s` restores it)", c.How, l.Checkpoint)
		}
		return fmt.Sprintf(" (%s since checkpoint `%s`: newer work, not restored)", c.How, l.Checkpoint)
	}
	return ""
}

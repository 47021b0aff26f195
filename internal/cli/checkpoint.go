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

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/agentsession"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// checkpointTriggers are the values --trigger accepts.
var checkpointTriggers = []v1.CheckpointTrigger{
	v1.TriggerManual, v1.TriggerGitCommit, v1.TriggerGitPush, v1.TriggerPRCreated,
	v1.TriggerValidationPass, v1.TriggerStepComplete, v1.TriggerInterval, v1.TriggerPreCompact,
}

func newCheckpointCommand(g *GlobalOptions) *cobra.Command {
	var desc, trigger, pr, workspace, commit string
	cmd := &cobra.Command{
		Use:   "checkpoint [HOOK]",
		Short: "Snapshot a Hook's workspace into a Checkpoint that can be restored",
		Long: `Take a checkpoint of the Hook's workspace: a git commit of the whole working
tree, untracked files included and .gitignore respected, stored under the
private ref refs/tether/checkpoints/<namespace>/<hook>/<seq>, and a
Checkpoint object owned by the Hook. The user's index, HEAD, branches, stash
and working tree are not touched.

Without HOOK, the Hook is the one non-terminal Hook whose spec.workspace
contains --workspace (git hooks call it so); without --workspace either, the
Hook tether agent hook would use here ($TETHER_HOOK, the checkout's binding,
the one non-terminal Hook whose spec.workspace holds the working directory).

--commit REV snapshots that commit's tree instead of the working tree: the
post-commit hook names the commit it ran for, so that commits made in quick
succession each get a checkpoint of their own.

Prints checkpoint.agents.tether.dev/NAME created and the snapshot commit.`,
		Example: `  tether checkpoint fix-login -m "before the refactor"
  tether checkpoint fix-login --trigger pr_created --pr https://example.com/org/repo/pull/7
  tether checkpoint --workspace "$(git rev-parse --show-toplevel)" --trigger git_commit`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("%s takes at most one argument, the Hook's name; got %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&desc, "message", "m", "", "a short description of the checkpoint")
	cmd.Flags().StringVar(&trigger, "trigger", string(v1.TriggerManual), "what caused the checkpoint: "+joinTriggers())
	cmd.Flags().StringVar(&pr, "pr", "", "the pull request URL (with --trigger pr_created)")
	cmd.Flags().StringVar(&workspace, "workspace", "", "without HOOK: find the Hook whose spec.workspace contains this directory (default: the working directory)")
	cmd.Flags().StringVar(&commit, "commit", "", "snapshot this commit's tree instead of the working tree")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		t := v1.CheckpointTrigger(trigger)
		if !slices.Contains(checkpointTriggers, t) {
			return fmt.Errorf("--trigger: %q is not one of %s", trigger, joinTriggers())
		}
		if pr != "" && t != v1.TriggerPRCreated {
			return fmt.Errorf("--pr: only with --trigger %s", v1.TriggerPRCreated)
		}
		if cmd.Flags().Changed("commit") && strings.TrimSpace(commit) == "" {
			return fmt.Errorf("--commit: must name a commit")
		}
		if len(desc) > 1024 {
			return fmt.Errorf("--message: %d bytes, at most 1024", len(desc))
		}
		if len(args) == 1 && cmd.Flags().Changed("workspace") {
			return fmt.Errorf("--workspace: give either HOOK or --workspace, not both")
		}
		b, err := g.Backend(cmd.Context())
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		ctx := cmd.Context()
		name := ""
		switch {
		case len(args) == 1:
			name = args[0]
		case cmd.Flags().Changed("workspace"):
			if name, err = hookForWorkspace(ctx, b, workspace); err != nil {
				return err
			}
		default:
			// As the other agent verbs: $TETHER_HOOK, the binding, the workspace.
			key, err := resolveHook(ctx, cmd, b, nil, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			name = key.Name
		}
		req := checkpoint.Request{Trigger: t, Description: desc, PullRequest: pr}
		req.Snapshot.Commit = commit
		out, err := takeCheckpoint(ctx, b, name, req)
		if err != nil {
			return err
		}
		return printCheckpoint(cmd.OutOrStdout(), cmd.ErrOrStderr(), out)
	}
	cmd.AddCommand(newCheckpointDiffCommand(g), newCheckpointRestoreCommand(g))
	return cmd
}

func joinTriggers() string {
	s := make([]string, len(checkpointTriggers))
	for i, t := range checkpointTriggers {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// takeCheckpoint takes a checkpoint of hook name; a Hook without
// spec.workspace is snapshotted in the working directory, as its
// validations run there.
func takeCheckpoint(ctx context.Context, b *Backend, name string, req checkpoint.Request) (*checkpoint.Outcome, error) {
	hook := &v1.Hook{}
	if err := b.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, hook); err != nil {
		return nil, explainHookErr(name, err)
	}
	req.OrWorkingDir = true
	rec, err := b.Recorder()
	if err != nil {
		return nil, err
	}
	req.Recorder, req.Actor = rec, actor(ctx)
	return checkpoint.Take(ctx, b.Client, client.ObjectKey{Namespace: b.Namespace, Name: name}, req)
}

// printCheckpoint prints `checkpoint.agents.tether.dev/NAME created`, the
// snapshot commit and ref, and warnings about what the snapshot lacks.
func printCheckpoint(out, errOut io.Writer, o *checkpoint.Outcome) error {
	cp := o.Checkpoint
	if _, err := fmt.Fprintf(out, "checkpoint.%s/%s created\nsnapshot %s %s\n", v1.GroupVersion.Group, cp.Name, cp.Spec.Git.SnapshotCommit, cp.Spec.Git.SnapshotRef); err != nil {
		return err
	}
	for _, d := range cp.Spec.Degraded {
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", d)
	}
	if len(cp.Spec.SkippedFiles) > 0 {
		_, _ = fmt.Fprintf(errOut, "warning: skipped for their size: %s\n", strings.Join(cp.Spec.SkippedFiles, ", "))
	}
	return nil
}

// hookForWorkspace finds the one non-terminal Hook whose spec.workspace
// contains dir (default: the working directory), as tether agent hook
// does (agentsession.ForWorkspace).
func hookForWorkspace(ctx context.Context, b *Backend, dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	abs, err := realPath(dir)
	if err != nil {
		return "", fmt.Errorf("--workspace %s: %w", dir, err)
	}
	name, err := agentsession.ForWorkspace(ctx, b.Client, b.Namespace, abs)
	var ambiguous *agentsession.AmbiguousError
	switch {
	case errors.Is(err, agentsession.ErrNoHook):
		return "", fmt.Errorf("--workspace %s: no non-terminal hook in namespace %q has a spec.workspace containing it; name the hook: tether checkpoint HOOK", abs, b.Namespace)
	case errors.As(err, &ambiguous):
		return "", fmt.Errorf("--workspace %s: %d non-terminal hooks in namespace %q have a spec.workspace containing it (%s); name one: tether checkpoint HOOK",
			abs, len(ambiguous.Candidates), b.Namespace, strings.Join(ambiguous.Candidates, ", "))
	}
	return name, err
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func newCheckpointDiffCommand(g *GlobalOptions) *cobra.Command {
	var patch bool
	cmd := &cobra.Command{
		Use:   "diff HOOK [CHECKPOINT]",
		Short: "Show what changed in a Hook's workspace since a checkpoint",
		Long: `Compare the Hook's workspace as it is now, untracked files included and
.gitignore respected, with a checkpoint's snapshot (default: the Hook's
latest checkpoint): git diff --stat, or the patch with -p. Nothing is
printed when nothing changed.`,
		Args: cobra.RangeArgs(1, 2),
	}
	cmd.Flags().BoolVarP(&patch, "patch", "p", false, "print the patch instead of the summary")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := g.Backend(cmd.Context())
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		req := checkpoint.DiffRequest{Patch: patch}
		if len(args) == 2 {
			req.Checkpoint = args[1]
		}
		plan, err := checkpoint.PlanDiff(cmd.Context(), b.Client, client.ObjectKey{Namespace: b.Namespace, Name: args[0]}, req)
		if err != nil {
			return err
		}
		printLostNote(cmd.ErrOrStderr(), args[0], plan)
		return plan.Write(cmd.Context(), cmd.OutOrStdout())
	}
	return cmd
}

// printLostNote tells on w when the default checkpoint was taken after
// work was lost and an older checkpoint still holds it, so that the diff
// against the default is not read as "nothing was lost".
func printLostNote(w io.Writer, hook string, plan *checkpoint.DiffPlan) {
	lost := plan.Lost
	if lost == nil {
		return
	}
	_, _ = fmt.Fprintf(w, "note: checkpoint %s was taken after %d file(s) were lost; %s still holds them: tether checkpoint diff %s %s; tether checkpoint restore %s -- %s\n",
		plan.Checkpoint, len(lost.Paths), lost.Checkpoint, hook, lost.Checkpoint, lost.Checkpoint, strings.Join(lost.Paths, " "))
}

func newCheckpointRestoreCommand(g *GlobalOptions) *cobra.Command {
	var o snapshot.RestoreOptions
	cmd := &cobra.Command{
		Use:   "restore CHECKPOINT [-- PATH...]",
		Short: "Bring back the workspace files of a checkpoint",
		Long: `Restore a checkpoint's snapshot.

By default the snapshot's files are written into the Hook's workspace;
HEAD, the branch and the index stay as they are, so the restored work
shows as uncommitted changes. It refuses when the workspace has
uncommitted changes, unless --force. Files absent from the snapshot are
left alone.

--to DIR writes the snapshot's files into DIR instead (new or empty);
--branch NAME creates a branch at the snapshot commit, whose parent is the
commit that was HEAD when the checkpoint was taken.

-- PATH... restores only those files (a directory: every file of the
snapshot under it), relative to the top of the repository, and touches no
other file. Each must name a file of the snapshot. In place, it refuses
only when a named file's content is held by neither the checkpoint nor
HEAD (compared by content, so ignored and assume-unchanged files count),
unless --force.`,
		Example: `  tether checkpoint restore fix-login-12
  tether checkpoint restore fix-login-12 --to ../rescued
  tether checkpoint restore fix-login-12 --branch rescued-work
  tether checkpoint restore fix-login-12 -- src/login.go docs/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("restore: a CHECKPOINT is required")
			}
			if len(args) > 1 && cmd.ArgsLenAtDash() != 1 {
				return fmt.Errorf("restore: one CHECKPOINT, then -- and the paths to restore (got %q)", args)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.To, "to", "", "write the snapshot's files into this directory instead of the workspace")
	cmd.Flags().StringVar(&o.Branch, "branch", "", "create a branch with this name at the snapshot commit")
	cmd.Flags().BoolVar(&o.Force, "force", false, "overwrite uncommitted changes (in place), files in a non-empty --to, or an existing --branch")
	cmd.MarkFlagsMutuallyExclusive("to", "branch")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := g.Backend(cmd.Context())
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		rec, err := b.Recorder()
		if err != nil {
			return err
		}
		o.Paths = args[1:]
		res, err := checkpoint.Restore(cmd.Context(), b.Client, client.ObjectKey{Namespace: b.Namespace, Name: args[0]},
			checkpoint.RestoreRequest{Options: o, Recorder: rec, Actor: actor(cmd.Context())})
		if res == nil {
			return err
		}
		out := cmd.OutOrStdout()
		if pre := res.PreRestore; pre != nil {
			_, _ = fmt.Fprintf(out, "checkpoint.%s/%s created (pre_restore, snapshot %s): the workspace as it was\n", v1.GroupVersion.Group, pre.Name, pre.Spec.Git.SnapshotShort)
		}
		if err != nil {
			return err
		}
		cp, r := res.Checkpoint, res.Result
		if o.Branch != "" {
			_, err = fmt.Fprintf(out, "checkpoint.%s/%s restored: branch %s created at %s\n", v1.GroupVersion.Group, cp.Name, r.Where, r.Commit)
		} else {
			_, err = fmt.Fprintf(out, "checkpoint.%s/%s restored: %d files written to %s\n", v1.GroupVersion.Group, cp.Name, r.Files, r.Where)
		}
		if pre := res.PreRestore; pre != nil {
			_, _ = fmt.Fprintf(out, "to undo the restore: %s\n", undoCommand(pre.Name, b.Namespace, o.Paths))
		}
		return err
	}
	return cmd
}

// undoCommand is the command that undoes a forced restore: a forced
// restore of its pre_restore checkpoint, of the same paths.
func undoCommand(preRestore, namespace string, paths []string) string {
	undo := "tether checkpoint restore " + preRestore + " --force"
	if namespace != "default" {
		undo += " -n " + namespace
	}
	if len(paths) > 0 {
		undo += " -- " + strings.Join(quoteAll(paths), " ")
	}
	return undo
}

// quoteIfNeeded quotes a path holding a control character (a newline in a
// file name), so that each file stays on one line.
func quoteIfNeeded(p string) string {
	if strings.IndexFunc(p, unicode.IsControl) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

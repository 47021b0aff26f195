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

// Package checkpoint takes a Hook's checkpoint: a snapshot of its
// workspace under a private git ref, a Checkpoint object owned by the Hook,
// and the Hook's status.lastCheckpoint. The CLI (`tether checkpoint`,
// `tether step done`) and the interval reconciler share it.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// Finalizer is on every Checkpoint: the Checkpoint reconciler deletes the
// snapshot ref before the object goes.
const Finalizer = "agents.tether.dev/snapshot-ref"

// HookLabel labels a Checkpoint with its Hook's name (when the name fits
// in a label value), for `get checkpoints -l`.
const HookLabel = "agents.tether.dev/hook"

// maxAttempts bounds the tries for a free sequence number.
const maxAttempts = 8

// Request says what checkpoint to take.
type Request struct {
	// Trigger is what caused it. Required.
	Trigger v1.CheckpointTrigger
	// Description is the Checkpoint's spec.description.
	Description string
	// PullRequest is the pull request URL of a pr_created checkpoint.
	PullRequest string
	// Step overrides the step recorded (default: the Hook's current step),
	// for a checkpoint of a step that just passed.
	Step string
	// Workspace overrides the Hook's spec.workspace.
	Workspace string
	// OrWorkingDir snapshots the working directory when neither Workspace
	// nor spec.workspace names one: where the verbs run a Hook's
	// validations (tether checkpoint, step done).
	OrWorkingDir bool
	// SkipUnchanged takes nothing when the workspace's tree equals the
	// last checkpoint's (the interval trigger).
	SkipUnchanged bool
	// Snapshot tunes the capture: MaxFileSize, MaxChanged, IndexDir.
	// Namespace, Hook, Seq, Previous and Message are set by Take.
	Snapshot snapshot.Options
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Recorder, when set, records a ReasonTaken Event on the Hook for the
	// new Checkpoint, naming Actor.
	Recorder events.EventRecorder
	// Actor is who took the checkpoint ("tether checkpoint",
	// "tether-checkpoint-controller"), for the Event.
	Actor string
	// NoHookWrite leaves the Hook alone, for a caller that is not a writer
	// of its status (the interval reconciler: the Hook reconciler is the
	// one controller that writes it). The sequence number is then taken by
	// the Checkpoint's name, one past the Hook's status.checkpointSeq and
	// on past any taken (ref or object), and the Hook reconciler records
	// status.checkpointSeq and lastCheckpoint from the Checkpoint.
	NoHookWrite bool
}

// ReasonTaken is the reason of the Event of every checkpoint taken.
const ReasonTaken = "CheckpointTaken"

// Outcome is what Take did.
type Outcome struct {
	// Checkpoint is the created object; nil when Skipped.
	Checkpoint *v1.Checkpoint
	// Snapshot is the capture's result.
	Snapshot *snapshot.Result
	// Skipped is true when SkipUnchanged found the workspace unchanged.
	Skipped bool
	// Hook is the Hook as Take read it when Skipped: its last checkpoint
	// is the one the workspace was compared with.
	Hook *v1.Hook
}

// Name is the name of a Hook's Checkpoint number seq: <hook>-<seq>, with
// the Hook's part shortened to keep the name within 253 characters.
func Name(hook string, seq int64) string {
	suffix := "-" + strconv.FormatInt(seq, 10)
	if len(hook)+len(suffix) > 253 {
		hook = hook[:253-len(suffix)]
	}
	return hook + suffix
}

// Take checkpoints the Hook key: it snapshots the workspace, allocates the
// next sequence number with a compare-and-swap on the Hook's
// status.checkpointSeq, stores the snapshot under its ref, creates the
// Checkpoint object (owned by the Hook, with the Finalizer that deletes the
// ref) and records it as the Hook's status.lastCheckpoint (with
// NoHookWrite, the last two steps only). When creating
// the object fails, the ref is deleted again: no ref without an object.
func Take(ctx context.Context, c client.Client, key client.ObjectKey, req Request) (*Outcome, error) {
	if req.Trigger == "" {
		return nil, errors.New("checkpoint: a trigger is required")
	}
	now := time.Now
	if req.Now != nil {
		now = req.Now
	}
	hook := &v1.Hook{}
	if err := c.Get(ctx, key, hook); err != nil {
		return nil, err
	}
	ws := req.Workspace
	if ws == "" {
		ws = hook.Spec.Workspace
	}
	if ws == "" && req.OrWorkingDir {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		ws = wd
	}
	if ws == "" {
		return nil, fmt.Errorf("hook %q: %w", key.Name, snapshot.ErrNoWorkspace)
	}
	opts := req.Snapshot
	opts.Namespace, opts.Hook = key.Namespace, key.Name
	if last := hook.Status.LastCheckpoint; last != nil {
		opts.Previous = last.SnapshotCommit
	}
	started := time.Now()
	pending, err := snapshot.PrepareTree(ctx, ws, opts)
	if err != nil {
		return nil, fmt.Errorf("hook %q: checkpoint of %s: %w", key.Name, ws, err)
	}
	if req.SkipUnchanged && pending.Result.Unchanged {
		res := pending.Result
		return &Outcome{Snapshot: &res, Skipped: true, Hook: hook}, nil
	}

	var cp *v1.Checkpoint
	var res *snapshot.Result
	seq := hook.Status.CheckpointSeq
	for attempt := 0; ; attempt++ {
		if attempt == maxAttempts {
			return nil, fmt.Errorf("hook %q: no free checkpoint sequence number after %d tries", key.Name, maxAttempts)
		}
		if req.NoHookWrite {
			seq++
		} else {
			var err error
			if seq, hook, err = allocate(ctx, c, key); err != nil {
				return nil, err
			}
		}
		msg := fmt.Sprintf("tether checkpoint %s/%s #%d (%s)", key.Namespace, key.Name, seq, req.Trigger)
		if req.Description != "" {
			msg += "\n\n" + req.Description
		}
		res, err = pending.Commit(ctx, seq, msg)
		if errors.Is(err, snapshot.ErrRefExists) {
			continue // a ref left from an earlier Hook of the same name
		}
		if err != nil {
			return nil, fmt.Errorf("hook %q: checkpoint of %s: %w", key.Name, ws, err)
		}
		cp = newCheckpoint(hook, seq, req, res)
		cp.Annotations = map[string]string{v1.CaptureDurationAnnotation: time.Since(started).Round(time.Microsecond).String()}
		err = c.Create(ctx, cp)
		if err == nil {
			break
		}
		// The object could not be stored: its ref must not outlive it.
		if derr := snapshot.DeleteRef(context.WithoutCancel(ctx), ws, res.Ref, res.Commit); derr != nil {
			err = fmt.Errorf("%w (and deleting the ref %s failed: %w)", err, res.Ref, derr)
		}
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		return nil, fmt.Errorf("hook %q: creating checkpoint %s: %w", key.Name, cp.Name, err)
	}
	if req.Recorder != nil {
		actor := req.Actor
		if actor == "" {
			actor = "an unnamed actor"
		}
		req.Recorder.Eventf(hook, cp, corev1.EventTypeNormal, ReasonTaken, "Checkpoint",
			"%s checkpoint %s by %s (seq %d, snapshot %s, %d files changed)", req.Trigger, cp.Name, actor,
			cp.Spec.Seq, cp.Spec.Git.SnapshotShort, len(cp.Spec.Files))
	}
	if req.NoHookWrite {
		return &Outcome{Checkpoint: cp, Snapshot: res}, nil
	}
	if err := recordLast(ctx, c, key, cp, now()); err != nil {
		return &Outcome{Checkpoint: cp, Snapshot: res}, fmt.Errorf("checkpoint %s created, but recording it in hook %q's status failed: %w", cp.Name, key.Name, err)
	}
	return &Outcome{Checkpoint: cp, Snapshot: res}, nil
}

// allocate hands out the Hook's next checkpoint sequence number: a status
// update conditioned on the resourceVersion read, retried on conflict, so
// two concurrent checkpoints never get the same number.
func allocate(ctx context.Context, c client.Client, key client.ObjectKey) (int64, *v1.Hook, error) {
	hook, err := hookwrite.UpdateStatus(ctx, c, key, func(h *v1.Hook) (bool, error) {
		h.Status.CheckpointSeq++
		return true, nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("hook %q: allocating a checkpoint sequence number: %w", key.Name, err)
	}
	return hook.Status.CheckpointSeq, hook, nil
}

// recordLast sets the Hook's status.lastCheckpoint to cp unless a newer
// checkpoint is recorded already.
func recordLast(ctx context.Context, c client.Client, key client.ObjectKey, cp *v1.Checkpoint, at time.Time) error {
	_, err := hookwrite.UpdateStatus(ctx, c, key, func(h *v1.Hook) (bool, error) {
		if last := h.Status.LastCheckpoint; last != nil && last.Seq >= cp.Spec.Seq {
			return false, nil
		}
		last := &v1.LastCheckpoint{
			Name: cp.Name, Seq: cp.Spec.Seq, Time: metav1.NewTime(at),
			Trigger: cp.Spec.Trigger, Step: cp.Spec.Step,
		}
		if g := cp.Spec.Git; g != nil {
			last.SnapshotCommit, last.SnapshotTree = g.SnapshotCommit, g.SnapshotTree
		}
		h.Status.LastCheckpoint = last
		return true, nil
	})
	return err
}

// newCheckpoint is the Checkpoint object of a capture.
func newCheckpoint(hook *v1.Hook, seq int64, req Request, res *snapshot.Result) *v1.Checkpoint {
	cp := &v1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{
			Name:       Name(hook.Name, seq),
			Namespace:  hook.Namespace,
			Finalizers: []string{Finalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1.GroupVersion.String(),
				Kind:               "Hook",
				Name:               hook.Name,
				UID:                hook.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: v1.CheckpointSpec{
			HookName:    hook.Name,
			Trigger:     req.Trigger,
			Seq:         seq,
			Description: truncate(req.Description, 1024),
			State:       hook.Status.State,
			PullRequest: req.PullRequest,
			Workspace:   res.Workspace,
			Git: &v1.GitState{
				Branch:         res.Branch,
				Commit:         res.Head,
				Dirty:          res.Dirty,
				SnapshotRef:    res.Ref,
				SnapshotCommit: res.Commit,
				SnapshotShort:  short(res.Commit),
				SnapshotTree:   res.Tree,
			},
			FilesTruncated: res.Truncated,
			SkippedFiles:   res.Skipped,
			Degraded:       res.Degraded,
		},
	}
	if len(hook.Name) <= 63 {
		cp.Labels = map[string]string{HookLabel: hook.Name}
	}
	if cs := hook.Status.CurrentStep; cs != nil {
		cp.Spec.Step = cs.Name
	}
	if req.Step != "" {
		cp.Spec.Step = req.Step
	}
	if len(cp.Spec.Degraded) > 16 {
		cp.Spec.Degraded = cp.Spec.Degraded[:16]
	}
	for _, f := range res.Changed {
		fs := v1.FileSnapshot{Path: f.Path, Change: v1.FileChange(f.Status), Size: f.Size, Mode: f.Mode, Hash: f.Hash}
		if !f.ModTime.IsZero() {
			fs.ModTime = ptr.To(metav1.NewTime(f.ModTime))
		}
		cp.Spec.Files = append(cp.Spec.Files, fs)
	}
	return cp
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

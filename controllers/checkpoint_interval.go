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
	"fmt"
	"io/fs"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// IntervalCheckpointReconciler takes a Hook's interval checkpoints: while
// a step runs, every effective checkpointInterval, timed with RequeueAfter
// at the exact due time. The due time counts from the latest of the step's
// start, the last checkpoint and the last look that took nothing
// (status.intervalCheckedAt), so it is derived from the Hook alone. A
// workspace unchanged since the last checkpoint is not checkpointed again;
// an Event says so. Only a workspace directory on this host is
// checkpointed; elsewhere (cluster mode, remote workers) the agent's CLI
// takes checkpoints.
type IntervalCheckpointReconciler struct {
	// Client reads Hooks, writes their status and creates Checkpoints.
	Client client.Client
	// Reader, when set, reads Hooks around the cache for the checkpoint's
	// compare-and-swap updates; nil means Client, whose conflicts are
	// retried with backoff until the cache catches up.
	Reader client.Reader
	// Events records Events.
	Events recorder.EventRecorder
	// Config supplies checkpointInterval when a Hook's spec does not.
	Config *config.Config
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks/status,verbs=update
// +kubebuilder:rbac:groups=agents.tether.dev,resources=checkpoints,verbs=create
// A Checkpoint's owner reference to its Hook blocks the Hook's deletion,
// which OwnerReferencesPermissionEnforcement lets only those who may update
// the Hook's finalizers set.
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks/finalizers,verbs=update

// Reconcile takes the Hook's interval checkpoint when it is due, and asks
// to be called again at the next due time.
func (r *IntervalCheckpointReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hook := &v1.Hook{}
	if err := r.Client.Get(ctx, req.NamespacedName, hook); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	st := &hook.Status
	if !hook.DeletionTimestamp.IsZero() || st.State != v1.HookStepRunning || hook.Spec.Suspend || hook.Spec.Workspace == "" {
		return ctrl.Result{}, nil
	}
	if _, err := os.Stat(hook.Spec.Workspace); errors.Is(err, fs.ErrPermission) {
		return r.workspaceRefused(ctx, hook, snapshotUnreadable(hook.Spec.Workspace), r.Config.Effective(&hook.Spec).CheckpointInterval)
	}
	if fi, err := os.Stat(hook.Spec.Workspace); err != nil || !fi.IsDir() {
		// Not reachable from this host: the agent's CLI checkpoints it.
		log.FromContext(ctx).V(1).Info("workspace not on this host; no interval checkpoints", "workspace", hook.Spec.Workspace)
		return ctrl.Result{}, nil
	}
	interval := r.Config.Effective(&hook.Spec).CheckpointInterval
	now := r.now()
	due := IntervalDue(hook, interval)
	if now.Before(due) {
		return ctrl.Result{RequeueAfter: due.Sub(now)}, nil
	}

	c := r.Client
	if r.Reader != nil {
		c = uncached{Client: r.Client, reader: r.Reader}
	}
	out, err := checkpoint.Take(ctx, c, req.NamespacedName, checkpoint.Request{
		Trigger:       v1.TriggerInterval,
		Description:   fmt.Sprintf("every %s while a step runs", interval),
		SkipUnchanged: true,
		Now:           r.now,
		Recorder:      r.Events,
		Actor:         CheckpointControllerName,
	})
	if err == nil {
		if werr := r.workspaceReadable(ctx, hook); werr != nil {
			return ctrl.Result{}, werr
		}
	}
	switch {
	case errors.Is(err, snapshot.ErrWorkspaceNotOwned) || errors.Is(err, snapshot.ErrWorkspaceUnreadable):
		return r.workspaceRefused(ctx, hook, err, interval)
	case err == nil && !out.Skipped:
		return ctrl.Result{RequeueAfter: interval}, nil
	case err == nil:
		// The Hook Take read, not the cached one: its last checkpoint is
		// the one the workspace was compared with.
		fresh := out.Hook
		if fresh == nil {
			fresh = hook
		}
		if freshDue := IntervalDue(fresh, interval); now.Before(freshDue) {
			// The cached Hook was behind: a checkpoint was taken since,
			// so this look came early. It is not a look.
			return ctrl.Result{RequeueAfter: freshDue.Sub(now)}, nil
		}
		last, first := "", true
		if lc := fresh.Status.LastCheckpoint; lc != nil {
			last = lc.Name
			first = fresh.Status.IntervalCheckedAt == nil || !fresh.Status.IntervalCheckedAt.After(lc.Time.Time)
		}
		if werr := r.markChecked(ctx, req.NamespacedName, now); werr != nil {
			return ctrl.Result{}, werr
		}
		// Only the first unchanged look after a checkpoint is an Event: one
		// every interval for every idle Hook would bury the Events people
		// look for. status.intervalCheckedAt records every look.
		if first {
			r.Events.Eventf(hook, nil, corev1.EventTypeNormal, "CheckpointSkipped", "Checkpoint",
				"interval checkpoint skipped: nothing changed in %s since checkpoint %s (tree %s); later looks that find nothing new are not reported",
				hook.Spec.Workspace, last, short12(out.Snapshot.Tree))
		}
		return ctrl.Result{RequeueAfter: interval}, nil
	default:
		if apierrors.IsConflict(err) {
			// The watch event of the newer version brings it back.
			return ctrl.Result{}, nil
		}
		if werr := r.markChecked(ctx, req.NamespacedName, now); werr != nil {
			return ctrl.Result{}, werr
		}
		r.Events.Eventf(hook, nil, corev1.EventTypeWarning, "CheckpointFailed", "Checkpoint", "interval checkpoint failed: %v", err)
		return ctrl.Result{RequeueAfter: interval}, nil
	}
}

// The condition of a Hook whose workspace the operator cannot read.
const (
	// ConditionIntervalCheckpoints says whether the reconciler can take
	// the Hook's interval checkpoints; it is set once it could not.
	ConditionIntervalCheckpoints = "IntervalCheckpoints"
	// ReasonWorkspaceNotOwned: git refuses the workspace's repository,
	// which another user than the operator's owns.
	ReasonWorkspaceNotOwned = "WorkspaceNotOwned"
	// ReasonWorkspaceUnreadable: the operator may not read the workspace.
	ReasonWorkspaceUnreadable = "WorkspaceUnreadable"
	// ReasonWorkspaceReadable: a checkpoint was taken again.
	ReasonWorkspaceReadable = "WorkspaceReadable"
)

// snapshotUnreadable is the error of a workspace that cannot even be
// looked at, in the terms of a capture's.
func snapshotUnreadable(ws string) error {
	return fmt.Errorf("%w: %s", snapshot.ErrWorkspaceUnreadable, ws)
}

// workspaceRefused records, on the Hook's IntervalCheckpoints condition
// and once in a Warning Event, that its workspace cannot be read by the
// operator, and looks again an interval later: ownership and modes may be
// fixed meanwhile, and the agent's verbs checkpoint it in any case.
func (r *IntervalCheckpointReconciler) workspaceRefused(ctx context.Context, hook *v1.Hook, cause error, interval time.Duration) (ctrl.Result, error) {
	reason := ReasonWorkspaceUnreadable
	if errors.Is(cause, snapshot.ErrWorkspaceNotOwned) {
		reason = ReasonWorkspaceNotOwned
	}
	msg := fmt.Sprintf("the operator takes no interval checkpoints of this Hook: %v. The agent's verbs (step begin, step done, tether checkpoint) "+
		"still checkpoint the workspace as its owner; to have the operator take them too, run it as the workspace's owner", cause)
	changed, err := r.setCondition(ctx, hook, metav1.Condition{Type: ConditionIntervalCheckpoints, Status: metav1.ConditionFalse, Reason: reason, Message: msg})
	if err != nil {
		return ctrl.Result{}, err
	}
	if changed {
		r.Events.Eventf(hook, nil, corev1.EventTypeWarning, reason, "Checkpoint", "%s", msg)
	}
	if err := r.markChecked(ctx, client.ObjectKeyFromObject(hook), r.now()); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: interval}, nil
}

// workspaceReadable turns a False IntervalCheckpoints condition True
// once the workspace could be read again.
func (r *IntervalCheckpointReconciler) workspaceReadable(ctx context.Context, hook *v1.Hook) error {
	if c := meta.FindStatusCondition(hook.Status.Conditions, ConditionIntervalCheckpoints); c == nil || c.Status != metav1.ConditionFalse {
		return nil
	}
	_, err := r.setCondition(ctx, hook, metav1.Condition{Type: ConditionIntervalCheckpoints, Status: metav1.ConditionTrue, Reason: ReasonWorkspaceReadable,
		Message: "the operator can read the workspace and takes its interval checkpoints"})
	return err
}

// setCondition sets cond on the Hook's status and tells whether its
// status or reason changed.
func (r *IntervalCheckpointReconciler) setCondition(ctx context.Context, hook *v1.Hook, cond metav1.Condition) (bool, error) {
	c := r.Client
	if r.Reader != nil {
		c = uncached{Client: r.Client, reader: r.Reader}
	}
	changed := false
	_, err := hookwrite.UpdateStatus(ctx, c, client.ObjectKeyFromObject(hook), func(h *v1.Hook) (bool, error) {
		old := meta.FindStatusCondition(h.Status.Conditions, cond.Type)
		changed = old == nil || old.Status != cond.Status || old.Reason != cond.Reason
		cond.ObservedGeneration = h.Generation
		return meta.SetStatusCondition(&h.Status.Conditions, cond), nil
	})
	return changed, client.IgnoreNotFound(err)
}

// IntervalDue is when hook's next interval checkpoint is due: interval
// after the latest of its step's start, its last checkpoint and its last
// look that took nothing.
func IntervalDue(hook *v1.Hook, interval time.Duration) time.Time {
	var base time.Time
	st := &hook.Status
	if cs := st.CurrentStep; cs != nil && cs.StartedAt != nil {
		base = cs.StartedAt.Time
	}
	if lc := st.LastCheckpoint; lc != nil && lc.Time.After(base) {
		base = lc.Time.Time
	}
	if st.IntervalCheckedAt != nil && st.IntervalCheckedAt.After(base) {
		base = st.IntervalCheckedAt.Time
	}
	return base.Add(interval)
}

// markChecked records that the interval checkpoint looked at the workspace
// at t and took nothing, so the next look is an interval later.
func (r *IntervalCheckpointReconciler) markChecked(ctx context.Context, key client.ObjectKey, t time.Time) error {
	c := r.Client
	if r.Reader != nil {
		c = uncached{Client: r.Client, reader: r.Reader}
	}
	_, err := hookwrite.UpdateStatus(ctx, c, key, func(h *v1.Hook) (bool, error) {
		h.Status.IntervalCheckedAt = &metav1.Time{Time: t}
		return true, nil
	})
	return client.IgnoreNotFound(err)
}

func (r *IntervalCheckpointReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func short12(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// uncached reads from reader and writes through the embedded client, so
// that compare-and-swap retries see the latest resourceVersion rather than
// a lagging cache.
type uncached struct {
	client.Client
	reader client.Reader
}

func (u uncached) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return u.reader.Get(ctx, key, obj, opts...)
}

func (u uncached) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return u.reader.List(ctx, list, opts...)
}

// SetupWithManager registers the reconciler for Hooks.
func (r *IntervalCheckpointReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.setup(mgr, false)
}

func (r *IntervalCheckpointReconciler) setup(mgr ctrl.Manager, skipNameValidation bool) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.Hook{}).
		Named("checkpoint-interval").
		WithOptions(controller.Options{SkipNameValidation: &skipNameValidation}).
		Complete(r)
}

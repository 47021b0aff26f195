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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/config"
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
//
// It writes Checkpoints only, never the Hook: the Hook reconciler records
// a new Checkpoint in the Hook's status (checkpointSeq, lastCheckpoint)
// from its watch of the Checkpoints, and the looks that took nothing and
// the IntervalCheckpoints condition from the looks this reconciler posts
// to it (intervalLooks). It runs on its own queue so that a slow git
// capture never delays the Hook reconciler's stale detection.
type IntervalCheckpointReconciler struct {
	// Client reads Hooks and creates Checkpoints.
	Client client.Client
	// Reader, when set, reads Hooks around the cache, so that a look is
	// judged on the Hook as stored; nil means Client.
	Reader client.Reader
	// Events records Events.
	Events recorder.EventRecorder
	// Config supplies checkpointInterval when a Hook's spec does not.
	Config *config.Config
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// looks go to the Hook reconciler, which stores them.
	looks *intervalLooks
	// took maps a Hook's key to the checkpoint this reconciler last took
	// (a taken), until the Hook reconciler records it in lastCheckpoint:
	// a look in between would compare the workspace with the checkpoint
	// before and take the same work again.
	took sync.Map
}

// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks,verbs=get;list;watch
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
		if apierrors.IsNotFound(err) {
			r.took.Delete(req.NamespacedName)
		}
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
	due := r.due(hook, interval)
	if now.Before(due) {
		return ctrl.Result{RequeueAfter: due.Sub(now)}, nil
	}

	out, err := checkpoint.Take(ctx, r.uncached(), req.NamespacedName, checkpoint.Request{
		Trigger:       v1.TriggerInterval,
		Description:   fmt.Sprintf("every %s while a step runs", interval),
		SkipUnchanged: true,
		Now:           r.now,
		Recorder:      r.Events,
		Actor:         CheckpointControllerName,
		NoHookWrite:   true,
	})
	if err == nil {
		r.workspaceReadable(hook)
	}
	switch {
	case errors.Is(err, snapshot.ErrWorkspaceNotOwned) || errors.Is(err, snapshot.ErrWorkspaceUnreadable):
		return r.workspaceRefused(ctx, hook, err, interval)
	case err == nil && !out.Skipped:
		r.took.Store(req.NamespacedName, taken{at: now, seq: out.Checkpoint.Spec.Seq})
		return ctrl.Result{RequeueAfter: interval}, nil
	case err == nil:
		// The Hook Take read, not the cached one: its last checkpoint is
		// the one the workspace was compared with.
		fresh := out.Hook
		if fresh == nil {
			fresh = hook
		}
		if freshDue := r.due(fresh, interval); now.Before(freshDue) {
			// The cached Hook was behind: a checkpoint was taken since,
			// so this look came early. It is not a look.
			return ctrl.Result{RequeueAfter: freshDue.Sub(now)}, nil
		}
		last, first := "", true
		if lc := fresh.Status.LastCheckpoint; lc != nil {
			last = lc.Name
			looked := r.lastLook(fresh)
			first = looked.IsZero() || !looked.After(lc.Time.Time)
		}
		r.looks.post(req.NamespacedName, now, nil)
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
		r.looks.post(req.NamespacedName, now, nil)
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
	// The condition as stored, or as posted and not stored yet, tells
	// whether this is news.
	stored := &v1.Hook{}
	if err := r.uncached().Get(ctx, client.ObjectKeyFromObject(hook), stored); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	old := r.looks.condition(stored)
	if old == nil || old.Status != metav1.ConditionFalse || old.Reason != reason {
		r.Events.Eventf(hook, nil, corev1.EventTypeWarning, reason, "Checkpoint", "%s", msg)
	}
	r.looks.post(client.ObjectKeyFromObject(hook), r.now(),
		&metav1.Condition{Type: ConditionIntervalCheckpoints, Status: metav1.ConditionFalse, Reason: reason, Message: msg})
	return ctrl.Result{RequeueAfter: interval}, nil
}

// workspaceReadable turns a False IntervalCheckpoints condition True
// once the workspace could be read again.
func (r *IntervalCheckpointReconciler) workspaceReadable(hook *v1.Hook) {
	if c := r.looks.condition(hook); c == nil || c.Status != metav1.ConditionFalse {
		return
	}
	r.looks.post(client.ObjectKeyFromObject(hook), time.Time{}, &metav1.Condition{Type: ConditionIntervalCheckpoints, Status: metav1.ConditionTrue,
		Reason: ReasonWorkspaceReadable, Message: "the operator can read the workspace and takes its interval checkpoints"})
}

// due is when hook's next interval checkpoint is due, counting a look
// posted to the Hook reconciler and a checkpoint taken that the Hook's
// status does not record yet.
func (r *IntervalCheckpointReconciler) due(hook *v1.Hook, interval time.Duration) time.Time {
	key := client.ObjectKeyFromObject(hook)
	due := IntervalDue(hook, interval)
	if look, ok := r.looks.pending(key); ok && !look.at.IsZero() && look.at.Add(interval).After(due) {
		due = look.at.Add(interval)
	}
	if v, ok := r.took.Load(key); ok {
		t := v.(taken)
		if lc := hook.Status.LastCheckpoint; lc != nil && lc.Seq >= t.seq {
			r.took.Delete(key) // recorded
		} else if at := t.at.Add(interval); at.After(due) {
			due = at
		}
	}
	return due
}

// taken is a checkpoint the interval reconciler took: when, and its number.
type taken struct {
	at  time.Time
	seq int64
}

// lastLook is when the interval reconciler last looked at hook's workspace
// and took nothing, stored or posted; zero for never.
func (r *IntervalCheckpointReconciler) lastLook(hook *v1.Hook) time.Time {
	var t time.Time
	if hook.Status.IntervalCheckedAt != nil {
		t = hook.Status.IntervalCheckedAt.Time
	}
	if look, ok := r.looks.pending(client.ObjectKeyFromObject(hook)); ok && look.at.After(t) {
		t = look.at
	}
	return t
}

// uncached is the client the reconciler reads the stored Hook with.
func (r *IntervalCheckpointReconciler) uncached() client.Client {
	if r.Reader != nil {
		return uncached{Client: r.Client, reader: r.Reader}
	}
	return r.Client
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
	return complete(ctrl.NewControllerManagedBy(mgr).
		For(&v1.Hook{}).
		Named("checkpoint-interval").
		WithOptions(controller.Options{SkipNameValidation: &skipNameValidation}), r)
}

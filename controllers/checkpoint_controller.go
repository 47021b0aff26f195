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
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// CheckpointControllerName names the Checkpoint reconciler in Events and logs.
const CheckpointControllerName = "tether-checkpoint-controller"

// DefaultCheckpointVerifyPeriod is how often the Checkpoints' refs are
// looked at again, one look per workspace (refProber). A ref lives in git,
// outside the store, and is not watched: a `git update-ref -d` shows in
// the Ready condition within this period.
const DefaultCheckpointVerifyPeriod = 2 * time.Minute

// finalizerGiveUpAfter is how long the finalizer retries a ref deletion
// that fails for an unexpected reason before it gives up with an Event.
const finalizerGiveUpAfter = 5 * time.Minute

// Condition reasons of a Checkpoint's Ready condition beyond those in the API.
const (
	// ReasonWorkspaceUnavailable means the workspace cannot be read from
	// where the reconciler runs: it is gone, or on another host.
	ReasonWorkspaceUnavailable = "WorkspaceUnavailable"
)

// CheckpointReconciler keeps Checkpoints: it prunes each Hook's to the
// newest maxCheckpoints, deletes a Checkpoint's git ref before the object
// goes (finalizer), and sets Ready from whether the ref still points at
// the snapshot commit. The cache holds Checkpoints trimmed to what it
// reads, so it writes them with patches of what it changed, never whole.
type CheckpointReconciler struct {
	// Client reads and writes Checkpoints and reads Hooks.
	Client client.Client
	// Reader reads Hooks around the cache; nil means Client.
	Reader client.Reader
	// Events records Events for what a person must notice.
	Events recorder.EventRecorder
	// Config supplies maxCheckpoints when a Hook's spec does not.
	Config *config.Config
	// VerifyPeriod is how often the refs are looked at again; zero means
	// DefaultCheckpointVerifyPeriod.
	VerifyPeriod time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	refs refLooks
}

// +kubebuilder:rbac:groups=agents.tether.dev,resources=checkpoints,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups=agents.tether.dev,resources=checkpoints/status,verbs=patch
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks,verbs=list;watch

// Reconcile handles one Checkpoint.
func (r *CheckpointReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cp := &v1.Checkpoint{}
	if err := r.Client.Get(ctx, req.NamespacedName, cp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cp.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, cp)
	}
	if base := cp.DeepCopy(); controllerutil.AddFinalizer(cp, checkpoint.Finalizer) {
		if err := r.Client.Patch(ctx, cp, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	pruned, err := r.prune(ctx, cp)
	if err != nil || pruned {
		return ctrl.Result{}, err
	}
	if err := r.setReady(ctx, cp); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// The watch event of the newer version brings it back.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	// The ref is looked at again by the refProber, each verify period,
	// with one look for all the Checkpoints of its workspace.
	return ctrl.Result{}, nil
}

// prune deletes the Hook's Checkpoints beyond the newest maxCheckpoints;
// true when cp itself was among them.
func (r *CheckpointReconciler) prune(ctx context.Context, cp *v1.Checkpoint) (bool, error) {
	hook := &v1.Hook{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cp.Namespace, Name: cp.Spec.HookName}, hook); err != nil {
		// Without its Hook there is no limit to apply; the owner
		// reference's cascade deletes an orphan.
		return false, client.IgnoreNotFound(err)
	}
	limit := int(r.Config.Effective(&hook.Spec).MaxCheckpoints)
	// Read only, the cache's own objects: every Checkpoint's reconcile
	// lists its Hook's; what is deleted is copied first.
	own, err := recoveryfile.HookCheckpoints(ctx, r.Client, hook, client.UnsafeDisableDeepCopy)
	if err != nil {
		return false, err
	}
	var live []*v1.Checkpoint
	for i := range own {
		if c := &own[i]; c.DeletionTimestamp.IsZero() {
			live = append(live, c)
		}
	}
	if len(live) <= limit {
		return false, nil
	}
	// Newest first: highest sequence, then latest creation.
	slices.SortFunc(live, func(a, b *v1.Checkpoint) int {
		if c := cmp.Compare(b.Spec.Seq, a.Spec.Seq); c != 0 {
			return c
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	self := false
	for _, old := range live[limit:] {
		old = old.DeepCopy()
		if err := r.Client.Delete(ctx, old, client.Preconditions{UID: &old.UID}); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("pruning checkpoint %s: %w", old.Name, err)
		}
		r.Events.Eventf(old, hook, corev1.EventTypeNormal, "Pruned", "Prune",
			"hook %s keeps its newest %d checkpoints (maxCheckpoints); %s (seq %d) deleted", hook.Name, limit, old.Name, old.Spec.Seq)
		self = self || old.UID == cp.UID
	}
	log.FromContext(ctx).Info("pruned checkpoints", "hook", hook.Name, "kept", limit, "deleted", len(live)-limit)
	return self, nil
}

// setReady records whether the snapshot ref exists and points at the
// recorded commit.
func (r *CheckpointReconciler) setReady(ctx context.Context, cp *v1.Checkpoint) error {
	cond := metav1.Condition{Type: v1.ConditionReady, ObservedGeneration: cp.Generation, LastTransitionTime: metav1.NewTime(r.now())}
	g := cp.Spec.Git
	switch {
	case g == nil || g.SnapshotRef == "" || g.SnapshotCommit == "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1.ReasonSnapshotMissing, "the checkpoint records no snapshot ref and commit"
	default:
		err := r.refs.verify(ctx, r.now(), r.refLookAge(), cp.Spec.Workspace, g.SnapshotRef, g.SnapshotCommit)
		cond.Status, cond.Reason = readyVerdict(err)
		if err == nil {
			cond.Message = fmt.Sprintf("%s points at %s", g.SnapshotRef, g.SnapshotCommit)
		} else {
			cond.Message = err.Error()
		}
	}
	old := meta.FindStatusCondition(cp.Status.Conditions, v1.ConditionReady)
	if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && cp.Status.ObservedGeneration == cp.Generation {
		return nil
	}
	base := cp.DeepCopy()
	meta.SetStatusCondition(&cp.Status.Conditions, cond)
	cp.Status.ObservedGeneration = cp.Generation
	if err := r.Client.Status().Patch(ctx, cp, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	if cond.Status == metav1.ConditionFalse && (old == nil || old.Status != metav1.ConditionFalse) {
		r.Events.Eventf(cp, nil, corev1.EventTypeWarning, v1.ReasonSnapshotMissing, "Verify", "%s", cond.Message)
	}
	return nil
}

// finalize deletes the snapshot ref and then the finalizer. A workspace
// that is gone, a ref that was moved or that is not tether's (outside
// refs/tether/, or no valid ref name) makes it give up at once with an
// Event: no retry changes those. Another failure is retried for
// finalizerGiveUpAfter, then given up.
func (r *CheckpointReconciler) finalize(ctx context.Context, cp *v1.Checkpoint) error {
	if !controllerutil.ContainsFinalizer(cp, checkpoint.Finalizer) {
		return nil
	}
	if g := cp.Spec.Git; g != nil && g.SnapshotRef != "" {
		err := snapshot.DeleteRef(ctx, cp.Spec.Workspace, g.SnapshotRef, g.SnapshotCommit)
		switch {
		case err == nil:
		case errors.Is(err, snapshot.ErrMissingWorkspace), errors.Is(err, snapshot.ErrNotRepository),
			errors.Is(err, snapshot.ErrBareRepository), errors.Is(err, snapshot.ErrNotDirectory),
			errors.Is(err, snapshot.ErrNoWorkspace), errors.Is(err, snapshot.ErrRefMoved),
			errors.Is(err, snapshot.ErrForeignRef):
			r.Events.Eventf(cp, nil, corev1.EventTypeWarning, "SnapshotRefNotDeleted", "Finalize",
				"leaving %s: %v", g.SnapshotRef, err)
		case r.now().Sub(cp.DeletionTimestamp.Time) < finalizerGiveUpAfter:
			return fmt.Errorf("deleting %s of checkpoint %s: %w", g.SnapshotRef, cp.Name, err)
		default:
			r.Events.Eventf(cp, nil, corev1.EventTypeWarning, "SnapshotRefNotDeleted", "Finalize",
				"giving up on deleting %s after %s: %v", g.SnapshotRef, finalizerGiveUpAfter, err)
		}
	}
	if cp.Spec.Workspace != "" && r.hookGone(ctx, cp) {
		// The capture index is a cache of the Hook's; nobody else removes it.
		if err := snapshot.RemoveIndex(ctx, cp.Spec.Workspace, cp.Namespace, cp.Spec.HookName); err != nil {
			log.FromContext(ctx).V(1).Info("capture index not removed", "hook", cp.Spec.HookName, "error", err.Error())
		}
	}
	base := cp.DeepCopy()
	controllerutil.RemoveFinalizer(cp, checkpoint.Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, cp, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

// hookGone reports whether the Hook cp belongs to no longer exists, read
// around the cache so that a Hook deleted a moment ago counts as gone.
func (r *CheckpointReconciler) hookGone(ctx context.Context, cp *v1.Checkpoint) bool {
	var reader client.Reader = r.Client
	if r.Reader != nil {
		reader = r.Reader
	}
	err := reader.Get(ctx, client.ObjectKey{Namespace: cp.Namespace, Name: cp.Spec.HookName}, &v1.Hook{})
	return apierrors.IsNotFound(err)
}

func (r *CheckpointReconciler) verifyPeriod() time.Duration {
	if r.VerifyPeriod > 0 {
		return r.VerifyPeriod
	}
	return DefaultCheckpointVerifyPeriod
}

// refLookAge is how old a look at a workspace's refs may be to answer for
// a Checkpoint: refLookMaxAge, or half the verify period if shorter.
func (r *CheckpointReconciler) refLookAge() time.Duration {
	return min(refLookMaxAge, r.verifyPeriod()/2)
}

func (r *CheckpointReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the reconciler for Checkpoints.
func (r *CheckpointReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.setup(mgr, false)
}

func (r *CheckpointReconciler) setup(mgr ctrl.Manager, skipNameValidation bool) error {
	if err := indexCheckpointsByHook(mgr); err != nil {
		return err
	}
	prober := &refProber{r: r, cache: mgr.GetCache(), queue: make(chan event.GenericEvent)}
	if err := mgr.Add(prober); err != nil {
		return fmt.Errorf("adding the checkpoint ref prober: %w", err)
	}
	return complete(ctrl.NewControllerManagedBy(mgr).
		For(&v1.Checkpoint{}).
		WatchesRawSource(source.Channel(prober.queue, &handler.EnqueueRequestForObject{})).
		// A change of a Hook's spec (maxCheckpoints) prunes through its
		// newest Checkpoint.
		Watches(&v1.Hook{}, handler.EnqueueRequestsFromMapFunc(newestCheckpoint),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("checkpoint").
		WithOptions(controller.Options{SkipNameValidation: &skipNameValidation}), r)
}

func newestCheckpoint(_ context.Context, obj client.Object) []reconcile.Request {
	hook, ok := obj.(*v1.Hook)
	if !ok || hook.Status.LastCheckpoint == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: hook.Namespace, Name: hook.Status.LastCheckpoint.Name}}}
}

// setupCheckpoints registers the Checkpoint reconciler and the interval
// checkpoint reconciler; SetupAll calls it.
func setupCheckpoints(mgr ctrl.Manager, opts Options, looks *intervalLooks) error {
	cps := &CheckpointReconciler{
		Client:       mgr.GetClient(),
		Reader:       mgr.GetAPIReader(),
		Events:       mgr.GetEventRecorder(CheckpointControllerName),
		Config:       opts.Config,
		VerifyPeriod: opts.CheckpointVerifyPeriod,
	}
	if err := cps.setup(mgr, opts.SkipNameValidation); err != nil {
		return err
	}
	interval := &IntervalCheckpointReconciler{
		Client: mgr.GetClient(),
		Reader: mgr.GetAPIReader(),
		Events: mgr.GetEventRecorder(CheckpointControllerName),
		Config: opts.Config,
		looks:  looks,
	}
	return interval.setup(mgr, opts.SkipNameValidation)
}

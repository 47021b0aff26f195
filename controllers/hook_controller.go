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
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/metrics"
)

// HookControllerName names the Hook reconciler in Events, history entries
// and logs.
const HookControllerName = "tether-hook-controller"

// HookReconciler drives Hooks: it initializes new ones, moves a working
// Hook whose heartbeat is overdue to recovering at exactly the due time,
// frees a Hook whose assignee died (it watches Workers), keeps the Ready,
// Stale, Recovering and HistoryConsistent conditions (checking the status
// against a replay of its history), records the Hook's newest Checkpoint
// and the interval reconciler's looks, and regenerates the recovery file
// on every change. It is the one controller that writes a Hook's status.
type HookReconciler struct {
	// Client reads Hooks and Workers (from the cache) and writes Hooks.
	Client client.Client
	// Reader reads around the cache, to confirm that an assignee was lost
	// before freeing its Hook; nil means Client.
	Reader client.Reader
	// Events records Events for what a person must notice.
	Events recorder.EventRecorder
	// Config supplies the defaults the Hook's spec does not set.
	Config *config.Config
	// RecoveryDir is where recovery files are written; empty writes none.
	RecoveryDir string
	// RecoveryFileBase, when set, is the directory status.recoveryFile is
	// recorded relative to (the local store's): a store moved or copied
	// then keeps its Hooks' status as it is.
	RecoveryFileBase string
	// Evidence verifies receipts, for the ReceiptsVerified condition and
	// the recovery file; nil checks everything but the signatures in the
	// file and keeps no condition.
	Evidence recoveryfile.Evidence
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	receipts receiptMemo
	// exits are the Worker reconciler's crashes not yet stored; nil when
	// no Worker reconciler runs beside this one.
	exits *exitNotices
	// looks are the interval reconciler's looks not yet stored; nil when
	// none runs beside this one.
	looks *intervalLooks
}

// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=agents.tether.dev,resources=workers,verbs=get;list;watch
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks/status,verbs=update
// +kubebuilder:rbac:groups=agents.tether.dev,resources=checkpoints,verbs=list;watch
// The receipt key, by its name only: the operator may read no other Secret.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get,resourceNames=tether-receipt-key

// Reconcile brings one Hook's status, conditions and recovery file up to
// date and asks to be called again when its heartbeat falls due.
func (r *HookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hook := &v1.Hook{}
	if err := r.Client.Get(ctx, req.NamespacedName, hook); err != nil {
		if apierrors.IsNotFound(err) {
			r.receipts.forget(req.NamespacedName)
			r.looks.forget(req.NamespacedName)
			return ctrl.Result{}, r.removeRecoveryFile(req.Namespace, req.Name)
		}
		return ctrl.Result{}, err
	}
	if !hook.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	hook, loss, err := r.checkAssignee(ctx, hook)
	if err != nil || hook == nil {
		return ctrl.Result{}, err
	}
	s := &hookScope{hook: hook, orig: hook.Status.DeepCopy(), now: r.now(), eff: r.Config.Effective(&hook.Spec)}
	phases := []func(context.Context, *hookScope) error{
		r.reconcileInitialize,
		r.reconcileCheckpoints,
		r.reconcileAssignee(loss),
		r.reconcileStale,
		r.reconcileHistory,
		r.reconcileConditions,
		r.reconcileReceipts,
	}
	for _, phase := range phases {
		if err := phase(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	if r.RecoveryDir != "" {
		hook.Status.RecoveryFile = r.recoveryFileStatus(hook)
	}
	hook.Status.ObservedGeneration = hook.Generation
	// The file renders only what the state machine keeps. When this
	// reconcile made no transition, that is what is stored already, so the
	// file is written first, sparing the agent the status write's latency;
	// a transition is written to the file only once it is stored.
	if !s.transitioned {
		if err := r.writeRecoveryFile(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !equality.Semantic.DeepEqual(s.orig, &hook.Status) {
		if err := r.Client.Status().Update(ctx, hook); err != nil {
			if apierrors.IsConflict(err) {
				// Someone, usually an agent verb, wrote first; the watch
				// event of that write brings the Hook back here.
				log.FromContext(ctx).V(1).Info("hook changed while reconciling; waiting for its new version")
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, fmt.Errorf("updating status of hook %s: %w", req.NamespacedName, err)
		}
		hookwrite.Emit(r.Events, hook, s.events...)
		if !s.staleDue.IsZero() {
			metrics.StaleDetected(s.staleDue, r.now())
		}
	}
	if s.look != nil {
		r.looks.stored(req.NamespacedName, *s.look)
	}
	if loss != nil {
		if err := r.freeAssignee(ctx, hook, loss); err != nil {
			return ctrl.Result{}, err
		}
	}
	if s.transitioned {
		if err := r.writeRecoveryFile(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	if s.requeueAt.IsZero() {
		return ctrl.Result{}, nil
	}
	log.FromContext(ctx).V(1).Info("heartbeat check scheduled", "at", s.requeueAt)
	return ctrl.Result{RequeueAfter: s.requeueAt.Sub(r.now())}, nil
}

// writeRecoveryFile writes the recovery file of the scope's Hook.
func (r *HookReconciler) writeRecoveryFile(ctx context.Context, s *hookScope) error {
	if r.RecoveryDir == "" {
		return nil
	}
	hook := s.hook
	// The last checkpoint and the timeline come from the Hook's Checkpoints.
	cps, err := recoveryfile.ListCheckpoints(ctx, r.Client, hook)
	if err != nil {
		return fmt.Errorf("listing the checkpoints of hook %s/%s: %w", hook.Namespace, hook.Name, err)
	}
	_, err = recoveryfile.Write(r.RecoveryDir, hook, recoveryfile.Options{Evidence: r.evidence(s), Checkpoints: cps})
	return err
}

// evidence is r.Evidence, answered from the scope's report when the Hook
// it is asked about still holds the evidence that report verified: the
// condition and the recovery file of one reconcile then share one
// verification (a key read, a key derivation and every signature check).
func (r *HookReconciler) evidence(s *hookScope) recoveryfile.Evidence {
	if r.Evidence == nil || s.report == nil {
		return r.Evidence
	}
	return func(h *v1.Hook) *receipts.Report {
		if h == s.hook && evidenceDigest(h) == s.reportDigest {
			return s.report
		}
		return r.Evidence(h)
	}
}

func (r *HookReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *HookReconciler) removeRecoveryFile(namespace, name string) error {
	if r.RecoveryDir == "" {
		return nil
	}
	if err := os.Remove(recoveryfile.Path(r.RecoveryDir, namespace, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the recovery file of deleted hook %s/%s: %w", namespace, name, err)
	}
	return nil
}

// SetupWithManager registers the reconciler for Hooks.
func (r *HookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.setup(mgr, false)
}

func (r *HookReconciler) setup(mgr ctrl.Manager, skipNameValidation bool) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1.Hook{}, HookAssigneeField, indexHookAssignee); err != nil {
		return fmt.Errorf("indexing hooks by %s: %w", HookAssigneeField, err)
	}
	if err := indexCheckpointsByHook(mgr); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1.Hook{}).
		Named("hook").
		Watches(&v1.Worker{}, handler.EnqueueRequestsFromMapFunc(r.hooksOfWorker)).
		// The recovery file lists the Hook's checkpoints: one created, pruned
		// or deleted without a Hook write must still rewrite it.
		Owns(&v1.Checkpoint{}).
		// Hooks that fall due together are written together: the store's
		// group commit then shares one journal fsync among them, where one
		// reconcile at a time would queue every stale transition behind
		// the others' writes.
		WithOptions(controller.Options{SkipNameValidation: &skipNameValidation, MaxConcurrentReconciles: hookReconcilers})
	if r.exits != nil {
		b = b.WatchesRawSource(source.Channel(r.exits.hooks, &handler.EnqueueRequestForObject{}))
	}
	if r.looks != nil {
		b = b.WatchesRawSource(source.Channel(r.looks.hooks, &handler.EnqueueRequestForObject{}))
	}
	return complete(b, r)
}

// hookReconcilers is how many Hooks the Hook reconciler works on at once.
// Hooks falling due together beyond it wait for a reconcile to end, and a
// stale transition's ends with the recovery file's own fsyncs: 12 put 8 of
// 20 Hooks due together a whole second wave behind the first.
const hookReconcilers = 32

// recoveryFileStatus is the path status.recoveryFile records for hook:
// relative to RecoveryFileBase when it is set and holds the file.
func (r *HookReconciler) recoveryFileStatus(hook *v1.Hook) string {
	p := recoveryfile.Path(r.RecoveryDir, hook.Namespace, hook.Name)
	if r.RecoveryFileBase == "" {
		return p
	}
	if rel, err := filepath.Rel(r.RecoveryFileBase, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}

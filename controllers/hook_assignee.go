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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// HookAssigneeField indexes Hooks in the cache by spec.assignee, so that a
// change of a Worker finds the Hooks it holds.
const HookAssigneeField = "spec.assignee"

// EventAssigneeLost is the Warning recorded on a Hook whose Worker died.
const EventAssigneeLost = "AssigneeLost"

// indexHookAssignee is the HookAssigneeField index function.
func indexHookAssignee(o client.Object) []string {
	h, ok := o.(*v1.Hook)
	if !ok || h.Spec.Assignee == "" {
		return nil
	}
	return []string{h.Spec.Assignee}
}

// assigneeLoss is why a Hook's assignee no longer holds it.
type assigneeLoss struct {
	worker, why string
}

// checkAssignee returns the Hook to reconcile and, if its assignee lost it,
// why. The cached Hook and Worker only say whether to look closer: a loss
// is confirmed on both objects read around the cache, so that a Hook
// reassigned meanwhile is left alone, and the Hook returned is then the
// stored one, whose resourceVersion guards the writes. A Hook that no
// longer exists gives nil.
func (r *HookReconciler) checkAssignee(ctx context.Context, cached *v1.Hook) (*v1.Hook, *assigneeLoss, error) {
	if cached.Spec.Assignee == "" {
		return cached, nil, nil
	}
	wkey := types.NamespacedName{Namespace: cached.Namespace, Name: cached.Spec.Assignee}
	// A crash noticed before it is stored is judged on the cached Hook
	// without reading around the cache: the notice lists the generation
	// the dead process held, read after its exit, and the writes that free
	// the Hook carry the cached resourceVersion, so a claim made since makes
	// them conflict and the Hook is judged again on its new version.
	if noticed := r.exits.lookup(wkey); noticed != nil {
		if lost, why := workerfsm.AssigneeLost(cached, noticed); lost {
			return cached, &assigneeLoss{worker: noticed.Name, why: why}, nil
		}
	}
	w := &v1.Worker{}
	if err := r.Client.Get(ctx, wkey, w); err != nil {
		return cached, nil, client.IgnoreNotFound(err)
	}
	if lost, _ := workerfsm.AssigneeLost(cached, w); !lost {
		return cached, nil, nil
	}
	live := &v1.Hook{}
	if err := r.reader().Get(ctx, client.ObjectKeyFromObject(cached), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	if live.Spec.Assignee != cached.Spec.Assignee {
		return live, nil, nil
	}
	lw := &v1.Worker{}
	if err := r.reader().Get(ctx, wkey, lw); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, nil, err
		}
		// Gone since the cache saw it dead: it was deleted.
		return live, &assigneeLoss{worker: wkey.Name, why: "the worker was deleted"}, nil
	}
	lost, why := workerfsm.AssigneeLost(live, lw)
	if !lost {
		return live, nil, nil
	}
	return live, &assigneeLoss{worker: wkey.Name, why: why}, nil
}

// reconcileAssignee moves a Hook whose assignee was lost to recovering,
// with crash type assignee_lost, through the state machine. Only a Hook at
// work can be interrupted: one already recovering is unchanged, and one
// awaiting a person or finished (completed, failed, abandoned) keeps its
// state, with no transition attempted, since the end of its Worker is not
// a crash of its task. The assignee itself is cleared by freeAssignee once
// this status is stored, whatever the state.
func (r *HookReconciler) reconcileAssignee(loss *assigneeLoss) func(context.Context, *hookScope) error {
	return func(_ context.Context, s *hookScope) error {
		if loss == nil || s.invalid != nil || !hookfsm.Allowed(s.hook.Status.State.OrInitializing(), hookfsm.Interrupt) {
			return nil
		}
		before := len(s.events)
		_, err := s.apply(hookfsm.Input{
			Event:   hookfsm.Interrupt,
			Message: fmt.Sprintf("worker %s died: %s", loss.worker, loss.why),
			Crash:   &hookfsm.Crash{Type: v1.CrashAssigneeLost},
		})
		// freeAssignee's AssigneeLost Event reports this transition, with
		// the assignee it cleared, so the transition's own is not recorded.
		s.events = s.events[:before]
		return err
	}
}

// EventAssigneeReleased is the Normal Event recorded on a finished Hook
// (completed, failed, abandoned) whose assignee was released when its
// Worker ended: the end of the Worker is no crash of a finished task.
const EventAssigneeReleased = "AssigneeReleased"

// freeAssignee clears the spec.assignee of a Hook whose assignee was lost,
// once its status is stored, and says so in an Event. The Hook's own
// reconciler is its one writer besides claims; the write carries the
// resourceVersion of the status just written, so a claim made meanwhile
// wins and the next reconcile judges the new assignee.
func (r *HookReconciler) freeAssignee(ctx context.Context, hook *v1.Hook, loss *assigneeLoss) error {
	hook.Spec.Assignee = ""
	if err := r.Client.Update(ctx, hook); err != nil {
		hook.Spec.Assignee = loss.worker
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			log.FromContext(ctx).V(1).Info("hook changed while freeing it; waiting for its new version")
			return nil
		}
		return fmt.Errorf("clearing the assignee of hook %s: %w", hook.Name, err)
	}
	st := hook.Status.State
	if st.IsTerminal() {
		r.Events.Eventf(hook, nil, corev1.EventTypeNormal, EventAssigneeReleased, "ClearAssignee",
			"worker %s ended (%s); assignee released; the hook stays %s: its task had finished", loss.worker, loss.why, st)
		return nil
	}
	metrics.AssigneeCleared.Inc()
	state := "it stays " + string(st)
	switch st {
	case v1.HookRecovering:
		state = fmt.Sprintf("it is recovering; the next worker claims it (`tether claim %s --worker W`) and reads `tether recover %s`", hook.Name, hook.Name)
	case v1.HookAwaitingHuman:
		state = fmt.Sprintf("it stays awaiting_human; after `tether resume %s` a worker claims it (`tether claim %s --worker W`)", hook.Name, hook.Name)
	}
	r.Events.Eventf(hook, nil, corev1.EventTypeWarning, EventAssigneeLost, "ClearAssignee",
		"worker %s died (%s); assignee cleared; %s", loss.worker, loss.why, state)
	return nil
}

// workerMayFree tells whether w's state can cost a Hook its assignee, so
// that other Worker changes (heartbeats, a healthy start) reconcile no Hook.
func workerMayFree(w *v1.Worker) bool {
	if !w.DeletionTimestamp.IsZero() || w.Status.Phase.Dead() {
		return true
	}
	n := len(w.Status.Crashes)
	return n > 0 && len(w.Status.Crashes[n-1].Held) > 0
}

// hooksOfWorker maps a Worker to the Hooks it holds, found through the
// HookAssigneeField index of the cache, when its state may free them. A
// Hook claimed too recently to be in the cache is reconciled by its own
// change, which finds this Worker's new state in the cache.
func (r *HookReconciler) hooksOfWorker(ctx context.Context, o client.Object) []reconcile.Request {
	w, ok := o.(*v1.Worker)
	if !ok || !workerMayFree(w) {
		return nil
	}
	hooks := &v1.HookList{}
	if err := r.Client.List(ctx, hooks, client.InNamespace(w.Namespace), client.MatchingFields{HookAssigneeField: w.Name}); err != nil {
		log.FromContext(ctx).Error(err, "listing the hooks of a worker", "worker", client.ObjectKeyFromObject(w))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(hooks.Items))
	for i := range hooks.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&hooks.Items[i])})
	}
	return reqs
}

func (r *HookReconciler) reader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

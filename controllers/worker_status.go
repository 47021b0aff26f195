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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// ReasonInvalidTransition is the Ready reason, and the Warning Event's, of
// a Worker whose phase admits an event the reconciler observed
// (workerfsm.TransitionError): only a hand edit of status.phase brings one.
const ReasonInvalidTransition = "InvalidTransition"

// transitionRefused turns err, a *workerfsm.TransitionError, into the Ready
// condition that says so, and records a Warning Event the first time the
// Worker's Ready condition says it. No retry changes such a pair, so it is
// never a reconcile error; ok is false for any other error.
func (r *WorkerReconciler) transitionRefused(w *v1.Worker, err error) (c metav1.Condition, ok bool) {
	var te *workerfsm.TransitionError
	if !errors.As(err, &te) {
		return metav1.Condition{}, false
	}
	msg := fmt.Sprintf("%v: status.phase was edited by hand; the phase is kept. `tether worker restart %s -n %s` starts the worker again",
		te, w.Name, w.Namespace)
	if readyReason(w) != ReasonInvalidTransition {
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, ReasonInvalidTransition, "Reconcile", "%s", msg)
	}
	return condition(v1.ConditionReady, metav1.ConditionFalse, ReasonInvalidTransition, msg), true
}

// refuseTransition handles err from a workerfsm transition of w that left
// w's phase as it was: a *workerfsm.TransitionError is written as the
// Ready condition (transitionRefused), any other error returned.
func (r *WorkerReconciler) refuseTransition(ctx context.Context, w *v1.Worker, err error) error {
	c, ok := r.transitionRefused(w, err)
	if !ok {
		return err
	}
	return r.writeStatusIfChanged(ctx, w, c)
}

func condition(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

// conditionsFor derives the standard conditions from the phase.
func conditionsFor(w *v1.Worker, now time.Time) []metav1.Condition {
	alive := condition(v1.ConditionProcessAlive, metav1.ConditionFalse, v1.ReasonProcessExited, "no process is running")
	ready := condition(v1.ConditionReady, metav1.ConditionFalse, string(w.Status.Phase), "the worker is "+string(w.Status.Phase))
	if w.Status.Phase == v1.WorkerRunning {
		msg := fmt.Sprintf("pid %d on %s", w.Status.PID, w.Status.Host)
		if w.Status.PodName != "" {
			msg = fmt.Sprintf("pod %s on node %s", w.Status.PodName, w.Status.NodeName)
		}
		alive = condition(v1.ConditionProcessAlive, metav1.ConditionTrue, v1.ReasonProcessRunning, msg)
		ready = condition(v1.ConditionReady, metav1.ConditionTrue, v1.ReasonProcessRunning, msg)
	}
	loop := condition(v1.ConditionCrashLoop, metav1.ConditionFalse, v1.ReasonWithinBudget,
		workerfsm.Budget(&w.Spec, &w.Status, now))
	if w.Status.Phase == v1.WorkerCrashLoop {
		loop = condition(v1.ConditionCrashLoop, metav1.ConditionTrue, v1.ReasonRestartsExhausted,
			fmt.Sprintf("%s; restart by hand with `tether worker restart %s -n %s`", workerfsm.Budget(&w.Spec, &w.Status, now), w.Name, w.Namespace))
	}
	if w.Status.Phase == "" || w.Status.Phase == v1.WorkerPending {
		if w.Spec.Template != nil || len(w.Spec.Command) == 0 && w.Spec.Adopt == nil {
			return []metav1.Condition{ready}
		}
	}
	return []metav1.Condition{ready, alive, loop}
}

func (r *WorkerReconciler) applyConditions(w *v1.Worker, extra []metav1.Condition) {
	for _, c := range append(conditionsFor(w, r.now()), extra...) {
		c.ObservedGeneration = w.Generation
		meta.SetStatusCondition(&w.Status.Conditions, c)
	}
	w.Status.ObservedGeneration = w.Generation
}

// writeStatus writes w's status with its conditions, guarded by its resourceVersion.
func (r *WorkerReconciler) writeStatus(ctx context.Context, w *v1.Worker, extra ...metav1.Condition) error {
	r.applyConditions(w, extra)
	if err := r.client.Status().Update(ctx, w); err != nil {
		return fmt.Errorf("writing the status of worker %s: %w", w.Name, err)
	}
	return nil
}

// writeStatusIfChanged writes the status only if the phase or a condition changed.
func (r *WorkerReconciler) writeStatusIfChanged(ctx context.Context, w *v1.Worker, extra ...metav1.Condition) error {
	before := w.Status.DeepCopy()
	r.applyConditions(w, extra)
	if equalStatus(before, &w.Status) {
		return nil
	}
	return r.writeStatus(ctx, w, extra...)
}

func equalStatus(a, b *v1.WorkerStatus) bool {
	if a.Phase != b.Phase || a.ObservedGeneration != b.ObservedGeneration || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for _, c := range b.Conditions {
		o := meta.FindStatusCondition(a.Conditions, c.Type)
		if o == nil || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message || o.ObservedGeneration != c.ObservedGeneration {
			return false
		}
	}
	return true
}

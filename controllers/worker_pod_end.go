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
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// handlePodEnd records the end of the Worker's Pod and restarts it within
// the crash window. It only does the I/O: the decision, the crash record
// and the phase are workerfsm's, as for a process's exit; only detection
// and the successor differ.
func (r *WorkerReconciler) handlePodEnd(ctx context.Context, w *v1.Worker, end podEnd) error {
	fend, now := end.fsm(), r.now()
	action, planErr := workerfsm.Plan(&w.Spec, &w.Status, fend, now)
	held, err := r.heldHooks(ctx, w)
	if err != nil {
		return err
	}
	fend.Record.Hook, fend.Record.Held = heldNames(held), held
	var next *workerfsm.Successor
	var startErr error
	var createdAt time.Time
	if planErr == nil && action == workerfsm.ActionRestart {
		// The next Pod's name counts the restart it is for.
		w.Status.Restarts++
		var started string
		started, startErr = r.createPod(ctx, w)
		w.Status.Restarts--
		if startErr == nil {
			next = &workerfsm.Successor{Pod: started}
		}
		createdAt = r.now()
	}
	out, exitErr := workerfsm.Exit(&w.Spec, &w.Status, fend, next, now)
	w.Status = *out.Status
	var extra []metav1.Condition
	if exitErr != nil {
		refused, ok := r.transitionRefused(w, exitErr)
		if !ok {
			return exitErr
		}
		extra = append(extra, refused)
	} else if c, ok := podStartCondition(next, startErr); ok {
		extra = append(extra, c)
	}
	if err := r.writeStatus(ctx, w, extra...); err != nil {
		return err
	}
	// Counted once the status holds the crash, as for processes: a failed
	// write is retried and must not count twice.
	if !fend.Clean {
		metrics.WorkerCrashed(end.reason)
	}
	r.cleanupPods(ctx, w, end.pod)
	if exitErr != nil {
		return nil
	}
	var restartedAs string
	if next != nil {
		metrics.WorkerRestarted(end.time, createdAt)
		restartedAs = "pod " + next.Pod
	}
	logr.FromContextOrDiscard(ctx).Info("worker pod ended", "worker", w.Name, "end", end.String(), "phase", w.Status.Phase, "hooks", out.Record.Hook)
	r.emitEnd(w, end, out.Record.Hook, out.Action, fend.Clean, restartedAs, startErr)
	r.recordRefusedStart(w, startErr)
	return nil
}

// podStartCondition is the Ready condition after a crash whose successor
// is next, or whose start failed with startErr; false when neither.
func podStartCondition(next *workerfsm.Successor, startErr error) (metav1.Condition, bool) {
	var invalid *invalidTemplateError
	var privileged *privilegedTemplateError
	switch {
	case next != nil:
		return condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodPending, "pod "+next.Pod+" created"), true
	case errors.As(startErr, &invalid):
		return invalidTemplateCondition(invalid), true
	case errors.As(startErr, &privileged):
		return privilegedTemplateCondition(privileged), true
	case startErr != nil:
		return condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodRejected, startErr.Error()), true
	}
	return metav1.Condition{}, false
}

// recordRefusedStart records the Event of a restart whose Pod the template
// check refused.
func (r *WorkerReconciler) recordRefusedStart(w *v1.Worker, startErr error) {
	var invalid *invalidTemplateError
	var privileged *privilegedTemplateError
	switch {
	case errors.As(startErr, &invalid):
		r.recordInvalidTemplate(w, invalid)
	case errors.As(startErr, &privileged):
		r.recordPrivilegedTemplate(w, privileged)
	}
}

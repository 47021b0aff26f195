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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// refusedReady keeps the Ready condition of a Worker whose Pod was
// refused (InvalidTemplate, PodRejected, PrivilegedTemplate) while it stays Crashed with
// no Pod: the condition derived from the phase alone would replace the
// field the server named with "the worker is Crashed".
func refusedReady(w *v1.Worker) []metav1.Condition {
	ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
	if w.Status.Phase != v1.WorkerCrashed || ready == nil || (ready.Reason != ReasonInvalidTemplate && ready.Reason != ReasonPodRejected && ready.Reason != ReasonPrivilegedTemplate) {
		return nil
	}
	return []metav1.Condition{condition(ready.Type, ready.Status, ready.Reason, ready.Message)}
}

// specChangedSinceRefusal tells whether the spec of a Worker whose Pod the
// API server refused has changed since: the refusal's condition was
// written for an older generation.
func specChangedSinceRefusal(w *v1.Worker) bool {
	refused := refusedReady(w)
	return len(refused) == 1 && meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady).ObservedGeneration < w.Generation
}

// podRejected records a start whose Pod the API server or the template
// check refused: the Worker is Crashed with a Ready condition naming the
// refusal, and a Warning Event. A refusal that a retry may lift (a
// timeout, a conflict) is returned.
func (r *WorkerReconciler) podRejected(ctx context.Context, w *v1.Worker, cause error) error {
	var invalid *invalidTemplateError
	var privileged *privilegedTemplateError
	var ready metav1.Condition
	var record func()
	switch {
	case errors.As(cause, &invalid):
		ready, record = invalidTemplateCondition(invalid), func() { r.recordInvalidTemplate(w, invalid) }
	case errors.As(cause, &privileged):
		ready, record = privilegedTemplateCondition(privileged), func() { r.recordPrivilegedTemplate(w, privileged) }
	case apierrors.IsInvalid(cause) || apierrors.IsForbidden(cause) || apierrors.IsBadRequest(cause):
		msg := "the API server refused the Pod from spec.template: " + cause.Error()
		ready = condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodRejected, msg)
		record = func() {
			r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventStartFailed, "Start", "%s; fix spec.template", msg)
		}
	default:
		return cause
	}
	if err := workerfsm.Apply(&w.Status, workerfsm.StartFailed); err != nil {
		return r.refuseTransition(ctx, w, err)
	}
	if err := r.writeStatus(ctx, w, ready); err != nil {
		return err
	}
	record()
	return nil
}

func invalidTemplateCondition(invalid *invalidTemplateError) metav1.Condition {
	return condition(v1.ConditionReady, metav1.ConditionFalse, ReasonInvalidTemplate, invalid.Error()+"; no Pod was created")
}

func privilegedTemplateCondition(privileged *privilegedTemplateError) metav1.Condition {
	return condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPrivilegedTemplate, privileged.Error())
}

func (r *WorkerReconciler) recordPrivilegedTemplate(w *v1.Worker, privileged *privilegedTemplateError) {
	r.recorder.Eventf(w, nil, corev1.EventTypeWarning, ReasonPrivilegedTemplate, "Start", "%s", privileged.Error())
}

func (r *WorkerReconciler) recordInvalidTemplate(w *v1.Worker, invalid *invalidTemplateError) {
	r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventInvalidTemplate, "Start",
		"%s; no Pod was created: fix spec.template, and the next Pod is tried at once", invalid.Error())
}

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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// WorkerLabel labels the Pods of a Worker with its name; the operator's
// cache watches only Pods that carry it.
const WorkerLabel = "agents.tether.dev/worker"

// DefaultPodPendingTimeout is how long a Worker's Pod may stay Pending
// (unschedulable, pulling or failing to pull its image) before the Worker
// reports it stuck. A stuck Pod is not a crash: it never ran.
const DefaultPodPendingTimeout = 5 * time.Minute

// Reasons of crash records and conditions of Workers that run as Pods.
const (
	// ReasonOOMKilled: the agent container was killed for exceeding its memory limit.
	ReasonOOMKilled = "OOMKilled"
	// ReasonEvicted: the Pod was evicted: by the kubelet (node pressure,
	// node shutdown), the Eviction API (a drain) or the taint manager.
	ReasonEvicted = "Evicted"
	// ReasonPreempted: the scheduler preempted the Pod for a higher-priority one.
	ReasonPreempted = "Preempted"
	// ReasonPodDeleted: the Pod was deleted by someone other than tether.
	ReasonPodDeleted = "PodDeleted"
	// ReasonNodeLost: the Pod's node stopped reporting.
	ReasonNodeLost = "NodeLost"
	// ReasonPodFailed: the Pod failed with no container termination recorded.
	ReasonPodFailed = "PodFailed"
	// ReasonPodPending: the Pod has not started yet.
	ReasonPodPending = "PodPending"
	// ReasonPodStuck: the Pod stayed Pending past the pending timeout.
	ReasonPodStuck = "PodStuck"
	// ReasonPodRejected: the API server refused to create the Pod.
	ReasonPodRejected = "PodRejected"
	// ReasonInvalidTemplate: the server-side dry-run create of the Pod
	// from spec.template was refused as invalid; no Pod was created.
	ReasonInvalidTemplate = "InvalidTemplate"
	// ReasonPodsUnsupported: the backend runs no Pods (the local store).
	ReasonPodsUnsupported = "PodTemplateUnsupported"
)

// EventPodStuck is the Warning recorded when a Worker's Pod stays Pending
// past the pending timeout.
const EventPodStuck = "PodStuck"

// reconcilePod drives a Worker with spec.template: one Pod at a time,
// created from the template, whose end is judged like a process's exit by
// the same crash window and recorded in the same crash records.
func (r *WorkerReconciler) reconcilePod(ctx context.Context, w *v1.Worker) (ctrl.Result, error) {
	if !r.pods {
		if err := workerfsm.Apply(&w.Status, workerfsm.Unsupported); err != nil {
			return ctrl.Result{}, r.refuseTransition(ctx, w, err)
		}
		return ctrl.Result{}, r.writeStatusIfChanged(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodsUnsupported,
			"this backend runs no Pods (the local store runs processes): run it with `tether run --cluster`, or use spec.command"))
	}
	again, err := r.deleteStrayPods(ctx, w)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.reconcileCurrentPod(ctx, w)
	if again > 0 && (res.RequeueAfter == 0 || again < res.RequeueAfter) {
		res.RequeueAfter = again
	}
	return res, err
}

// reconcileCurrentPod follows the Worker's current Pod: it starts one when
// there is none, records its end, and reports it running or pending.
func (r *WorkerReconciler) reconcileCurrentPod(ctx context.Context, w *v1.Worker) (ctrl.Result, error) {
	if w.Status.PodName == "" {
		switch w.Status.Phase {
		case "", v1.WorkerPending, v1.WorkerRestarting:
			return ctrl.Result{}, r.startPod(ctx, w, w.Status.Phase == v1.WorkerRestarting)
		}
		if specChangedSinceRefusal(w) {
			// As a Deployment rolls out a fixed template: an edited spec
			// gets its Pod without waiting for `tether worker restart`.
			if err := workerfsm.Apply(&w.Status, workerfsm.RestartRequested); err != nil {
				return ctrl.Result{}, r.refuseTransition(ctx, w, err)
			}
			return ctrl.Result{}, r.startPod(ctx, w, true)
		}
		return ctrl.Result{}, r.writeStatusIfChanged(ctx, w, refusedReady(w)...)
	}
	pod := &corev1.Pod{}
	key := client.ObjectKey{Namespace: w.Namespace, Name: w.Status.PodName}
	err := r.client.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) {
		// The cache may not have seen yet the Pod this reconciler has just
		// created: only the API server's NotFound makes it gone, or the
		// Pod would count as a crash and a second one would start beside it.
		err = r.reader.Get(ctx, key, pod)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	gone := apierrors.IsNotFound(err)
	if w.Status.Phase == v1.WorkerRestarting {
		// `tether worker restart`: the old Pod goes first, then a new one.
		if !gone {
			return ctrl.Result{RequeueAfter: r.nodeLostTimeout}, r.deletePod(ctx, w, pod)
		}
		w.Status.PodName, w.Status.NodeName = "", ""
		return ctrl.Result{}, r.startPod(ctx, w, true)
	}
	if gone {
		return ctrl.Result{}, r.handlePodEnd(ctx, w, podEnd{pod: w.Status.PodName, reason: ReasonPodDeleted, time: r.now()})
	}
	end, recheck := podEnded(pod, r.now(), r.nodeLostTimeout)
	if end != nil {
		// The end is recorded first: a Pod tether deleted before its write
		// landed would be judged deleted by someone else next time.
		if err := r.handlePodEnd(ctx, w, *end); err != nil {
			return ctrl.Result{}, err
		}
		switch {
		case end.reason == ReasonNodeLost:
			// No kubelet will confirm the end: the Pod goes at once, so the
			// Worker counts only the next one. A container on a partitioned
			// node may still run; see docs/operator.md.
			if err := r.client.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
		case pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
			// The agent ended and a sidecar keeps the Pod running.
			if err := r.deletePod(ctx, w, pod); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, nil
	}
	res := ctrl.Result{}
	if !recheck.IsZero() {
		res.RequeueAfter = max(recheck.Sub(r.now()), time.Second)
	}
	w.Status.NodeName = pod.Spec.NodeName
	if podRunning(pod) {
		if w.Status.Phase != v1.WorkerRunning {
			t := metav1.NewTime(r.now())
			for _, c := range pod.Status.ContainerStatuses {
				if c.State.Running != nil {
					t = c.State.Running.StartedAt
					break
				}
			}
			w.Status.StartedAt = &t
			if err := workerfsm.Apply(&w.Status, workerfsm.Started); err != nil {
				return res, r.refuseTransition(ctx, w, err)
			}
			if err := r.writeStatus(ctx, w); err != nil {
				return ctrl.Result{}, err
			}
			r.recorder.Eventf(w, pod, corev1.EventTypeNormal, EventWorkerStarted, "Run", "pod %s running on node %s", pod.Name, pod.Spec.NodeName)
			return res, nil
		}
		return res, r.writeStatusIfChanged(ctx, w)
	}
	pending, err := r.reconcilePending(ctx, w, pod)
	if res.RequeueAfter > 0 && (pending.RequeueAfter == 0 || res.RequeueAfter < pending.RequeueAfter) {
		pending.RequeueAfter = res.RequeueAfter
	}
	return pending, err
}

// reconcilePending reports a Pod that has not started: pending until the
// pending timeout, stuck after it, once as an Event.
func (r *WorkerReconciler) reconcilePending(ctx context.Context, w *v1.Worker, pod *corev1.Pod) (ctrl.Result, error) {
	now := r.now()
	due := pod.CreationTimestamp.Add(r.podPendingTimeout)
	cause := pendingCause(pod)
	if now.Before(due) {
		msg := fmt.Sprintf("pod %s is pending", pod.Name)
		if cause != "" {
			msg += ": " + cause
		}
		return ctrl.Result{RequeueAfter: due.Sub(now)}, r.writeStatusIfChanged(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodPending, msg))
	}
	if cause == "" {
		cause = "it has not started"
	}
	msg := fmt.Sprintf("pod %s has been pending for more than %s: %s", pod.Name, r.podPendingTimeout, cause)
	before := readyReason(w)
	if err := r.writeStatusIfChanged(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodStuck, msg)); err != nil {
		return ctrl.Result{}, err
	}
	if before != ReasonPodStuck {
		r.recorder.Eventf(w, pod, corev1.EventTypeWarning, EventPodStuck, "Schedule", "%s; fix the template or the cluster, then `tether worker restart %s -n %s`", msg, w.Name, w.Namespace)
	}
	return ctrl.Result{}, nil
}

func readyReason(w *v1.Worker) string {
	for _, c := range w.Status.Conditions {
		if c.Type == v1.ConditionReady {
			return c.Reason
		}
	}
	return ""
}

// startPod creates the Worker's next Pod and records it. A Pod of that
// name that exists already is this Worker's from a start whose status
// write was lost: it is taken as is, so a retry never runs two agents.
func (r *WorkerReconciler) startPod(ctx context.Context, w *v1.Worker, manual bool) error {
	if manual {
		w.Status.Restarts++
	}
	name, err := r.createPod(ctx, w)
	if err != nil {
		if manual {
			w.Status.Restarts--
		}
		return r.podRejected(ctx, w, err)
	}
	w.Status.PodName, w.Status.PID, w.Status.Host = name, 0, ""
	w.Status.StartedAt = nil
	if err := workerfsm.Apply(&w.Status, workerfsm.PodCreated); err != nil {
		return r.refuseTransition(ctx, w, err)
	}
	if err := r.writeStatus(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodPending, "pod "+name+" created")); err != nil {
		return err
	}
	if manual {
		metrics.WorkerRestarts.Inc()
	}
	return nil
}

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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// deleteStrayPods deletes the Worker's Pods that are neither its current
// Pod nor ended. Each is one whose end was recorded by an operator that
// stopped before it deleted it: a lost node's Pod, which goes with grace
// 0, or a Pod a sidecar keeps running after the agent ended, which gets
// the template's grace period. The Worker is read again around the cache
// first, so a cache behind the last status write never takes the current
// Pod for a stray, and a Pod the next start would adopt is left to it.
// It returns when to look again at a stray still terminating, or 0.
func (r *WorkerReconciler) deleteStrayPods(ctx context.Context, w *v1.Worker) (time.Duration, error) {
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(w.Namespace), client.MatchingLabels{WorkerLabel: w.Name}); err != nil {
		return 0, err
	}
	var strays []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Name != w.Status.PodName && metav1.IsControlledBy(p, w) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			strays = append(strays, p)
		}
	}
	if len(strays) == 0 {
		return 0, nil
	}
	live := &v1.Worker{}
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(w), live); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	now := r.now()
	var again time.Duration
	for _, p := range strays {
		if p.Name == live.Status.PodName || live.UID != w.UID || mayBeAdopted(live, p.Name) {
			continue
		}
		if !p.DeletionTimestamp.IsZero() {
			if due := p.DeletionTimestamp.Add(r.nodeLostTimeout); now.Before(due) {
				if wait := due.Sub(now); again == 0 || wait < again {
					again = wait
				}
				continue
			}
			if err := r.deletePod(ctx, w, p); err != nil {
				return 0, err
			}
			continue
		}
		why := "it is still running"
		if lost, msg, _ := nodeLost(p, now, r.nodeLostTimeout); lost {
			why = msg
			if err := r.client.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
				return 0, err
			}
		} else if err := r.deletePod(ctx, w, p); err != nil {
			return 0, err
		}
		current := "it has none"
		if live.Status.PodName != "" {
			current = "that is " + live.Status.PodName
		}
		r.recorder.Eventf(w, p, corev1.EventTypeNormal, EventStrayPodDeleted, "Delete",
			"deleted pod %s: it is not the worker's current pod (%s) and has not ended: %s", p.Name, current, why)
	}
	return again, nil
}

// mayBeAdopted tells whether a Pod named name is one the Worker's next
// start takes as its own: a start whose status write was lost left it
// behind, and createPod adopts a Pod of the name it would create.
func mayBeAdopted(w *v1.Worker, name string) bool {
	first := w.Status.PodName == "" && (w.Status.Phase == "" || w.Status.Phase == v1.WorkerPending) &&
		name == podName(w, w.Status.Restarts)
	return name == podName(w, w.Status.Restarts+1) || first
}

// cleanupPods deletes the Worker's ended Pods but the one that just ended,
// kept for `tether logs --previous`-style inspection until the next end.
func (r *WorkerReconciler) cleanupPods(ctx context.Context, w *v1.Worker, keep string) {
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(w.Namespace), client.MatchingLabels{WorkerLabel: w.Name}); err != nil {
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Name == keep || p.Name == w.Status.PodName || !metav1.IsControlledBy(p, w) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			_ = r.client.Delete(ctx, p)
		}
	}
}

// deletePod deletes the Worker's Pod with the template's grace period; the
// Pod watch brings the Worker back once it is gone. A Pod still
// terminating the node-lost timeout after its deletionTimestamp has no
// kubelet to confirm it: it is deleted with grace 0.
func (r *WorkerReconciler) deletePod(ctx context.Context, w *v1.Worker, pod *corev1.Pod) error {
	if !pod.DeletionTimestamp.IsZero() {
		if r.now().Before(pod.DeletionTimestamp.Add(r.nodeLostTimeout)) {
			return nil
		}
		if err := r.client.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
	var opts []client.DeleteOption
	if g := w.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		opts = append(opts, client.GracePeriodSeconds(*g))
	}
	if err := r.client.Delete(ctx, pod, opts...); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// deleteAllPods deletes every Pod of a Worker being deleted and tells
// whether any is left.
func (r *WorkerReconciler) deleteAllPods(ctx context.Context, w *v1.Worker) (bool, error) {
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(w.Namespace), client.MatchingLabels{WorkerLabel: w.Name}); err != nil {
		return false, err
	}
	left := false
	for i := range pods.Items {
		p := &pods.Items[i]
		if !metav1.IsControlledBy(p, w) {
			continue
		}
		left = true
		if err := r.deletePod(ctx, w, p); err != nil {
			return true, err
		}
	}
	return left, nil
}

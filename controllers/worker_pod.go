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
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
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

// EventInvalidTemplate is the Warning recorded when the API server's
// dry-run create refuses the Pod built from a Worker's spec.template.
const EventInvalidTemplate = "InvalidTemplate"

// invalidTemplateError is a dry-run create refused as invalid: the
// fields it names are the Worker's (spec.template...), not the Pod's.
type invalidTemplateError struct {
	fields []string
	err    error
}

func (e *invalidTemplateError) Error() string {
	return "spec.template is invalid: " + strings.Join(e.fields, "; ")
}

func (e *invalidTemplateError) Unwrap() error { return e.err }

// templateInvalid turns a dry-run create's Invalid StatusError into the
// Worker's fields: a Pod field path is the template's under spec.template,
// except the agent container's first injected env entries, which tether
// prepended: the TETHER_* variables, then the specEnv entries of spec.env.
func templateInvalid(err error, injected, specEnv int) *invalidTemplateError {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return nil
	}
	const env = "spec.containers[0].env["
	out := &invalidTemplateError{err: err}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			f := c.Field
			rest, isEnv := strings.CutPrefix(f, env)
			var i int
			if _, scanErr := fmt.Sscanf(rest, "%d]", &i); isEnv && scanErr == nil {
				tail := rest[strings.Index(rest, "]")+1:]
				switch tetherEnv := injected - specEnv; {
				case i < tetherEnv:
					f = "the TETHER_* environment" + tail
				case i < injected:
					f = fmt.Sprintf("spec.env[%d]%s", i-tetherEnv, tail)
				default:
					f = fmt.Sprintf("spec.template.%s%d]%s", env, i-injected, tail)
				}
			} else if f != "" {
				f = "spec.template." + f
			}
			out.fields = append(out.fields, strings.TrimSpace(f+": "+c.Message))
		}
	}
	if len(out.fields) == 0 {
		out.fields = []string{status.Status().Message}
	}
	return out
}

// DefaultNodeLostTimeout is how long a Worker's Pod may stay not ready by
// its node's doing, or terminating past its grace period with no kubelet
// to confirm it, before its node is taken for lost. It matches the
// tolerationSeconds Kubernetes gives Pods for not-ready and unreachable
// nodes, after which the taint manager evicts them.
const DefaultNodeLostTimeout = 5 * time.Minute

// Reasons of a Pod's DisruptionTarget condition that k8s.io/api does not
// name: the Eviction API's, the taint manager's and PodGC's.
const (
	disruptionEvictionAPI  = "EvictionByEvictionAPI"
	disruptionTaintManager = "DeletionByTaintManager"
	disruptionPodGC        = "DeletionByPodGC"
)

// podEnd is how a Worker's Pod ended, in the terms of a crash record.
type podEnd struct {
	pod      string
	reason   string
	exitCode *int32
	signal   *int32
	message  string
	time     time.Time
}

func (e podEnd) clean() bool { return e.reason == "Exited" && e.exitCode != nil && *e.exitCode == 0 }

func (e podEnd) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s ", e.pod)
	switch {
	case e.reason == ReasonOOMKilled:
		b.WriteString("was OOMKilled")
	case e.reason == ReasonEvicted:
		b.WriteString("was evicted")
	case e.reason == ReasonPreempted:
		b.WriteString("was preempted")
	case e.reason == ReasonPodDeleted:
		b.WriteString("was deleted by someone other than tether")
	case e.reason == ReasonNodeLost:
		b.WriteString("was lost with its node")
	case e.signal != nil:
		fmt.Fprintf(&b, "killed by signal %d", *e.signal)
	case e.exitCode != nil:
		fmt.Fprintf(&b, "exited with code %d", *e.exitCode)
	default:
		b.WriteString("failed")
	}
	if e.message != "" {
		fmt.Fprintf(&b, " (%s)", e.message)
	}
	return b.String()
}

// podEnded tells how pod ended, or nil while its agent may still run; then
// recheck, when not zero, is when the node-lost timeout it waits on is due.
// The agent's end is judged first, so a sidecar that keeps the Pod Running
// does not hide it. Whoever ended the Pod, as its DisruptionTarget
// condition or its deletion says, comes before the exit code: an agent that
// exits 0 on the SIGTERM of a drain was not done.
func podEnded(pod *corev1.Pod, now time.Time, nodeLostTimeout time.Duration) (end *podEnd, recheck time.Time) {
	end = &podEnd{pod: pod.Name, time: now, message: pod.Status.Message}
	term := agentTermination(pod)
	switch {
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
	case term != nil:
	default:
		lost, msg, due := nodeLost(pod, now, nodeLostTimeout)
		if !lost {
			return nil, due
		}
		end.reason, end.message = ReasonNodeLost, msg
		return end, time.Time{}
	}
	switch {
	case term != nil:
		end.time = term.FinishedAt.Time
		if end.time.IsZero() {
			end.time = now
		}
		end.message = term.Message
		code := term.ExitCode
		switch {
		case term.Reason == ReasonOOMKilled:
			end.reason, end.exitCode = ReasonOOMKilled, &code
		case term.Signal != 0:
			sig := term.Signal
			end.reason, end.signal = "Signaled", &sig
		case code > 128 && code < 128+65:
			// Runtimes report a signal death as 128+signal.
			sig := code - 128
			end.reason, end.signal = "Signaled", &sig
		default:
			end.reason, end.exitCode = "Exited", &code
		}
	case pod.Status.Phase == corev1.PodSucceeded:
		zero := int32(0)
		end.reason, end.exitCode = "Exited", &zero
	default:
		end.reason = ReasonPodFailed
	}
	if c := podCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		end.reason, end.message = disruptionReason(c.Reason), strings.TrimSpace(c.Reason+": "+c.Message)
	} else if pod.Status.Reason == ReasonEvicted {
		end.reason, end.message = ReasonEvicted, pod.Status.Message
	} else if !pod.DeletionTimestamp.IsZero() {
		end.reason = ReasonPodDeleted
	}
	return end, time.Time{}
}

// disruptionReason is the crash reason of a Pod the kubelet confirmed
// ended after a DisruptionTarget condition of this reason.
func disruptionReason(reason string) string {
	switch reason {
	case corev1.PodReasonPreemptionByScheduler:
		return ReasonPreempted
	case disruptionPodGC:
		// PodGC fails the Pods of deleted or out-of-service nodes itself.
		return ReasonNodeLost
	default:
		// EvictionByEvictionAPI (drain), TerminationByKubelet (node
		// pressure, node shutdown), DeletionByTaintManager with a kubelet
		// left to stop the container, and reasons added later.
		return ReasonEvicted
	}
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// agentTermination is the termination of the agent container, the Pod's
// first: tether injects the TETHER_* environment into it, and other
// containers are sidecars. With restartPolicy Never it ends once.
func agentTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name == pod.Spec.Containers[0].Name {
			return cs.State.Terminated
		}
	}
	return nil
}

// nodeLost tells whether a Pod that has not ended as far as the API server
// knows has lost its node, and if not yet, when to look again. Kubernetes
// writes no "NodeLost" any more; what a node that stops reporting leaves
// on its Pods is:
//   - the node lifecycle controller sets Ready=False, keeping the reason the
//     kubelet wrote for Ready=True, which is empty (the kubelet gives every
//     Ready=False a reason, such as ContainersNotReady);
//   - once the Pod's toleration of the not-ready or unreachable taint runs
//     out, the taint manager adds DisruptionTarget (DeletionByTaintManager)
//     and deletes the Pod gracefully; PodGC does the same
//     (DeletionByPodGC) when the Node is deleted or out of service;
//   - no kubelet confirms the deletion, so the Pod stays terminating, phase
//     Running, past its deletionTimestamp (which includes the grace period).
func nodeLost(pod *corev1.Pod, now time.Time, timeout time.Duration) (lost bool, message string, recheck time.Time) {
	var notReadySince time.Time
	if c := podCondition(pod, corev1.PodReady); c != nil && c.Status != corev1.ConditionTrue && c.Reason == "" {
		notReadySince = c.LastTransitionTime.Time
		if notReadySince.IsZero() {
			notReadySince = now
		}
	}
	if c := podCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue &&
		(c.Reason == disruptionPodGC || c.Reason == disruptionTaintManager && !notReadySince.IsZero()) {
		return true, strings.TrimSpace(c.Reason + ": " + c.Message), time.Time{}
	}
	if !notReadySince.IsZero() {
		due := notReadySince.Add(timeout)
		if !now.Before(due) {
			return true, fmt.Sprintf("not ready by its node's doing since %s", notReadySince.UTC().Format(time.RFC3339)), time.Time{}
		}
		recheck = due
	}
	if dt := pod.DeletionTimestamp; dt != nil {
		due := dt.Add(timeout)
		if !now.Before(due) {
			return true, fmt.Sprintf("still terminating %s after its grace period ended: no kubelet confirmed it", now.Sub(dt.Time).Round(time.Second)), time.Time{}
		}
		if recheck.IsZero() || due.Before(recheck) {
			recheck = due
		}
	}
	return false, "", recheck
}

// pendingCause says why pod has not started, from its scheduling condition
// and its containers' waiting states; empty when nothing is wrong yet.
func pendingCause(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			return strings.TrimSpace(fmt.Sprintf("container %s: %s: %s", cs.Name, w.Reason, w.Message))
		}
	}
	return ""
}

func podRunning(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning
}

// reconcilePod drives a Worker with spec.template: one Pod at a time,
// created from the template, whose end is judged like a process's exit by
// the same crash window and recorded in the same crash records.
func (r *WorkerReconciler) reconcilePod(ctx context.Context, w *v1.Worker) (ctrl.Result, error) {
	if !r.pods {
		setPhase(&w.Status, workerfsm.Unsupported)
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

// podName is the name of the Worker's Pod started after restarts
// restarts; a retried start gets the same name, so it never runs two.
func podName(w *v1.Worker, restarts int32) string {
	return fmt.Sprintf("%s-%d", w.Name, restarts)
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
			setPhase(&w.Status, workerfsm.RestartRequested)
			return ctrl.Result{}, r.startPod(ctx, w, true)
		}
		return ctrl.Result{}, r.writeStatusIfChanged(ctx, w, refusedReady(w)...)
	}
	pod := &corev1.Pod{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Status.PodName}, pod)
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
			setPhase(&w.Status, workerfsm.Started)
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
	setPhase(&w.Status, workerfsm.PodCreated)
	if err := r.writeStatus(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodPending, "pod "+name+" created")); err != nil {
		return err
	}
	if manual {
		metrics.WorkerRestarts.Inc()
	}
	return nil
}

func (r *WorkerReconciler) podRejected(ctx context.Context, w *v1.Worker, cause error) error {
	var invalid *invalidTemplateError
	if errors.As(cause, &invalid) {
		setPhase(&w.Status, workerfsm.StartFailed)
		if err := r.writeStatus(ctx, w, invalidTemplateCondition(invalid)); err != nil {
			return err
		}
		r.recordInvalidTemplate(w, invalid)
		return nil
	}
	var privileged *privilegedTemplateError
	if errors.As(cause, &privileged) {
		setPhase(&w.Status, workerfsm.StartFailed)
		if err := r.writeStatus(ctx, w, privilegedTemplateCondition(privileged)); err != nil {
			return err
		}
		r.recordPrivilegedTemplate(w, privileged)
		return nil
	}
	if !apierrors.IsInvalid(cause) && !apierrors.IsForbidden(cause) && !apierrors.IsBadRequest(cause) {
		return cause
	}
	setPhase(&w.Status, workerfsm.StartFailed)
	msg := "the API server refused the Pod from spec.template: " + cause.Error()
	if err := r.writeStatus(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodRejected, msg)); err != nil {
		return err
	}
	r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventStartFailed, "Start", "%s; fix spec.template", msg)
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

// podFor builds the Worker's next Pod from its template.
func (r *WorkerReconciler) podFor(ctx context.Context, w *v1.Worker, scheme *runtime.Scheme) (*corev1.Pod, error) {
	t := w.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: t.ObjectMeta, Spec: t.Spec}
	pod.Name = podName(w, w.Status.Restarts)
	pod.GenerateName = ""
	pod.Namespace = w.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[WorkerLabel] = w.Name
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	if len(pod.Spec.Containers) == 0 {
		return nil, &invalidTemplateError{fields: []string{"spec.template.spec.containers: Required value: the first container is the agent's"}}
	}
	// The operator creates the Pod, so the Worker's creator needs no right
	// to create Pods: it never creates one that asks for more than the
	// baseline Pod Security Standard allows, unless an administrator said so.
	if !r.allowsPrivileged(w.Namespace) {
		if fields := privilegedFields(&t.Spec); len(fields) > 0 {
			return nil, &privilegedTemplateError{namespace: w.Namespace, fields: fields}
		}
	}
	restrictedDefaults(&pod.Spec)
	env := []corev1.EnvVar{
		{Name: config.WorkerEnv, Value: w.Name},
		{Name: config.NamespaceEnv, Value: w.Namespace},
		{Name: config.ActorEnv, Value: "worker/" + w.Name},
		{Name: config.ClusterEnv, Value: "true"},
	}
	if hook := r.assignedHook(ctx, w); hook != "" {
		env = append(env, corev1.EnvVar{Name: config.HookEnv, Value: hook})
	}
	for _, e := range w.Spec.Env {
		env = append(env, corev1.EnvVar{Name: e.Name, Value: e.Value})
	}
	agent := &pod.Spec.Containers[0]
	agent.Env = append(env, agent.Env...)
	if err := controllerutil.SetControllerReference(w, pod, scheme); err != nil {
		return nil, err
	}
	return pod, nil
}

// createPod creates the Worker's next Pod. A server-side dry-run create
// goes first: the CRD keeps spec.template schemaless, so the API server's
// Pod validation and admission are the template's validator, and a refusal
// as Invalid is an invalidTemplateError naming the Worker's fields, with
// no Pod created.
func (r *WorkerReconciler) createPod(ctx context.Context, w *v1.Worker) (string, error) {
	pod, err := r.podFor(ctx, w, r.client.Scheme())
	if err != nil {
		return "", err
	}
	injected := len(pod.Spec.Containers[0].Env) - len(w.Spec.Template.Spec.Containers[0].Env)
	if err := r.client.Create(ctx, pod.DeepCopy(), client.DryRunAll); err != nil && !apierrors.IsAlreadyExists(err) {
		if invalid := templateInvalid(err, injected, len(w.Spec.Env)); invalid != nil {
			return "", invalid
		}
		return "", err
	}
	err = r.client.Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		existing := &corev1.Pod{}
		if getErr := r.reader.Get(ctx, client.ObjectKeyFromObject(pod), existing); getErr != nil {
			return "", getErr
		}
		if !metav1.IsControlledBy(existing, w) {
			return "", apierrors.NewForbidden(corev1.Resource("pods"), pod.Name,
				fmt.Errorf("a Pod named %s exists and is not this Worker's", pod.Name))
		}
		return pod.Name, nil
	}
	if err != nil {
		return "", err
	}
	return pod.Name, nil
}

// handlePodEnd records the end of the Worker's Pod and restarts it within
// the crash window: the decision, the crash record and the phase are the
// ones a process's exit gets (workerfsm), only detection differs.
func (r *WorkerReconciler) handlePodEnd(ctx context.Context, w *v1.Worker, end podEnd) error {
	clean := end.clean()
	action := Decide(&w.Spec, &w.Status, r.now())
	if clean {
		action = ActionNone
	}
	held, err := r.heldHooks(ctx, w)
	if err != nil {
		return err
	}
	rec := v1.CrashRecord{
		Time: metav1.NewTime(end.time), Reason: end.reason, ExitCode: end.exitCode, Signal: end.signal,
		Hook: heldNames(held), Held: held,
	}
	if !clean {
		appendCrash(&w.Status, rec)
	}
	w.Status.PodName, w.Status.NodeName, w.Status.StartedAt = "", "", nil
	var started string
	var startErr error
	var createdAt time.Time
	if action == ActionRestart {
		w.Status.Restarts++
		if started, startErr = r.createPod(ctx, w); startErr != nil {
			w.Status.Restarts--
		}
		createdAt = r.now()
	}
	var invalid *invalidTemplateError
	refused := errors.As(startErr, &invalid)
	var privileged *privilegedTemplateError
	refusedPrivileged := errors.As(startErr, &privileged)
	if started != "" && len(w.Status.Crashes) > 0 && !clean {
		w.Status.Crashes[len(w.Status.Crashes)-1].Restarted = true
	}
	var extra []metav1.Condition
	endPhase(&w.Status, clean, started != "", action)
	switch {
	case clean:
	case started != "":
		w.Status.PodName = started
		// The new Pod has not started yet: Running comes when it runs.
		setPhase(&w.Status, workerfsm.PodCreated)
		extra = append(extra, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodPending, "pod "+started+" created"))
	case action == ActionNotifyOnly:
	case refused:
		extra = append(extra, invalidTemplateCondition(invalid))
	case refusedPrivileged:
		extra = append(extra, privilegedTemplateCondition(privileged))
	case startErr != nil:
		extra = append(extra, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonPodRejected, startErr.Error()))
	}
	if err := r.writeStatus(ctx, w, extra...); err != nil {
		return err
	}
	// Counted once the status holds the crash, as for processes: a failed
	// write is retried and must not count twice.
	if !clean {
		metrics.WorkerCrashed(end.reason)
	}
	if started != "" {
		metrics.WorkerRestarted(end.time, createdAt)
	}
	r.cleanupPods(ctx, w, end.pod)
	logr.FromContextOrDiscard(ctx).Info("worker pod ended", "worker", w.Name, "end", end.String(), "phase", w.Status.Phase, "hooks", rec.Hook)
	var restartedAs string
	if started != "" {
		restartedAs = "pod " + started
	}
	r.emitEnd(w, end, rec.Hook, action, clean, restartedAs, startErr)
	if refused && started == "" && !clean && action != ActionNotifyOnly {
		r.recordInvalidTemplate(w, invalid)
	}
	if refusedPrivileged && started == "" && !clean && action != ActionNotifyOnly {
		r.recordPrivilegedTemplate(w, privileged)
	}
	return nil
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

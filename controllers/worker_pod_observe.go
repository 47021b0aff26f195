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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

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

// fsm is the end in the terms of workerfsm: its crash record without the
// Hooks held, and whether it was clean.
func (e podEnd) fsm() workerfsm.End {
	return workerfsm.End{
		Record: v1.CrashRecord{Time: metav1.NewTime(e.time), Reason: e.reason, ExitCode: e.exitCode, Signal: e.signal},
		Clean:  e.clean(),
	}
}

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

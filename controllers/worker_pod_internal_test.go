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
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestTemplateInvalidNamesWorkerFields maps the causes of a Pod's Invalid
// StatusError to the Worker's fields: the template's under spec.template,
// and the env entries tether prepended to the agent container to the
// TETHER_* environment and spec.env.
func TestTemplateInvalidNamesWorkerFields(t *testing.T) {
	pod := schema.GroupKind{Kind: "Pod"}
	env := field.NewPath("spec", "containers").Index(0).Child("env")
	// 4 TETHER_* variables, then 2 of spec.env, then the template's own.
	err := apierrors.NewInvalid(pod, "w-0", field.ErrorList{
		field.Required(field.NewPath("spec", "containers").Index(0).Child("image"), ""),
		field.Invalid(env.Index(1).Child("name"), "", "bad"),
		field.Invalid(env.Index(5).Child("name"), "", "bad"),
		field.Invalid(env.Index(7).Child("name"), "", "bad"),
		field.Invalid(field.NewPath("metadata", "labels"), "", "bad"),
	})
	got := templateInvalid(err, 6, 2)
	if got == nil {
		t.Fatal("an Invalid StatusError gave no invalidTemplateError")
	}
	want := []string{
		"spec.template.spec.containers[0].image: Required value",
		`the TETHER_* environment.name: Invalid value: "": bad`,
		`spec.env[1].name: Invalid value: "": bad`,
		`spec.template.spec.containers[0].env[1].name: Invalid value: "": bad`,
		`spec.template.metadata.labels: Invalid value: "": bad`,
	}
	if len(got.fields) != len(want) {
		t.Fatalf("fields %q, want %q", got.fields, want)
	}
	for i := range want {
		if got.fields[i] != want[i] {
			t.Errorf("field %d: %q, want %q", i, got.fields[i], want[i])
		}
	}
	if !errors.Is(got, err) {
		t.Error("the invalidTemplateError does not wrap the StatusError")
	}
	if templateInvalid(apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "w-0", errors.New("quota")), 6, 2) != nil {
		t.Error("a Forbidden error was taken for an invalid template")
	}
}

// TestNodeLost tells a Pod whose node stopped reporting from one whose
// kubelet merely reports it not ready, by what Kubernetes writes.
func TestNodeLost(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const timeout = time.Minute
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ready := func(status corev1.ConditionStatus, reason string, since time.Duration) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodReady, Status: status, Reason: reason, LastTransitionTime: ago(since)}
	}
	target := func(reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason}
	}
	cases := []struct {
		name        string
		conditions  []corev1.PodCondition
		deletedAgo  time.Duration
		wantLost    bool
		wantRecheck time.Time
	}{
		{name: "ready", conditions: []corev1.PodCondition{ready(corev1.ConditionTrue, "", time.Hour)}},
		{name: "kubelet says not ready", conditions: []corev1.PodCondition{ready(corev1.ConditionFalse, "ContainersNotReady", time.Hour)}},
		{name: "node not ready, within timeout", conditions: []corev1.PodCondition{ready(corev1.ConditionFalse, "", 20*time.Second)}, wantRecheck: now.Add(40 * time.Second)},
		{name: "node not ready past timeout", conditions: []corev1.PodCondition{ready(corev1.ConditionFalse, "", 2*time.Minute)}, wantLost: true},
		{name: "node unknown past timeout", conditions: []corev1.PodCondition{ready(corev1.ConditionUnknown, "", 2*time.Minute)}, wantLost: true},
		{name: "taint manager on a not-ready node", conditions: []corev1.PodCondition{ready(corev1.ConditionFalse, "", time.Second), target(disruptionTaintManager)}, wantLost: true},
		{name: "taint manager, node ready", conditions: []corev1.PodCondition{ready(corev1.ConditionTrue, "", time.Hour), target(disruptionTaintManager)}},
		{name: "podgc", conditions: []corev1.PodCondition{target(disruptionPodGC)}, wantLost: true},
		{name: "drain, within grace", conditions: []corev1.PodCondition{target(disruptionEvictionAPI)}, deletedAgo: -10 * time.Second, wantRecheck: now.Add(70 * time.Second)},
		{name: "terminating past grace", deletedAgo: 2 * time.Minute, wantLost: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: tc.conditions}}
			if tc.deletedAgo != 0 {
				dt := ago(tc.deletedAgo)
				pod.DeletionTimestamp = &dt
			}
			lost, msg, recheck := nodeLost(pod, now, timeout)
			if lost != tc.wantLost || !recheck.Equal(tc.wantRecheck) {
				t.Errorf("lost %v (%q), recheck %v; want %v, %v", lost, msg, recheck, tc.wantLost, tc.wantRecheck)
			}
			if lost && msg == "" {
				t.Error("lost with no message")
			}
		})
	}
}

// TestPodEnded judges a Pod's end by the agent container first and by
// who ended the Pod before the exit code.
func TestPodEnded(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	deleted := metav1.NewTime(now.Add(time.Minute))
	state := func(code int32) corev1.ContainerState {
		if code < 0 {
			return corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(now)}}
	}
	pod := func(phase corev1.PodPhase, agent, sidecar int32, conditions ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "w-0"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent"}, {Name: "proxy"}}},
			Status: corev1.PodStatus{Phase: phase, Conditions: conditions, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "proxy", State: state(sidecar)}, {Name: "agent", State: state(agent)},
			}},
		}
	}
	target := func(reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason}
	}
	cases := []struct {
		name       string
		pod        *corev1.Pod
		deleted    bool
		wantReason string // empty: not ended
		wantClean  bool
	}{
		{name: "agent exits 0", pod: pod(corev1.PodSucceeded, 0, 0), wantReason: "Exited", wantClean: true},
		{name: "agent exits 0 on someone's delete", pod: pod(corev1.PodSucceeded, 0, 0), deleted: true, wantReason: ReasonPodDeleted},
		{name: "drained", pod: pod(corev1.PodSucceeded, 0, 0, target(disruptionEvictionAPI)), deleted: true, wantReason: ReasonEvicted},
		{name: "preempted", pod: pod(corev1.PodFailed, 143, 0, target(corev1.PodReasonPreemptionByScheduler)), deleted: true, wantReason: ReasonPreempted},
		{name: "node shutdown", pod: pod(corev1.PodFailed, 137, 137, target(corev1.PodReasonTerminationByKubelet)), wantReason: ReasonEvicted},
		{name: "node deleted", pod: pod(corev1.PodFailed, -1, -1, target(disruptionPodGC)), wantReason: ReasonNodeLost},
		{name: "agent ends behind a sidecar", pod: pod(corev1.PodRunning, 2, -1), wantReason: "Exited"},
		{name: "sidecar ends, agent runs", pod: pod(corev1.PodRunning, -1, 1)},
		{name: "deleting, agent still stopping", pod: pod(corev1.PodRunning, -1, -1), deleted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.deleted {
				tc.pod.DeletionTimestamp = &deleted
			}
			end, _ := podEnded(tc.pod, now, time.Minute)
			switch {
			case tc.wantReason == "" && end != nil:
				t.Errorf("ended: %s; want it running", end)
			case tc.wantReason != "" && end == nil:
				t.Errorf("not ended; want %s", tc.wantReason)
			case end != nil && (end.reason != tc.wantReason || end.clean() != tc.wantClean):
				t.Errorf("reason %s, clean %v; want %s, %v", end.reason, end.clean(), tc.wantReason, tc.wantClean)
			}
		})
	}
}

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

package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// Namespaces of TestWorkerPodSecurity: what Pod Security Admission
// enforces in each, and whether the operator allows privileged Workers.
const (
	nsTeam       = "team"       // enforce=baseline; privileged Workers not allowed
	nsRestricted = "restricted" // enforce=restricted
	nsAllowed    = "allowed"    // enforce=baseline; privileged Workers allowed by the operator
	nsLab        = "lab"        // no PSA label; privileged Workers allowed by the operator
)

func waitWorkerIn(t *testing.T, c client.Client, ns, name, what string, cond func(*v1.Worker) bool) *v1.Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &v1.Worker{}
	for {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, w)
		if err == nil && cond(w) {
			return w
		}
		if ctx.Err() != nil {
			t.Fatalf("worker %s/%s: never %s; status %+v (%v)", ns, name, what, w.Status, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readyReasonIs(reason string) func(*v1.Worker) bool {
	return func(w *v1.Worker) bool {
		ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
		return ready != nil && ready.Reason == reason
	}
}

func workerEvent(t *testing.T, c client.Client, ns, worker, reason string) *corev1.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list := &corev1.EventList{}
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for i, e := range list.Items {
			if e.InvolvedObject.Kind == "Worker" && e.InvolvedObject.Name == worker && e.Reason == reason {
				return &list.Items[i]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %s/%s: no %s Event", ns, worker, reason)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func secureTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "agent", Image: "example.invalid/agent:1"}},
	}}
}

// TestWorkerPodSecurity runs Workers whose templates ask for more than a
// Worker's creator may have, on kube-apiserver with Pod Security
// Admission (enabled by default) enforcing per namespace: the operator
// creates no such Pod unless an administrator allowed it in that namespace
// (--allow-privileged-workers), and there the namespace's Pod Security
// Admission still judges the Pod. A user who may create Workers and Pods
// in a baseline namespace gets no privileged Pod through a Worker, as she
// gets none herself; the Pods tether builds pass restricted.
func TestWorkerPodSecurity(t *testing.T) {
	mgr, env := testsupport.EnvtestManager(t)
	c := env.Client
	ctx := context.Background()
	for ns, level := range map[string]string{nsTeam: "baseline", nsRestricted: "restricted", nsAllowed: "baseline", nsLab: ""} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if level != "" {
			n.Labels = map[string]string{"pod-security.kubernetes.io/enforce": level}
		}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	opts := controllers.Options{Config: testConfig(t), SkipNameValidation: true}
	opts.Worker.LogDir = t.TempDir()
	opts.Worker.PrivilegedNamespaces = []string{nsAllowed, nsLab}
	if err := controllers.SetupAll(mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, mgr)

	// alice may create Workers and Pods in team, nothing more.
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsTeam, Name: "worker-creator"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1.GroupVersion.Group}, Resources: []string{"workers"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsTeam, Name: "alice"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	asAlice := rest.CopyConfig(env.Config)
	asAlice.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
	alice, err := client.New(asAlice, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name   string
		field  string
		mutate func(*corev1.PodSpec)
		// baseline: baseline PSA refuses it too; restricted alone refuses
		// privilege escalation, which tether refuses everywhere.
		baseline bool
	}{
		{"host-network", "spec.template.spec.hostNetwork: true", func(s *corev1.PodSpec) { s.HostNetwork = true }, true},
		{"host-pid", "spec.template.spec.hostPID: true", func(s *corev1.PodSpec) { s.HostPID = true }, true},
		{"host-ipc", "spec.template.spec.hostIPC: true", func(s *corev1.PodSpec) { s.HostIPC = true }, true},
		{"host-path", `spec.template.spec.volumes[1].hostPath: path "/"`, func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
			}
		}, true},
		{"privileged", "spec.template.spec.containers[0].securityContext.privileged: true", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, true},
		{"escalation", "spec.template.spec.initContainers[0].securityContext.allowPrivilegeEscalation: true", func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "init", Image: "example.invalid/init:1", SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}}}
		}, false},
		{"capabilities", "spec.template.spec.containers[1].securityContext.capabilities.add[1]: SYS_ADMIN", func(s *corev1.PodSpec) {
			s.Containers = append(s.Containers, corev1.Container{Name: "sidecar", Image: "example.invalid/sidecar:1",
				SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_ADMIN"}}}})
		}, true},
		{"host-port", "spec.template.spec.containers[0].ports[0].hostPort: 8080", func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080}}
		}, true},
		{"unconfined", "spec.template.spec.securityContext.seccompProfile.type: Unconfined", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
		}, true},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := secureTemplate()
			tc.mutate(&tmpl.Spec)
			// alice, allowed Pods in team, cannot create this one herself...
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: nsTeam, Name: tc.name}, Spec: *tmpl.Spec.DeepCopy()}
			if err := alice.Create(ctx, pod, client.DryRunAll); tc.baseline && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity")) {
				t.Fatalf("alice created a %s Pod herself in a baseline namespace: %v", tc.name, err)
			}
			// ...nor through a Worker, which the API server lets her create.
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: nsTeam, Name: tc.name}, Spec: v1.WorkerSpec{Template: tmpl}}
			if err := alice.Create(ctx, w); err != nil {
				t.Fatalf("alice may create Workers: %v", err)
			}
			got := waitWorkerIn(t, c, nsTeam, tc.name, "refused its template", readyReasonIs(controllers.ReasonPrivilegedTemplate))
			ready := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady)
			if ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, tc.field) || !strings.Contains(ready.Message, "--allow-privileged-workers="+nsTeam) {
				t.Errorf("Ready %s %q; want False naming %s and the opt-in", ready.Status, ready.Message, tc.field)
			}
			if ev := workerEvent(t, c, nsTeam, tc.name, controllers.ReasonPrivilegedTemplate); ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Message, tc.field) {
				t.Errorf("Event %s %q; want a Warning naming %s", ev.Type, ev.Message, tc.field)
			}
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.InNamespace(nsTeam), client.MatchingLabels{controllers.WorkerLabel: tc.name}); err != nil {
				t.Fatal(err)
			}
			if len(pods.Items) != 0 || got.Status.PodName != "" {
				t.Errorf("a refused template got pods %d, status.podName %q", len(pods.Items), got.Status.PodName)
			}
		})
	}

	// Where the operator allows privileged Workers, the namespace's Pod
	// Security Admission still refuses the Pod; with no PSA label it runs.
	for _, ns := range []string{nsAllowed, nsLab} {
		tmpl := secureTemplate()
		tmpl.Spec.HostNetwork = true
		if err := c.Create(ctx, &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "host-network"}, Spec: v1.WorkerSpec{Template: tmpl}}); err != nil {
			t.Fatal(err)
		}
	}
	got := waitWorkerIn(t, c, nsAllowed, "host-network", "had its pod refused by Pod Security Admission", readyReasonIs(controllers.ReasonPodRejected))
	if ready := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady); !strings.Contains(ready.Message, "violates PodSecurity") || !strings.Contains(ready.Message, "hostNetwork") {
		t.Errorf("Ready %q; want Pod Security Admission's refusal naming hostNetwork", ready.Message)
	}
	waitWorkerIn(t, c, nsLab, "host-network", "created its pod", func(w *v1.Worker) bool { return w.Status.PodName != "" })

	// The Pods tether builds pass restricted, with the template's own
	// choices kept.
	own := secureTemplate()
	own.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To(int64(1000)), Capabilities: &corev1.Capabilities{
		Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"},
	}}
	for name, tmpl := range map[string]*corev1.PodTemplateSpec{"plain": secureTemplate(), "own": own} {
		if err := c.Create(ctx, &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: nsRestricted, Name: name}, Spec: v1.WorkerSpec{Template: tmpl}}); err != nil {
			t.Fatal(err)
		}
		w := waitWorkerIn(t, c, nsRestricted, name, "created its pod", func(w *v1.Worker) bool {
			return w.Status.PodName != "" || readyReasonIs(controllers.ReasonPodRejected)(w)
		})
		if w.Status.PodName == "" {
			t.Fatalf("worker %s: the restricted namespace refused its pod: %+v", name, meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady))
		}
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: nsRestricted, Name: w.Status.PodName}, pod); err != nil {
			t.Fatal(err)
		}
		psc, sc := pod.Spec.SecurityContext, pod.Spec.Containers[0].SecurityContext
		if !ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
			ptr.Deref(sc.AllowPrivilegeEscalation, true) || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("worker %s: pod security context %+v, container's %+v; want restricted's", name, psc, sc)
		}
		if name == "own" && (ptr.Deref(sc.RunAsUser, 0) != 1000 || len(sc.Capabilities.Add) != 1) {
			t.Errorf("the template's own securityContext was not kept: %+v", sc)
		}
	}
}

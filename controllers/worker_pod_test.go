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
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// startPodWorkers runs every reconciler on a real kube-apiserver, which
// serves Pods; the tests play the kubelet by writing Pod status.
func startPodWorkers(t *testing.T) *testenv.Env {
	t.Helper()
	mgr, env := testsupport.EnvtestManager(t)
	opts := controllers.Options{Config: testConfig(t), SkipNameValidation: true}
	opts.Worker.LogDir = t.TempDir()
	opts.Worker.PodPendingTimeout = 2 * time.Second
	opts.Worker.NodeLostTimeout = 2 * time.Second
	if err := controllers.SetupAll(mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, mgr)
	return env
}

func podWorker(name string, maxCrashes int32) *v1.Worker {
	grace := int64(5)
	return &v1.Worker{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.WorkerSpec{
			Restart: v1.RestartPolicy{Auto: true, MaxCrashes: maxCrashes, Window: &metav1.Duration{Duration: 10 * time.Minute}},
			Env:     []v1.EnvVar{{Name: "AGENT_MODE", Value: "test"}},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec: corev1.PodSpec{
					ServiceAccountName:            "agent",
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []corev1.Container{{Name: "agent", Image: "example.invalid/agent:1"}},
				},
			},
		},
	}
}

func waitPodWorker(t *testing.T, c client.Client, name string, what string, cond func(*v1.Worker) bool) *v1.Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &v1.Worker{}
	for {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, w)
		if err == nil && cond(w) {
			return w
		}
		if ctx.Err() != nil {
			t.Fatalf("worker %s: never %s; status %+v (%v)", name, what, w.Status, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func getPod(t *testing.T, c client.Client, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, pod); err != nil {
		t.Fatalf("pod %s: %v", name, err)
	}
	return pod
}

// kubelet sets the Pod's status as a kubelet would.
func kubelet(t *testing.T, c client.Client, name string, phase corev1.PodPhase, reason string, state corev1.ContainerState) {
	t.Helper()
	pod := getPod(t, c, name)
	pod.Status.Phase, pod.Status.Reason = phase, reason
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: pod.Spec.Containers[0].Image, State: state}}
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("playing the kubelet on pod %s: %v", name, err)
	}
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
}

func terminated(code, signal int32, reason string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Signal: signal, Reason: reason, StartedAt: metav1.Now(), FinishedAt: metav1.Now(),
	}}
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestWorkerPods runs a Worker as Pods: created from the template, a
// crash of each kind recorded and restarted with the Hooks it held freed,
// and a Pod deleted by someone else taken for a crash.
func TestWorkerPods(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	ctx := context.Background()

	hook := newHook("task", time.Hour, "build")
	hook.Spec.Assignee = "agent"
	if err := c.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "task", 20*time.Second, func(h *v1.Hook) bool { return h.Status.State != "" })
	if err := c.Create(ctx, podWorker("agent", 10)); err != nil {
		t.Fatal(err)
	}
	w := waitPodWorker(t, c, "agent", "created a pod", func(w *v1.Worker) bool { return w.Status.PodName != "" })
	if w.Status.Phase != v1.WorkerPending || w.Status.PodName != "agent-0" {
		t.Fatalf("after the pod's creation: phase %q, pod %q; want Pending, agent-0", w.Status.Phase, w.Status.PodName)
	}
	pod := getPod(t, c, "agent-0")
	if !metav1.IsControlledBy(pod, w) || pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Labels[controllers.WorkerLabel] != "agent" ||
		pod.Labels["app"] != "agent" || pod.Spec.ServiceAccountName != "agent" {
		t.Fatalf("pod %s: owner %v, restartPolicy %q, labels %v, serviceAccount %q", pod.Name, pod.OwnerReferences, pod.Spec.RestartPolicy, pod.Labels, pod.Spec.ServiceAccountName)
	}
	agentContainer := pod.Spec.Containers[0]
	for k, want := range map[string]string{
		config.WorkerEnv: "agent", config.NamespaceEnv: "default", config.ActorEnv: "worker/agent",
		config.ClusterEnv: "true", config.HookEnv: "task", "AGENT_MODE": "test",
	} {
		if got := envValue(agentContainer, k); got != want {
			t.Errorf("agent container env %s=%q, want %q", k, got, want)
		}
	}

	kubelet(t, c, "agent-0", corev1.PodRunning, "", running())
	waitPodWorker(t, c, "agent", "Running", func(w *v1.Worker) bool {
		ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
		return w.Status.Phase == v1.WorkerRunning && ready != nil && ready.Status == metav1.ConditionTrue
	})

	crashes := []struct {
		name                 string
		phase                corev1.PodPhase
		podReason            string
		state                corev1.ContainerState
		delete               bool
		wantReason           string
		wantSignal, wantExit int32
	}{
		{name: "SIGKILL", phase: corev1.PodFailed, state: terminated(137, 9, "Error"), wantReason: "Signaled", wantSignal: 9},
		{name: "exit 3", phase: corev1.PodFailed, state: terminated(3, 0, "Error"), wantReason: "Exited", wantExit: 3},
		{name: "OOMKilled", phase: corev1.PodFailed, state: terminated(137, 0, "OOMKilled"), wantReason: controllers.ReasonOOMKilled, wantExit: 137},
		{name: "evicted", phase: corev1.PodFailed, podReason: "Evicted", wantReason: controllers.ReasonEvicted},
		{name: "deleted", delete: true, wantReason: controllers.ReasonPodDeleted},
	}
	crashCount := func(reason string) float64 { return testutil.ToFloat64(metrics.WorkerCrashes.WithLabelValues(reason)) }
	latencyCount := func() uint64 {
		m := &dto.Metric{}
		if err := metrics.WorkerRestartLatency.Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	restartsBefore, latencyBefore := testutil.ToFloat64(metrics.WorkerRestarts), latencyCount()
	for i, tc := range crashes {
		crashesBefore := crashCount(tc.wantReason)
		current := fmt.Sprintf("agent-%d", i)
		if i > 0 {
			kubelet(t, c, current, corev1.PodRunning, "", running())
			waitPodWorker(t, c, "agent", "Running on "+current, func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning })
		}
		if tc.delete {
			if err := c.Delete(ctx, getPod(t, c, current), client.GracePeriodSeconds(0)); err != nil {
				t.Fatal(err)
			}
		} else {
			kubelet(t, c, current, tc.phase, tc.podReason, tc.state)
		}
		next := fmt.Sprintf("agent-%d", i+1)
		w := waitPodWorker(t, c, "agent", tc.name+": restarted as "+next, func(w *v1.Worker) bool { return w.Status.PodName == next })
		if len(w.Status.Crashes) != i+1 {
			t.Fatalf("%s: %d crash records, want %d", tc.name, len(w.Status.Crashes), i+1)
		}
		rec := w.Status.Crashes[i]
		if rec.Reason != tc.wantReason || !rec.Restarted {
			t.Errorf("%s: crash record %+v; want reason %s, restarted", tc.name, rec, tc.wantReason)
		}
		if tc.wantSignal != 0 && (rec.Signal == nil || *rec.Signal != tc.wantSignal) {
			t.Errorf("%s: signal %v, want %d", tc.name, rec.Signal, tc.wantSignal)
		}
		if tc.wantExit != 0 && (rec.ExitCode == nil || *rec.ExitCode != tc.wantExit) {
			t.Errorf("%s: exit code %v, want %d", tc.name, rec.ExitCode, tc.wantExit)
		}
		// The reconciler counts a crash just after writing its record.
		deadline := time.Now().Add(10 * time.Second)
		for crashCount(tc.wantReason) < crashesBefore+1 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if got := crashCount(tc.wantReason); got < crashesBefore+1 {
			t.Errorf("%s: tether_worker_crashes_total{reason=%q} %v, want at least %v", tc.name, tc.wantReason, got, crashesBefore+1)
		}
		if i == 0 {
			if rec.Hook != "task" {
				t.Errorf("the first crash record names hooks %q, want task", rec.Hook)
			}
			waitFor(t, c, "task", 20*time.Second, func(h *v1.Hook) bool { return h.Spec.Assignee == "" })
		}
	}

	for deadline := time.Now().Add(10 * time.Second); latencyCount() < latencyBefore+uint64(len(crashes)) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := testutil.ToFloat64(metrics.WorkerRestarts); got < restartsBefore+float64(len(crashes)) {
		t.Errorf("tether_worker_restarts_total %v, want at least %v", got, restartsBefore+float64(len(crashes)))
	}
	if got := latencyCount(); got < latencyBefore+uint64(len(crashes)) {
		t.Errorf("tether_worker_restart_latency_seconds count %d, want at least %d", got, latencyBefore+uint64(len(crashes)))
	}

	// Only the current Pod and the one that ended last are kept.
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{controllers.WorkerLabel: "agent"}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	if last := fmt.Sprintf("agent-%d", len(crashes)); !slices.Contains(names, last) || len(names) > 2 {
		t.Errorf("pods left %v; want the current %s and at most the one before", names, last)
	}

	// A Pod bound to a node waits for its kubelet, so the grace period the
	// finalizer deleted it with shows.
	last := fmt.Sprintf("agent-%d", len(crashes))
	bind(t, c, last)
	kubelet(t, c, last, corev1.PodRunning, "", running())
	waitPodWorker(t, c, "agent", "Running on "+last, func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning })
	if err := c.Delete(ctx, &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent"}}); err != nil {
		t.Fatal(err)
	}
	deleting := waitPod(t, c, last, "deleted by the finalizer", func(p *corev1.Pod) bool { return !p.DeletionTimestamp.IsZero() })
	if g := deleting.DeletionGracePeriodSeconds; g == nil || *g != 5 {
		t.Errorf("the finalizer deleted pod %s with grace period %v, want the template's 5", last, g)
	}
	kubeletRemoves(t, c, last)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "agent"}, &v1.Worker{})
		left := &corev1.PodList{}
		if lerr := c.List(ctx, left, client.InNamespace("default"), client.MatchingLabels{controllers.WorkerLabel: "agent"}); lerr != nil {
			t.Fatal(lerr)
		}
		if apierrors.IsNotFound(err) && len(left.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deleting the worker left it (%v) or its pods (%d)", err, len(left.Items))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bind binds a Pod to a node, as the scheduler does: the API server then
// keeps a deleted Pod until its kubelet confirms, or grace 0 forces it.
func bind(t *testing.T, c client.Client, name string) {
	t.Helper()
	pod := getPod(t, c, name)
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := c.SubResource("binding").Create(context.Background(), pod, binding); err != nil {
		t.Fatalf("binding pod %s: %v", name, err)
	}
}

// setPodStatus edits a Pod's status as the kubelet or a controller would.
func setPodStatus(t *testing.T, c client.Client, name string, edit func(*corev1.PodStatus)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := getPod(t, c, name)
		edit(&pod.Status)
		return c.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatalf("status of pod %s: %v", name, err)
	}
}

// kubeletRemoves removes a terminating Pod as its kubelet does once its
// containers have stopped.
func kubeletRemoves(t *testing.T, c client.Client, name string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	if err := c.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("removing pod %s: %v", name, err)
	}
}

// waitPod waits until the Pod satisfies cond.
func waitPod(t *testing.T, c client.Client, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pod := &corev1.Pod{}
		err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, pod)
		if err == nil && cond(pod) {
			return pod
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: never %s (%v)", name, what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func setCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// nodeStopsReporting plays the node lifecycle controller: Ready=False,
// keeping the empty reason the kubelet wrote with Ready=True.
func nodeStopsReporting(st *corev1.PodStatus) {
	setCondition(st, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
}

func disruptionTarget(reason string) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		setCondition(st, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, Message: "test: " + reason})
	}
}

func agentEnds(phase corev1.PodPhase, code int32) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.Phase = phase
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: "example.invalid/agent:1", State: terminated(code, 0, "Completed")}}
	}
}

// TestWorkerPodEnds plays the cluster ending a running, bound Pod in each
// way Kubernetes has, and checks the crash record's reason, that the next
// Pod is started, and that the Worker never counts two live Pods: a lost
// node's Pod is force-deleted, any other one is left for its kubelet.
func TestWorkerPodEnds(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	ctx := context.Background()
	del := func(grace int64) func(t *testing.T, pod string) {
		return func(t *testing.T, pod string) {
			opts := []client.DeleteOption{}
			if grace >= 0 {
				opts = append(opts, client.GracePeriodSeconds(grace))
			}
			// A lost node's Pod may be gone already: its condition is enough.
			err := c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: pod}}, opts...)
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
	}
	status := func(edits ...func(*corev1.PodStatus)) func(t *testing.T, pod string) {
		return func(t *testing.T, pod string) {
			setPodStatus(t, c, pod, func(st *corev1.PodStatus) {
				for _, e := range edits {
					e(st)
				}
			})
		}
	}
	cases := []struct {
		name    string
		sidecar bool
		// steps play the node lifecycle controller, the taint manager,
		// the Eviction API, the scheduler or someone deleting the Pod,
		// and the kubelet.
		steps      []func(t *testing.T, pod string)
		wantReason string
		wantExit   int32
		wantEvent  string
		// forced: tether deleted the ended Pod at once; else it is left
		// terminating for its kubelet.
		forced bool
	}{
		{name: "taint-eviction", steps: []func(*testing.T, string){status(nodeStopsReporting, disruptionTarget("DeletionByTaintManager")), del(-1)},
			wantReason: controllers.ReasonNodeLost, wantEvent: "DeletionByTaintManager", forced: true},
		{name: "node-not-ready", steps: []func(*testing.T, string){status(nodeStopsReporting)},
			wantReason: controllers.ReasonNodeLost, wantEvent: "not ready by its node's doing", forced: true},
		{name: "stuck-terminating", steps: []func(*testing.T, string){del(1)},
			wantReason: controllers.ReasonNodeLost, wantEvent: "no kubelet confirmed it", forced: true},
		{name: "drain", steps: []func(*testing.T, string){status(disruptionTarget("EvictionByEvictionAPI")), del(-1), status(agentEnds(corev1.PodSucceeded, 0))},
			wantReason: controllers.ReasonEvicted, wantExit: 0, wantEvent: "was evicted"},
		{name: "preempted", steps: []func(*testing.T, string){status(disruptionTarget(corev1.PodReasonPreemptionByScheduler)), del(-1), status(agentEnds(corev1.PodFailed, 143))},
			wantReason: controllers.ReasonPreempted, wantEvent: "was preempted"},
		{name: "taint-eviction-confirmed", steps: []func(*testing.T, string){status(disruptionTarget("DeletionByTaintManager")), del(-1), status(agentEnds(corev1.PodSucceeded, 0))},
			wantReason: controllers.ReasonEvicted, wantEvent: "DeletionByTaintManager"},
		{name: "deleted-exit-0", steps: []func(*testing.T, string){del(-1), status(agentEnds(corev1.PodSucceeded, 0))},
			wantReason: controllers.ReasonPodDeleted, wantExit: 0, wantEvent: "deleted by someone other than tether"},
		{name: "sidecar", sidecar: true, steps: []func(*testing.T, string){status(func(st *corev1.PodStatus) {
			st.ContainerStatuses[0].State = terminated(1, 0, "Error")
		})}, wantReason: "Exited", wantExit: 1, wantEvent: "exited with code 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := podWorker(tc.name, 10)
			if tc.sidecar {
				w.Spec.Template.Spec.Containers = append(w.Spec.Template.Spec.Containers, corev1.Container{Name: "proxy", Image: "example.invalid/proxy:1"})
			}
			if err := c.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			first, next := tc.name+"-0", tc.name+"-1"
			waitPodWorker(t, c, tc.name, "created a pod", func(w *v1.Worker) bool { return w.Status.PodName == first })
			bind(t, c, first)
			setPodStatus(t, c, first, func(st *corev1.PodStatus) {
				st.Phase = corev1.PodRunning
				setCondition(st, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
				st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: "example.invalid/agent:1", State: running()}}
				if tc.sidecar {
					st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: "proxy", Image: "example.invalid/proxy:1", State: running()})
				}
			})
			waitPodWorker(t, c, tc.name, "Running", func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning })
			for _, step := range tc.steps {
				step(t, first)
			}
			w = waitPodWorker(t, c, tc.name, "restarted as "+next, func(w *v1.Worker) bool { return w.Status.PodName == next })
			if len(w.Status.Crashes) != 1 {
				t.Fatalf("%d crash records, want 1: %+v", len(w.Status.Crashes), w.Status.Crashes)
			}
			rec := w.Status.Crashes[0]
			if rec.Reason != tc.wantReason || !rec.Restarted {
				t.Errorf("crash record %+v; want reason %s, restarted", rec, tc.wantReason)
			}
			if tc.wantExit != 0 && (rec.ExitCode == nil || *rec.ExitCode != tc.wantExit) {
				t.Errorf("exit code %v, want %d", rec.ExitCode, tc.wantExit)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				evs := podEvents(t, c, tc.name, controllers.EventWorkerCrashed)
				if len(evs) == 1 && strings.Contains(evs[0].Message, tc.wantEvent) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("Events %+v; want one %s naming %q", evs, controllers.EventWorkerCrashed, tc.wantEvent)
				}
				time.Sleep(50 * time.Millisecond)
			}
			old := &corev1.Pod{}
			err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: first}, old)
			// The end is recorded, and its Event sent, before the lost
			// node's Pod is deleted: the deletion may still be on its way.
			for deadline := time.Now().Add(10 * time.Second); tc.forced && err == nil && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				err = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: first}, old)
			}
			switch {
			case tc.forced && !apierrors.IsNotFound(err):
				t.Errorf("the lost node's pod %s is still there (%v)", first, err)
			case !tc.forced && err != nil:
				t.Errorf("pod %s: %v; want it left terminating for its kubelet", first, err)
			case !tc.forced && (old.DeletionTimestamp.IsZero() || old.DeletionGracePeriodSeconds == nil || *old.DeletionGracePeriodSeconds == 0):
				t.Errorf("pod %s: deletion %v, grace %v; want a graceful deletion in progress", first, old.DeletionTimestamp, old.DeletionGracePeriodSeconds)
			}
			if tc.sidecar && *old.DeletionGracePeriodSeconds != 5 {
				t.Errorf("the ended agent's pod was deleted with grace %d, want the template's 5", *old.DeletionGracePeriodSeconds)
			}
			kubeletRemoves(t, c, first)
			// The restart is the only crash: the Worker stays on the new Pod.
			time.Sleep(300 * time.Millisecond)
			if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				t.Fatal(err)
			}
			if w.Status.PodName != next || len(w.Status.Crashes) != 1 {
				t.Errorf("after pod %s went: pod %q, %d crashes; want %s, 1", first, w.Status.PodName, len(w.Status.Crashes), next)
			}
		})
	}
}

// TestWorkerPodsCrashLoop crashes a Worker's Pods until its crash budget is
// spent: then no new Pod is created and the phase says why.
func TestWorkerPodsCrashLoop(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	if err := c.Create(context.Background(), podWorker("looper", 2)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		current := fmt.Sprintf("looper-%d", i)
		waitPodWorker(t, c, "looper", "running "+current, func(w *v1.Worker) bool { return w.Status.PodName == current })
		kubelet(t, c, current, corev1.PodFailed, "", terminated(137, 9, "Error"))
		w := waitPodWorker(t, c, "looper", "past "+current, func(w *v1.Worker) bool { return w.Status.PodName != current })
		if w.Status.PodName == "" {
			if w.Status.Phase != v1.WorkerCrashLoop {
				t.Fatalf("after %d crashes no new pod, phase %q; want CrashLoop", i+1, w.Status.Phase)
			}
			if i+1 != 2 || len(w.Status.Crashes) != 2 {
				t.Fatalf("maxCrashes 2 ended in CrashLoop after %d crashes with %d records; want 2, 2", i+1, len(w.Status.Crashes))
			}
			loop := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionCrashLoop)
			want := "2 crashes in 10m0s; restart by hand with `tether worker restart looper -n default`"
			if loop == nil || loop.Status != metav1.ConditionTrue || loop.Reason != v1.ReasonRestartsExhausted || loop.Message != want {
				t.Fatalf("CrashLoop condition %+v; want True, %s, %q", loop, v1.ReasonRestartsExhausted, want)
			}
			break
		}
		if i > 5 {
			t.Fatal("the crash budget never ran out")
		}
	}
	time.Sleep(500 * time.Millisecond)
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace("default"), client.MatchingLabels{controllers.WorkerLabel: "looper"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodFailed {
			t.Errorf("pod %s (%s) exists after CrashLoop", p.Name, p.Status.Phase)
		}
	}
}

// TestWorkerPodStuckPending reports a Pod that cannot start (its image
// cannot be pulled, no node fits it) as stuck, not as a crash loop.
func TestWorkerPodStuckPending(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	cases := []struct {
		name  string
		stuck func(*corev1.PodStatus)
		want  string
	}{
		{name: "image", stuck: func(st *corev1.PodStatus) {
			st.Phase = corev1.PodPending
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: "example.invalid/agent:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "example.invalid/agent:1"`,
			}}}}
		}, want: "container agent: ImagePullBackOff: Back-off pulling image"},
		{name: "unschedulable", stuck: func(st *corev1.PodStatus) {
			st.Phase = corev1.PodPending
			setCondition(st, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient memory."})
		}, want: "Unschedulable: 0/3 nodes are available: 3 Insufficient memory."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Create(context.Background(), podWorker(tc.name, 2)); err != nil {
				t.Fatal(err)
			}
			pod := tc.name + "-0"
			waitPodWorker(t, c, tc.name, "created a pod", func(w *v1.Worker) bool { return w.Status.PodName == pod })
			setPodStatus(t, c, pod, tc.stuck)
			w := waitPodWorker(t, c, tc.name, "reported stuck", func(w *v1.Worker) bool {
				ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
				return ready != nil && ready.Reason == controllers.ReasonPodStuck
			})
			ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
			if w.Status.Phase != v1.WorkerPending || len(w.Status.Crashes) != 0 || w.Status.PodName != pod {
				t.Errorf("a stuck pod: phase %q, %d crashes, pod %q; want Pending, none, %s", w.Status.Phase, len(w.Status.Crashes), w.Status.PodName, pod)
			}
			if !strings.Contains(ready.Message, tc.want) {
				t.Errorf("Ready message %q does not say %q", ready.Message, tc.want)
			}
		})
	}
}

// podEvents lists the Events of kind reason recorded on a Worker.
func podEvents(t *testing.T, c client.Client, worker, reason string) []corev1.Event {
	t.Helper()
	list := &corev1.EventList{}
	if err := c.List(context.Background(), list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Worker" && e.InvolvedObject.Name == worker && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func workerPods(t *testing.T, c client.Client, worker string) []string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace("default"), client.MatchingLabels{controllers.WorkerLabel: worker}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// TestWorkerPodInvalidTemplate checks spec.template, which the CRD keeps
// schemaless, by a server-side dry-run create before each Pod: a template
// the API server finds invalid creates no Pod, and the Worker says which
// of its fields is wrong in its Ready condition (InvalidTemplate) and in a
// Warning Event, both for its first Pod and for a restart after a crash.
func TestWorkerPodInvalidTemplate(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	ctx := context.Background()

	wantInvalid := func(name string, fields ...string) {
		t.Helper()
		w := waitPodWorker(t, c, name, "reported its invalid template", func(w *v1.Worker) bool {
			ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
			return ready != nil && ready.Reason == controllers.ReasonInvalidTemplate
		})
		ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
		for _, f := range fields {
			if !strings.Contains(ready.Message, f) {
				t.Errorf("worker %s: Ready message %q does not name %s", name, ready.Message, f)
			}
		}
		if w.Status.Phase != v1.WorkerCrashed || ready.Status != metav1.ConditionFalse {
			t.Errorf("worker %s: phase %q, Ready %s; want Crashed, False", name, w.Status.Phase, ready.Status)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(podEvents(t, c, name, controllers.EventInvalidTemplate)) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("worker %s: no %s Event", name, controllers.EventInvalidTemplate)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// It stays so: later reconciles of the Crashed Worker keep the
		// field the server named.
		time.Sleep(time.Second)
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			t.Fatal(err)
		}
		if again := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady); again == nil || again.Reason != controllers.ReasonInvalidTemplate {
			t.Errorf("worker %s: Ready became %+v; want it to stay %s", name, again, controllers.ReasonInvalidTemplate)
		}
		ev := podEvents(t, c, name, controllers.EventInvalidTemplate)[0]
		if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Message, fields[0]) {
			t.Errorf("worker %s: Event %s %q; want a Warning naming %s", name, ev.Type, ev.Message, fields[0])
		}
	}

	// No image, and a bad port in a second container: two causes, both
	// named as the Worker's fields.
	bad := podWorker("bad", 10)
	bad.Spec.Template.Spec.Containers[0].Image = ""
	bad.Spec.Template.Spec.Containers = append(bad.Spec.Template.Spec.Containers, corev1.Container{
		Name: "sidecar", Image: "example.invalid/sidecar:1", Ports: []corev1.ContainerPort{{ContainerPort: 70000}},
	})
	if err := c.Create(ctx, bad); err != nil {
		t.Fatalf("the CRD refused a schemaless template: %v", err)
	}
	wantInvalid("bad", "spec.template.spec.containers[0].image: Required value", "spec.template.spec.containers[1].ports[0].containerPort")
	time.Sleep(300 * time.Millisecond)
	if pods := workerPods(t, c, "bad"); len(pods) != 0 {
		t.Errorf("an invalid template created pods %v", pods)
	}
	if n := len(podEvents(t, c, "bad", controllers.EventInvalidTemplate)); n != 1 {
		t.Errorf("%d InvalidTemplate Events, want 1", n)
	}
	// Fixing the template is enough: the Pod follows the edit, as a
	// Deployment's would, with no `tether worker restart`.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(bad), bad); err != nil {
			return err
		}
		bad.Spec.Template.Spec.Containers = []corev1.Container{{Name: "agent", Image: "example.invalid/agent:1"}}
		return c.Update(ctx, bad)
	})
	if err != nil {
		t.Fatal(err)
	}
	fixed := waitPodWorker(t, c, "bad", "created a pod from the fixed template", func(w *v1.Worker) bool { return w.Status.PodName != "" })
	if pods := workerPods(t, c, "bad"); !slices.Equal(pods, []string{fixed.Status.PodName}) {
		t.Errorf("pods %v after the fix, want only %s", pods, fixed.Status.PodName)
	}
	if ready := meta.FindStatusCondition(fixed.Status.Conditions, v1.ConditionReady); ready == nil || ready.Reason == controllers.ReasonInvalidTemplate {
		t.Errorf("Ready %+v after the fix; want the refusal gone", ready)
	}

	// A template broken while its Pod runs is caught at the restart.
	w := podWorker("edited", 10)
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitPodWorker(t, c, "edited", "created a pod", func(w *v1.Worker) bool { return w.Status.PodName == "edited-0" })
	kubelet(t, c, "edited-0", corev1.PodRunning, "", running())
	waitPodWorker(t, c, "edited", "Running", func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning })
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	w.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "OK", Value: "1"}, {Name: "", Value: "nameless"}}
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	kubelet(t, c, "edited-0", corev1.PodFailed, "", terminated(137, 9, "Error"))
	wantInvalid("edited", "spec.template.spec.containers[0].env[1].name: Required value")
	w = waitPodWorker(t, c, "edited", "recorded the crash", func(w *v1.Worker) bool { return len(w.Status.Crashes) == 1 })
	if w.Status.PodName != "" || w.Status.Crashes[0].Restarted {
		t.Errorf("after a crash with an invalid template: pod %q, crash record %+v; want no pod, not restarted", w.Status.PodName, w.Status.Crashes[0])
	}
	if pods := workerPods(t, c, "edited"); !slices.Equal(pods, []string{"edited-0"}) {
		t.Errorf("pods %v after the refused restart, want only edited-0", pods)
	}
}

// TestWorkerPodDeletedOnLostNode deletes a Worker whose Pod is on a node
// that no longer answers: the finalizer's graceful delete is never
// confirmed, so once it is overdue the Pod is deleted with grace 0 and
// the Worker goes.
func TestWorkerPodDeletedOnLostNode(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	ctx := context.Background()
	w := podWorker("orphan", 10)
	grace := int64(1)
	w.Spec.Template.Spec.TerminationGracePeriodSeconds = &grace
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitPodWorker(t, c, "orphan", "created a pod", func(w *v1.Worker) bool { return w.Status.PodName == "orphan-0" })
	bind(t, c, "orphan-0")
	kubelet(t, c, "orphan-0", corev1.PodRunning, "", running())
	waitPodWorker(t, c, "orphan", "Running", func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning })
	if err := c.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitPod(t, c, "orphan-0", "deleted by the finalizer", func(p *corev1.Pod) bool { return !p.DeletionTimestamp.IsZero() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Get(ctx, client.ObjectKeyFromObject(w), &v1.Worker{})
		if apierrors.IsNotFound(err) && len(workerPods(t, c, "orphan")) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker (%v) or its pods %v stayed with no kubelet to confirm", err, workerPods(t, c, "orphan"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWorkerStrayPods plays what an operator that stopped between
// recording a Pod's end and deleting that Pod leaves behind: Pods of the
// Worker that are neither its current Pod nor ended. The next reconcile
// deletes each, a lost node's at once with grace 0 and a running one with
// the template's grace period (forced once that is overdue, as no kubelet
// answers here), and says so in an Event. The current Pod, and the Pod
// that the Worker's next start would adopt (left by a start whose status
// write was lost), are kept.
func TestWorkerStrayPods(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	ctx := context.Background()
	w := podWorker("stray", 10)
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitPodWorker(t, c, "stray", "created a pod", func(w *v1.Worker) bool { return w.Status.PodName == "stray-0" })
	bind(t, c, "stray-0")
	kubelet(t, c, "stray-0", corev1.PodRunning, "", running())
	w = waitPodWorker(t, c, "stray", "Running", func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning })

	strays := []struct {
		name      string
		status    func(*corev1.PodStatus)
		wantEvent string
	}{
		{name: "stray-sidecar", status: func(st *corev1.PodStatus) {
			st.Phase = corev1.PodRunning
			st.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "agent", Image: "example.invalid/agent:1", State: terminated(0, 0, "Completed")},
				{Name: "proxy", Image: "example.invalid/proxy:1", State: running()},
			}
		}, wantEvent: "it is still running"},
		{name: "stray-lost-node", status: func(st *corev1.PodStatus) {
			st.Phase = corev1.PodRunning
			st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
		}, wantEvent: "not ready by its node's doing"},
	}
	create := func(name string, status func(*corev1.PodStatus)) {
		t.Helper()
		current := getPod(t, c, "stray-0")
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: current.Labels}, Spec: current.Spec}
		pod.Spec.NodeName = ""
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		bind(t, c, name)
		setPodStatus(t, c, name, status)
		// The Worker owns it only now, so its first look sees it whole.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pod := getPod(t, c, name)
			pod.OwnerReferences = current.OwnerReferences
			return c.Update(ctx, pod)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The name the next restart gives its Pod: kept for that start to adopt.
	next := fmt.Sprintf("stray-%d", w.Status.Restarts+1)
	create(next, func(st *corev1.PodStatus) { st.Phase = corev1.PodPending })
	for _, s := range strays {
		create(s.name, s.status)
	}
	for _, s := range strays {
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: s.name}, &corev1.Pod{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stray pod %s was never deleted (%v); pods %v", s.name, err, workerPods(t, c, "stray"))
			}
			time.Sleep(50 * time.Millisecond)
		}
		found := false
		for _, e := range podEvents(t, c, "stray", controllers.EventStrayPodDeleted) {
			if strings.Contains(e.Message, "deleted pod "+s.name+":") && strings.Contains(e.Message, "current pod (that is stray-0)") && strings.Contains(e.Message, s.wantEvent) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s Event for %s saying %q: %+v", controllers.EventStrayPodDeleted, s.name, s.wantEvent, podEvents(t, c, "stray", controllers.EventStrayPodDeleted))
		}
	}
	for _, keep := range []string{"stray-0", next} {
		if p := getPod(t, c, keep); !p.DeletionTimestamp.IsZero() {
			t.Errorf("pod %s was deleted; it is the current pod or the next start's", keep)
		}
	}
	if got := waitPodWorker(t, c, "stray", "kept", func(*v1.Worker) bool { return true }); got.Status.PodName != "stray-0" || len(got.Status.Crashes) != 0 {
		t.Errorf("worker status changed by the strays: pod %q, crashes %+v", got.Status.PodName, got.Status.Crashes)
	}
}

// TestWorkerPodRunningInAPhaseSetByHand: a Pod that starts running while
// status.phase was edited by hand to one it cannot start from is no
// reconcile error and not dropped silently: the phase is kept, and the
// Ready condition and a Warning Event say that the transition was refused.
func TestWorkerPodRunningInAPhaseSetByHand(t *testing.T) {
	env := startPodWorkers(t)
	c := env.Client
	ctx := context.Background()
	if err := c.Create(ctx, podWorker("edited", 3)); err != nil {
		t.Fatal(err)
	}
	waitPodWorker(t, c, "edited", "with pod edited-0", func(w *v1.Worker) bool { return w.Status.PodName == "edited-0" })
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &v1.Worker{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "edited"}, w); err != nil {
			return err
		}
		w.Status.Phase = v1.WorkerStopped
		return c.Status().Update(ctx, w)
	}); err != nil {
		t.Fatal(err)
	}
	kubelet(t, c, "edited-0", corev1.PodRunning, "", running())
	w := waitPodWorker(t, c, "edited", "refusing started in Stopped", func(w *v1.Worker) bool {
		ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
		return ready != nil && ready.Reason == controllers.ReasonInvalidTransition
	})
	ready := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionReady)
	if w.Status.Phase != v1.WorkerStopped || !strings.Contains(ready.Message, "worker event started is not valid in phase Stopped") {
		t.Fatalf("phase %s, Ready %+v; want Stopped kept and the refused event named", w.Status.Phase, ready)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(podEvents(t, c, "edited", controllers.ReasonInvalidTransition)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no Warning Event %s", controllers.ReasonInvalidTransition)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if started := podEvents(t, c, "edited", controllers.EventWorkerStarted); len(started) != 0 {
		t.Fatalf("a %s Event for a start the phase table refused: %+v", controllers.EventWorkerStarted, started)
	}
}

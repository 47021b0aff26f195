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

package top_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/top"
)

// now is the fixed clock of every frame, so that ages are deterministic.
var now = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func microAgo(d time.Duration) *metav1.MicroTime {
	t := metav1.NewMicroTime(now.Add(-d))
	return &t
}

func timeAgo(d time.Duration) *metav1.Time {
	t := ago(d)
	return &t
}

// fixture is one object and what it is given: set sets its spec before
// creation and its status, written after creation through the status
// subresource.
type fixture struct {
	obj client.Object
	set func(client.Object)
}

func hook(name string, steps int, status func(*v1.Hook)) fixture {
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	h.Spec.Goal = "goal of " + name
	for i := range steps {
		h.Spec.Steps = append(h.Spec.Steps, v1.Step{Name: []string{"reproduce", "implement", "test", "document"}[i]})
	}
	f := fixture{obj: h}
	if status != nil {
		f.set = func(o client.Object) { status(o.(*v1.Hook)) }
	}
	return f
}

func worker(name string, status func(*v1.Worker)) fixture {
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	w.Spec.Command = []string{"agent", name}
	f := fixture{obj: w}
	if status != nil {
		f.set = func(o client.Object) { status(o.(*v1.Worker)) }
	}
	return f
}

func warning(name, kind, object, reason, message string, at time.Duration, count int32) fixture {
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: kind, APIVersion: v1.GroupVersion.String(), Name: object, Namespace: "default"},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: message,
		FirstTimestamp: ago(at), LastTimestamp: ago(at), Count: count,
		Source: corev1.EventSource{Component: "tether-worker-controller"},
	}
	return fixture{obj: e}
}

func step(index int32, name string, attempt int32) *v1.CurrentStep {
	return &v1.CurrentStep{Index: index, Name: name, Attempt: attempt}
}

// busy is several Hooks in different states and Workers.
func busy() []fixture {
	return []fixture{
		hook("fix-login", 3, func(h *v1.Hook) {
			h.Spec.Assignee = "agent-1"
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookStepRunning, step(1, "implement", 1), microAgo(30*time.Second)
			h.Status.LastCheckpoint = &v1.LastCheckpoint{Name: "fix-login-2", Seq: 2, Time: ago(4 * time.Minute), Trigger: v1.TriggerStepComplete}
		}),
		hook("add-tests", 2, func(h *v1.Hook) {
			h.Spec.Assignee = "agent-2"
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookStepValidating, step(0, "reproduce", 2), microAgo(4*time.Minute)
		}),
		hook("migrate-db", 2, func(h *v1.Hook) {
			h.Spec.Assignee = "agent-3"
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookStepRunning, step(1, "implement", 3), microAgo(7*time.Minute)
		}),
		hook("write-docs", 4, func(h *v1.Hook) {
			h.Spec.Suspend = true
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookAwaitingHuman, step(3, "document", 1), microAgo(20*time.Minute)
		}),
		hook("release", 1, func(h *v1.Hook) {
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookCompleted, step(0, "reproduce", 1), microAgo(2*time.Hour)
			h.Status.LastCheckpoint = &v1.LastCheckpoint{Name: "release-1", Seq: 1, Time: ago(2 * time.Hour), Trigger: v1.TriggerValidationPass}
		}),
		hook("new-task", 2, nil),
		worker("agent-1", func(w *v1.Worker) {
			w.Status.Phase, w.Status.PID, w.Status.StartedAt = v1.WorkerRunning, 4242, timeAgo(12*time.Minute)
		}),
		worker("agent-2", func(w *v1.Worker) {
			w.Status.Phase, w.Status.PID, w.Status.StartedAt, w.Status.Restarts = v1.WorkerRunning, 5151, timeAgo(90*time.Second), 1
			w.Status.Crashes = []v1.CrashRecord{{Time: ago(2 * time.Minute), PID: 5150, Reason: "Exited", ExitCode: ptr(int32(1)), Restarted: true}}
		}),
		worker("agent-3", func(w *v1.Worker) { w.Status.Phase = v1.WorkerPending }),
		podWorker("agent-4", func(w *v1.Worker) {
			w.Status.Phase, w.Status.PodName, w.Status.StartedAt = v1.WorkerRunning, "agent-4-x7k2p", timeAgo(5*time.Minute)
		}),
	}
}

// handEdited is a Hook whose status a hand edit set to completed, as the
// Hook reconciler found (HistoryConsistent=False), beside one that agrees.
func handEdited() []fixture {
	return []fixture{
		hook("hand-edited", 2, func(h *v1.Hook) {
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookCompleted, step(0, "reproduce", 1), microAgo(10*time.Minute)
			h.Status.Conditions = []metav1.Condition{{Type: v1.ConditionHistoryConsistent, Status: metav1.ConditionFalse, Reason: v1.ReasonHistoryMismatch,
				Message: "status.state is completed; history says step_running", LastTransitionTime: ago(time.Minute)}}
		}),
		hook("untouched", 2, func(h *v1.Hook) {
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookStepRunning, step(0, "reproduce", 1), microAgo(time.Minute)
			h.Status.Conditions = []metav1.Condition{{Type: v1.ConditionHistoryConsistent, Status: metav1.ConditionTrue, Reason: v1.ReasonHistoryMatches,
				Message: "agrees", LastTransitionTime: ago(time.Minute)}}
		}),
	}
}

// podWorker is a Worker run as a Pod (cluster mode).
func podWorker(name string, status func(*v1.Worker)) fixture {
	f := worker(name, status)
	w := f.obj.(*v1.Worker)
	w.Spec.Command = nil
	w.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:1"}}}}
	return f
}

// crash is a Worker that crashed too often, and the Warning Events that
// said so, beside a Hook its crash left recovering.
func crash() []fixture {
	return []fixture{
		hook("fix-login", 3, func(h *v1.Hook) {
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookRecovering, step(1, "implement", 1), microAgo(3*time.Minute)
			h.Status.Recovery = &v1.RecoveryStatus{CrashType: v1.CrashAssigneeLost, DetectedAt: ago(time.Minute), LastState: v1.HookStepRunning, RecommendedAction: "run `tether resume fix-login`"}
		}),
		worker("agent-1", func(w *v1.Worker) {
			w.Spec.Restart.Auto = true
			w.Status.Phase, w.Status.Restarts = v1.WorkerCrashLoop, 2
			for i, d := range []time.Duration{5 * time.Minute, 3 * time.Minute, time.Minute} {
				w.Status.Crashes = append(w.Status.Crashes, v1.CrashRecord{Time: ago(d), PID: int32(100 + i), Reason: "Exited", ExitCode: ptr(int32(3)), Hook: "fix-login", Restarted: i < 2})
			}
		}),
		warning("agent-1.crashed", "Worker", "agent-1", "WorkerCrashed", "exit code 3; held fix-login;\nrestarted", 3*time.Minute, 2),
		warning("agent-1.exhausted", "Worker", "agent-1", "RestartsExhausted", "restarts exhausted: 3 crashes in 10m0s (maxCrashes 3); restart it by hand with `tether worker restart agent-1 -n default`", time.Minute, 1),
		warning("fix-login.lost", "Hook", "fix-login", "AssigneeLost", "worker agent-1 died: fix-login is free", time.Minute, 1),
	}
}

func ptr[T any](v T) *T { return &v }

func seed(t *testing.T, c client.Client, fixtures []fixture) {
	t.Helper()
	ctx := context.Background()
	for _, f := range fixtures {
		if f.set != nil {
			f.set(f.obj)
		}
		if err := c.Create(ctx, f.obj); err != nil {
			t.Fatalf("creating %s: %v", f.obj.GetName(), err)
		}
		if f.set == nil {
			continue
		}
		// Create keeps the spec and drops the status, as an API server does.
		f.set(f.obj)
		if err := c.Status().Update(ctx, f.obj); err != nil {
			t.Fatalf("status of %s: %v", f.obj.GetName(), err)
		}
	}
}

func once(t *testing.T, c client.WithWatch, namespace string) string {
	t.Helper()
	src, err := top.NewSource(c, namespace)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := top.Once(ctx, src, top.Options{Namespace: namespace, Now: func() time.Time { return now }}, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestOnce renders `tether top --once` frames of the file store: plain
// text, no escape sequence, every age from the fixed clock.
func TestOnce(t *testing.T) {
	other := func() fixture {
		f := hook("other-task", 1, func(h *v1.Hook) {
			h.Status.State, h.Status.CurrentStep, h.Status.LastHeartbeat = v1.HookStepPending, step(0, "reproduce", 1), microAgo(time.Minute)
		})
		f.obj.SetNamespace("team-a")
		return f
	}
	for _, tc := range []struct {
		name      string
		namespace string
		fixtures  []fixture
	}{
		{"empty", "default", nil},
		{"busy", "default", busy()},
		{"crash", "default", crash()},
		{"history-mismatch", "default", handEdited()},
		{"all-namespaces", "", append(crash(), other())},
		{"other-namespace", "team-a", append(crash(), other())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testsupport.Store(t, "").Client()
			seed(t, c, tc.fixtures)
			out := once(t, c, tc.namespace)
			if strings.Contains(out, "\x1b") {
				t.Errorf("the frame holds escape sequences:\n%q", out)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestOnceOnBothBackends renders the same objects on the file store and
// on a real kube-apiserver: the frames are the same, so the view watches
// both alike.
func TestOnceOnBothBackends(t *testing.T) {
	env := testenv.Start(t)
	seed(t, env.Client, crash())
	file := testsupport.Store(t, "").Client()
	seed(t, file, crash())
	if got, want := once(t, env.Client, "default"), once(t, file, "default"); got != want {
		t.Fatalf("kube-apiserver frame:\n%s\nfile store frame:\n%s", got, want)
	}
}

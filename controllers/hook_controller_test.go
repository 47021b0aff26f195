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
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// drive applies events to h, one second apart from t0; the last one is the
// heartbeat the reconciler measures from.
func drive(t *testing.T, h *v1.Hook, events ...hookfsm.Event) time.Time {
	t.Helper()
	now := t0
	for i, e := range events {
		now = t0.Add(time.Duration(i) * time.Second)
		in := hookfsm.Input{Event: e, Now: metav1.NewTime(now), Actor: "test-agent"}
		if e == hookfsm.Await {
			in.Message = "which database?"
		}
		st, err := hookfsm.Apply(h, in)
		if err != nil {
			t.Fatal(err)
		}
		h.Status = *st
	}
	return now
}

func condition(h *v1.Hook, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(h.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func TestHookReconcile(t *testing.T) {
	const staleAfter = 2 * time.Minute
	begun := []hookfsm.Event{hookfsm.Initialize, hookfsm.Begin}
	cases := []struct {
		name    string
		events  []hookfsm.Event
		suspend bool
		// after is how long after the last event the reconcile runs.
		after       time.Duration
		wantState   v1.HookState
		wantCrash   v1.CrashType
		wantAction  string
		wantRequeue time.Duration
		ready       metav1.ConditionStatus
		readyReason string
		stale       metav1.ConditionStatus
		recovering  metav1.ConditionStatus
	}{
		{
			name: "new hook is initialized", after: time.Hour,
			wantState: v1.HookStepPending, ready: metav1.ConditionTrue, readyReason: v1.ReasonProgressing,
			stale: metav1.ConditionFalse, recovering: metav1.ConditionFalse,
		},
		{
			name: "running with a fresh heartbeat requeues at the due time", events: begun, after: 90 * time.Second,
			wantState: v1.HookStepRunning, wantRequeue: 30 * time.Second,
			ready: metav1.ConditionTrue, readyReason: v1.ReasonProgressing, stale: metav1.ConditionFalse, recovering: metav1.ConditionFalse,
		},
		{
			name: "running at exactly the due time goes stale", events: begun, after: staleAfter,
			wantState: v1.HookRecovering, wantCrash: v1.CrashStaleHeartbeat, wantAction: "as attempt 2",
			ready: metav1.ConditionFalse, readyReason: v1.ReasonHeartbeatExpired, stale: metav1.ConditionTrue, recovering: metav1.ConditionTrue,
		},
		{
			name: "validating goes stale as an interrupted validation", events: append(begun, hookfsm.Validate), after: time.Hour,
			wantState: v1.HookRecovering, wantCrash: v1.CrashValidationInterrupted, wantAction: "re-run validation",
			ready: metav1.ConditionFalse, readyReason: v1.ReasonValidationInterrupted, stale: metav1.ConditionTrue, recovering: metav1.ConditionTrue,
		},
		{
			name: "suspended never goes stale", events: begun, suspend: true, after: time.Hour,
			wantState: v1.HookStepRunning,
			ready:     metav1.ConditionFalse, readyReason: v1.ReasonSuspended, stale: metav1.ConditionTrue, recovering: metav1.ConditionFalse,
		},
		{
			name: "pending after a passed step goes stale", events: append(begun, hookfsm.Validate, hookfsm.Pass), after: time.Hour,
			wantState: v1.HookRecovering, wantCrash: v1.CrashStaleHeartbeat, wantAction: "step begin",
			ready: metav1.ConditionFalse, readyReason: v1.ReasonHeartbeatExpired, stale: metav1.ConditionTrue, recovering: metav1.ConditionTrue,
		},
		{
			name: "pending fresh from initialization waits for an agent", events: []hookfsm.Event{hookfsm.Initialize}, after: time.Hour,
			wantState: v1.HookStepPending,
			ready:     metav1.ConditionTrue, readyReason: v1.ReasonProgressing, stale: metav1.ConditionFalse, recovering: metav1.ConditionFalse,
		},
		{
			name: "awaiting a human expects no heartbeat", events: append(begun, hookfsm.Await), after: time.Hour,
			wantState: v1.HookAwaitingHuman,
			ready:     metav1.ConditionFalse, readyReason: v1.ReasonAwaitingHuman, stale: metav1.ConditionFalse, recovering: metav1.ConditionFalse,
		},
		{
			name: "completed", events: append(begun, hookfsm.Validate, hookfsm.Pass, hookfsm.Begin, hookfsm.Validate, hookfsm.Pass), after: time.Hour,
			wantState: v1.HookCompleted,
			ready:     metav1.ConditionTrue, readyReason: v1.ReasonSucceeded, stale: metav1.ConditionFalse, recovering: metav1.ConditionFalse,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newStore(t)
			ctx := context.Background()
			h := newHook("task", staleAfter, "build", "test")
			h.Spec.Suspend = c.suspend
			if err := env.c.Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			last := t0
			if len(c.events) > 0 {
				last = drive(t, h, c.events...)
				if err := env.c.Status().Update(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			now := last.Add(c.after)
			recoveryDir := t.TempDir()
			r := &controllers.HookReconciler{
				Client: env.c, Events: env.mgr.GetEventRecorder(controllers.HookControllerName),
				Config: testConfig(t), RecoveryDir: recoveryDir, Now: func() time.Time { return now },
			}
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "task"}}
			res, err := r.Reconcile(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got := &v1.Hook{}
			if err := env.c.Get(ctx, req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.State != c.wantState {
				t.Fatalf("state %s, want %s", got.Status.State, c.wantState)
			}
			if res.RequeueAfter != c.wantRequeue {
				t.Errorf("RequeueAfter %s, want %s", res.RequeueAfter, c.wantRequeue)
			}
			if c.wantCrash != "" {
				rec := got.Status.Recovery
				if rec == nil || rec.CrashType != c.wantCrash || !rec.DetectedAt.Time.Equal(now) || !strings.Contains(rec.RecommendedAction, c.wantAction) {
					t.Errorf("recovery %+v, want crash %s detected at %s, action containing %q", rec, c.wantCrash, now, c.wantAction)
				}
			} else if got.Status.Recovery != nil {
				t.Errorf("recovery %+v, want none", got.Status.Recovery)
			}
			for _, w := range []struct {
				typ    string
				status metav1.ConditionStatus
			}{{v1.ConditionReady, c.ready}, {v1.ConditionStale, c.stale}, {v1.ConditionRecovering, c.recovering}, {v1.ConditionHistoryConsistent, metav1.ConditionTrue}} {
				cond := condition(got, w.typ)
				if cond.Status != w.status || cond.ObservedGeneration != got.Generation {
					t.Errorf("%s = %s (%s: %s, generation %d), want %s at generation %d", w.typ, cond.Status, cond.Reason, cond.Message, cond.ObservedGeneration, w.status, got.Generation)
				}
			}
			if ready := condition(got, v1.ConditionReady); ready.Reason != c.readyReason {
				t.Errorf("Ready reason %s, want %s", ready.Reason, c.readyReason)
			}
			if got.Status.ObservedGeneration != got.Generation {
				t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, got.Generation)
			}
			file, err := os.ReadFile(got.Status.RecoveryFile)
			if err != nil {
				t.Fatalf("recovery file: %v", err)
			}
			if want := recoveryfile.Render(got, recoveryfile.Options{}); string(file) != string(want) {
				t.Errorf("recovery file differs from the rendering of the stored object")
			}
			if c.suspend && !strings.Contains(string(file), "PAUSED") {
				t.Error("the recovery file of a suspended hook does not say so")
			}

			// Idempotent: reconciling again writes nothing more, also
			// later when nothing is scheduled.
			if c.wantRequeue == 0 {
				now = now.Add(time.Hour)
			}
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			again := &v1.Hook{}
			if err := env.c.Get(ctx, req.NamespacedName, again); err != nil {
				t.Fatal(err)
			}
			if again.ResourceVersion != got.ResourceVersion || len(again.Status.History) != len(got.Status.History) {
				t.Errorf("second reconcile changed the hook: resourceVersion %s → %s, history %d → %d",
					got.ResourceVersion, again.ResourceVersion, len(got.Status.History), len(again.Status.History))
			}
		})
	}
}

func TestStaleWarningEvent(t *testing.T) {
	env := newStore(t)
	ctx := context.Background()
	h := newHook("task", time.Minute, "build")
	if err := env.c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	last := drive(t, h, hookfsm.Initialize, hookfsm.Begin)
	if err := env.c.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	now := last.Add(time.Hour)
	r := &controllers.HookReconciler{
		Client: env.c, Events: env.mgr.GetEventRecorder(controllers.HookControllerName),
		Config: testConfig(t), Now: func() time.Time { return now },
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "task"}}
	for range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.mgr.Close(); err != nil {
		t.Fatal(err)
	}
	var events corev1.EventList
	if err := env.c.List(ctx, &events, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for _, e := range events.Items {
		if e.Type == corev1.EventTypeWarning && e.Reason == v1.ReasonHeartbeatExpired && e.InvolvedObject.Name == "task" {
			warnings++
			if !strings.Contains(e.Message, "moved to recovering") {
				t.Errorf("event message %q", e.Message)
			}
		}
	}
	if warnings != 1 {
		t.Errorf("%d HeartbeatExpired Warning events after two reconciles, want 1", warnings)
	}
}

// TestHookReconcileDetectsHandEditedStatus edits the status of a running
// Hook to completed, as a person editing the store file would: the
// reconciler sets HistoryConsistent=False naming status.state, keeps Ready
// False, records one Warning over two reconciles, and the recovery file
// says the field is not to be trusted. Undoing the edit makes it True again.
func TestHookReconcileDetectsHandEditedStatus(t *testing.T) {
	env := newStore(t)
	ctx := context.Background()
	h := newHook("task", time.Hour, "build", "test")
	if err := env.c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	last := drive(t, h, hookfsm.Initialize, hookfsm.Begin)
	h.Status.State = v1.HookCompleted
	if err := env.c.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	now := last.Add(time.Minute)
	recoveryDir := t.TempDir()
	r := &controllers.HookReconciler{
		Client: env.c, Events: env.mgr.GetEventRecorder(controllers.HookControllerName),
		Config: testConfig(t), RecoveryDir: recoveryDir, Now: func() time.Time { return now },
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "task"}}
	got := &v1.Hook{}
	for range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if err := env.c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
	}
	hc := condition(got, v1.ConditionHistoryConsistent)
	if hc.Status != metav1.ConditionFalse || hc.Reason != v1.ReasonHistoryMismatch ||
		!strings.Contains(hc.Message, "status.state is completed; history says step_running") {
		t.Fatalf("HistoryConsistent = %+v; want False naming status.state", hc)
	}
	if ready := condition(got, v1.ConditionReady); ready.Status != metav1.ConditionFalse || ready.Reason != v1.ReasonHistoryMismatch {
		t.Errorf("Ready = %+v; want False (%s)", ready, v1.ReasonHistoryMismatch)
	}
	file, err := os.ReadFile(got.Status.RecoveryFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(file), "the status disagrees with its history") ||
		!strings.Contains(string(file), "`status.state` is completed; history says step_running") || !strings.Contains(string(file), "Do not trust them") {
		t.Errorf("the recovery file does not say which field is not to be trusted:\n%s", file)
	}

	got.Status.State = v1.HookStepRunning
	if err := env.c.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if hc := condition(got, v1.ConditionHistoryConsistent); hc.Status != metav1.ConditionTrue || hc.Reason != v1.ReasonHistoryMatches {
		t.Errorf("after undoing the edit, HistoryConsistent = %+v; want True", hc)
	}

	_ = env.mgr.Close() // flushes the recorded Events
	var events corev1.EventList
	if err := env.c.List(ctx, &events, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for _, e := range events.Items {
		if e.Type == corev1.EventTypeWarning && e.Reason == v1.ReasonHistoryMismatch && e.InvolvedObject.Name == "task" {
			warnings++
			if !strings.Contains(e.Message, "status.state") {
				t.Errorf("event message %q does not name status.state", e.Message)
			}
		}
	}
	if warnings != 1 {
		t.Errorf("%d HistoryMismatch Warning events after two reconciles, want 1", warnings)
	}
}

// TestForgedStatusDrivesNoTransition forges the attempt of a running Hook
// whose heartbeat then goes stale: the reconciler does not interrupt it
// (the interrupt would act on the forged attempt and append an entry the
// history cannot follow), and Ready says why: HistoryMismatch.
func TestForgedStatusDrivesNoTransition(t *testing.T) {
	env := newStore(t)
	ctx := context.Background()
	h := newHook("task", time.Minute, "build")
	if err := env.c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	last := drive(t, h, hookfsm.Initialize, hookfsm.Begin)
	h.Status.CurrentStep.Attempt = 2
	if err := env.c.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	now := last.Add(time.Hour)
	r := &controllers.HookReconciler{
		Client: env.c, Events: env.mgr.GetEventRecorder(controllers.HookControllerName),
		Config: testConfig(t), Now: func() time.Time { return now },
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "task"}}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	got := &v1.Hook{}
	if err := env.c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.State != v1.HookStepRunning || len(got.Status.History) != 2 {
		t.Errorf("state %s with %d history entries; want step_running and the 2 there were: no interrupt", got.Status.State, len(got.Status.History))
	}
	if ready := condition(got, v1.ConditionReady); ready.Status != metav1.ConditionFalse || ready.Reason != v1.ReasonHistoryMismatch {
		t.Errorf("Ready = %+v; want False (%s)", ready, v1.ReasonHistoryMismatch)
	}
}

// TestStaleOnTheFileStore runs the manager: a hook that stops heartbeating
// is recovering once staleAfter has passed, not before, and its recovery
// file follows every change.
func TestStaleOnTheFileStore(t *testing.T) {
	env := newStore(t)
	recoveryDir := env.startManager(t, testConfig(t))
	ctx := context.Background()
	if err := env.c.Create(ctx, newHook("task", 2*time.Second, "build", "test")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, env.c, "task", 10*time.Second, state(v1.HookStepPending))
	h := agent(t, env.c, "task", hookfsm.Input{Event: hookfsm.Begin, WorkingOn: "compiling"})
	due := h.Status.LastHeartbeat.Add(2 * time.Second)
	got := waitFor(t, env.c, "task", 10*time.Second, state(v1.HookRecovering))
	seen := time.Now()
	if rec := got.Status.Recovery; rec == nil || rec.CrashType != v1.CrashStaleHeartbeat || rec.LastState != v1.HookStepRunning || rec.DetectedAt.Time.Before(due.Truncate(time.Second)) {
		t.Fatalf("recovery %+v; want stale_heartbeat from step_running detected at or after %s", rec, due)
	}
	t.Logf("due %s, recovering seen %s later", due.Format(time.RFC3339), seen.Sub(due))
	path := recoveryfile.Path(recoveryDir, "default", "task")
	if got.Status.RecoveryFile != path {
		t.Errorf("status.recoveryFile %q, want %q", got.Status.RecoveryFile, path)
	}
	fileShows := func(want string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			data, err := os.ReadFile(path)
			return err == nil && strings.Contains(string(data), want), nil
		})
		if err != nil {
			data, _ := os.ReadFile(path)
			t.Fatalf("recovery file never showed %q:\n%s", want, data)
		}
	}
	fileShows("- State: `recovering`")
	fileShows("as attempt 2")

	agent(t, env.c, "task", hookfsm.Input{Event: hookfsm.Resume})
	fileShows("- State: `step_running`")
	fileShows("- Attempt: 2 of 3")
}

func TestSuspendPausesStaleDetection(t *testing.T) {
	env := newStore(t)
	env.startManager(t, testConfig(t))
	ctx := context.Background()
	h := newHook("task", time.Second, "build")
	h.Spec.Suspend = true
	if err := env.c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	waitFor(t, env.c, "task", 10*time.Second, state(v1.HookStepPending))
	agent(t, env.c, "task", hookfsm.Input{Event: hookfsm.Begin})
	got := waitFor(t, env.c, "task", 10*time.Second, func(h *v1.Hook) bool {
		return condition(h, v1.ConditionStale).Status == metav1.ConditionTrue
	})
	if got.Status.State != v1.HookStepRunning || condition(got, v1.ConditionReady).Reason != v1.ReasonSuspended {
		t.Fatalf("suspended stale hook: state %s, Ready %+v; want step_running, Suspended", got.Status.State, condition(got, v1.ConditionReady))
	}
	got.Spec.Suspend = false
	if err := env.c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitFor(t, env.c, "task", 10*time.Second, state(v1.HookRecovering))
}

// TestRetentionOnTheFileStore: terminal hooks go when their TTL passes,
// not before, with the objects they own; one with a long TTL stays.
func TestRetentionOnTheFileStore(t *testing.T) {
	env := newStore(t)
	env.startManager(t, testConfig(t))
	ctx := context.Background()
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	specs := []struct {
		name  string
		event hookfsm.Event
		ttl   *v1.RetentionPolicy
	}{
		{"done", hookfsm.Pass, &v1.RetentionPolicy{Completed: d(2 * time.Second)}},
		{"dropped", hookfsm.Abandon, &v1.RetentionPolicy{Abandoned: d(time.Second)}},
		{"failed", hookfsm.Fail, &v1.RetentionPolicy{Abandoned: d(time.Second)}},
	}
	terminalAt := map[string]time.Time{}
	for _, s := range specs {
		h := newHook(s.name, time.Hour, "only")
		h.Spec.Retention = s.ttl
		if err := env.c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
		waitFor(t, env.c, s.name, 10*time.Second, state(v1.HookStepPending))
		if s.event == hookfsm.Pass {
			agent(t, env.c, s.name, hookfsm.Input{Event: hookfsm.Begin})
			agent(t, env.c, s.name, hookfsm.Input{Event: hookfsm.Validate})
		}
		got := agent(t, env.c, s.name, hookfsm.Input{Event: s.event, Message: "test"})
		terminalAt[s.name] = got.Status.TerminalAt.Time
	}
	owner := waitFor(t, env.c, "done", 10*time.Second, state(v1.HookCompleted))
	cp := &v1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Name: "done-cp", Namespace: "default", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: v1.GroupVersion.String(), Kind: "Hook", Name: "done", UID: owner.UID,
		}}},
		Spec: v1.CheckpointSpec{HookName: "done", Trigger: v1.TriggerGitCommit},
	}
	if err := env.c.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	// terminalAt is stored to the second, so "done" is due at most 2s
	// after it became terminal; half a second before that it must exist.
	time.Sleep(time.Until(terminalAt["done"].Add(1500 * time.Millisecond)))
	if err := env.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "done"}, &v1.Hook{}); err != nil {
		t.Fatalf("completed hook with a 2s TTL is gone before its due time: %v", err)
	}
	waitGone(t, env.c, "done", 10*time.Second)
	waitGone(t, env.c, "dropped", 10*time.Second)
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.c.Get(ctx, client.ObjectKeyFromObject(cp), &v1.Checkpoint{})
		return err != nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Error("the owned checkpoint outlived its hook")
	}
	if err := env.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "failed"}, &v1.Hook{}); err != nil {
		t.Errorf("failed hook with the default 30d TTL was deleted: %v", err)
	}
}

// TestRecoveryFileFollowsCheckpoints: the recovery file's timeline follows
// the Hook's Checkpoints as they come and go, though the Hook itself is not
// written.
func TestRecoveryFileFollowsCheckpoints(t *testing.T) {
	env := newStore(t)
	recoveryDir := env.startManager(t, testConfig(t))
	ctx := context.Background()
	if err := env.c.Create(ctx, newHook("task", time.Hour, "build")); err != nil {
		t.Fatal(err)
	}
	h := waitFor(t, env.c, "task", 10*time.Second, state(v1.HookStepPending))
	path := recoveryfile.Path(recoveryDir, "default", "task")
	fileHas := func(want string, has bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			data, err := os.ReadFile(path)
			return err == nil && strings.Contains(string(data), want) == has, nil
		})
		if err != nil {
			data, _ := os.ReadFile(path)
			t.Fatalf("recovery file: contains %q should be %t:\n%s", want, has, data)
		}
	}
	cp := &v1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Name: "task-cp-7", Namespace: "default", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: v1.GroupVersion.String(), Kind: "Hook", Name: "task", UID: h.UID, Controller: ptr.To(true),
		}}},
		Spec: v1.CheckpointSpec{HookName: "task", Seq: 7, Trigger: v1.TriggerManual},
	}
	if err := env.c.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	fileHas("task-cp-7", true)
	if err := env.c.Delete(ctx, cp); err != nil {
		t.Fatal(err)
	}
	fileHas("task-cp-7", false)
}

// handEditDetected edits the status of a running Hook to completed while
// the reconcilers run, as a hand edit of the store file would, and waits
// for HistoryConsistent=False naming status.state, Ready=False and the
// recovery file's warning; undoing the edit makes both True again.
func handEditDetected(t *testing.T, c client.Client, recoveryDir string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, newHook("edited", time.Hour, "build", "test")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "edited", 20*time.Second, state(v1.HookStepPending))
	agent(t, c, "edited", hookfsm.Input{Event: hookfsm.Begin})
	waitFor(t, c, "edited", 20*time.Second, func(h *v1.Hook) bool {
		return condition(h, v1.ConditionReady).Status == metav1.ConditionTrue
	})
	handEditState(t, c, "edited", v1.HookCompleted)
	got := waitFor(t, c, "edited", 20*time.Second, func(h *v1.Hook) bool {
		return condition(h, v1.ConditionHistoryConsistent).Status == metav1.ConditionFalse
	})
	if hc := condition(got, v1.ConditionHistoryConsistent); hc.Reason != v1.ReasonHistoryMismatch || !strings.Contains(hc.Message, "status.state is completed; history says step_running") {
		t.Errorf("HistoryConsistent = %+v", hc)
	}
	if ready := condition(got, v1.ConditionReady); ready.Status != metav1.ConditionFalse || ready.Reason != v1.ReasonHistoryMismatch {
		t.Errorf("Ready = %+v; want False (%s), not believed", ready, v1.ReasonHistoryMismatch)
	}
	path := recoveryfile.Path(recoveryDir, "default", "edited")
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		data, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(data), "`status.state` is completed; history says step_running"), nil
	})
	if err != nil {
		data, _ := os.ReadFile(path)
		t.Fatalf("the recovery file does not name status.state:\n%s", data)
	}

	handEditState(t, c, "edited", v1.HookStepRunning)
	waitFor(t, c, "edited", 20*time.Second, func(h *v1.Hook) bool {
		return condition(h, v1.ConditionHistoryConsistent).Status == metav1.ConditionTrue &&
			condition(h, v1.ConditionReady).Status == metav1.ConditionTrue
	})
}

// handEditState sets status.state the way a person editing the object
// would: on the latest version, retrying when the reconciler wrote in between.
func handEditState(t *testing.T, c client.Client, name string, state v1.HookState) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := &v1.Hook{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			return err
		}
		h.Status.State = state
		return c.Status().Update(context.Background(), h)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHandEditDetectedOnTheFileStore(t *testing.T) {
	env := newStore(t)
	handEditDetected(t, env.c, env.startManager(t, testConfig(t)))
}

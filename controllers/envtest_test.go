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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestOnKubeAPIServer runs the reconcilers as `tether run --cluster` does:
// stale detection and retention on a real API server, with the Manager's
// own event recorders.
func TestOnKubeAPIServer(t *testing.T) {
	mgr, env := testsupport.EnvtestManager(t)
	opts := controllers.Options{Config: testConfig(t), RecoveryDir: t.TempDir(), SkipNameValidation: true}
	opts.Worker.LogDir = t.TempDir()
	if err := controllers.SetupAll(mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, mgr)
	ctx := context.Background()

	c := env.Client
	if err := c.Create(ctx, newHook("task", 2*time.Second, "build")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "task", 20*time.Second, state(v1.HookStepPending))
	h := agent(t, c, "task", hookfsm.Input{Event: hookfsm.Begin})
	due := h.Status.LastHeartbeat.Add(2 * time.Second)
	got := waitFor(t, c, "task", 20*time.Second, state(v1.HookRecovering))
	if rec := got.Status.Recovery; rec == nil || rec.CrashType != v1.CrashStaleHeartbeat || rec.DetectedAt.Time.Before(due.Truncate(time.Second)) {
		t.Fatalf("recovery %+v; want stale_heartbeat detected at or after %s", rec, due)
	}

	got.Spec.Retention = &v1.RetentionPolicy{Abandoned: &metav1.Duration{Duration: time.Second}}
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	agent(t, c, "task", hookfsm.Input{Event: hookfsm.Abandon})
	waitGone(t, c, "task", 20*time.Second)
}

// TestHandEditDetectedOnKubeAPIServer: a status edited behind the
// reconciler's back is detected on a real API server too.
func TestHandEditDetectedOnKubeAPIServer(t *testing.T) {
	mgr, env := testsupport.EnvtestManager(t)
	recoveryDir := t.TempDir()
	opts := controllers.Options{Config: testConfig(t), RecoveryDir: recoveryDir, SkipNameValidation: true}
	opts.Worker.LogDir = t.TempDir()
	if err := controllers.SetupAll(mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, mgr)
	handEditDetected(t, env.Client, recoveryDir)
}

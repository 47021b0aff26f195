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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestNotifyOnKubeAPIServer: a Hook going stale on a real API server is
// notified once; the Hook reconciler records its Event through
// events.k8s.io/v1 and the notify reconciler reads it as a core/v1 Event,
// one resource in two versions.
func TestNotifyOnKubeAPIServer(t *testing.T) {
	env := testenv.Start(t)
	// With the cache of tether run --cluster: only Events about tether's objects.
	mgr, err := manager.New(env.Config, manager.Options{
		Scheme: env.Client.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{ByObject: controllers.NotifyEventCache()},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cfg := testConfig(t)
	cfg.Notify = []config.Notifier{notifier("script", notifierScript(t, out), 0, config.NotifyHookStale)}
	opts := controllers.Options{Config: cfg, RecoveryDir: t.TempDir(), SkipNameValidation: true}
	opts.Worker.LogDir = t.TempDir()
	if err := controllers.SetupAll(mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, mgr)
	c := env.Client
	if err := c.Create(context.Background(), newHook("task", time.Second, "build")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "task", 20*time.Second, state(v1.HookStepPending))
	agent(t, c, "task", hookfsm.Input{Event: hookfsm.Begin})
	waitFor(t, c, "task", 20*time.Second, state(v1.HookRecovering))
	// An Event about another kind of object stays out of the cache.
	other := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: "pod-event"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "p"},
		Reason:         "WorkerCrashed", Message: "not tether's", Type: corev1.EventTypeWarning,
	}
	if err := c.Create(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	docs := waitDocs(t, out, 1)
	if err := mgr.GetCache().Get(context.Background(), client.ObjectKeyFromObject(other), &corev1.Event{}); !apierrors.IsNotFound(err) {
		t.Errorf("the cache holds an Event about a Pod: %v", err)
	}
	if d := docs[0]; d.Reason != config.NotifyHookStale || d.Kind != "Hook" || d.Name != "task" || d.Hook == nil || d.Hook.State != v1.HookRecovering {
		t.Errorf("notification %+v", d)
	}
}

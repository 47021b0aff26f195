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
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/store/storemanager"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// storeEnv is a file store in a temp directory and the local Manager on it.
type storeEnv struct {
	dir   string
	store *filestore.Store
	c     client.WithWatch
	// mgr is the store's Manager; startManager starts it, and its event
	// recorders serve reconcilers that tests call directly.
	mgr *storemanager.Manager
}

func newStore(t testing.TB) *storeEnv {
	t.Helper()
	dir := t.TempDir()
	store := testsupport.Store(t, filepath.Join(dir, "store"), func(o *filestore.Options) {
		o.Log = testr.NewWithInterface(t, testr.Options{})
	})
	return &storeEnv{dir: dir, store: store, c: store.Client(), mgr: testsupport.LocalManager(t, store)}
}

// startManager runs every reconciler on the store until the test ends and
// returns the recovery directory.
func (e *storeEnv) startManager(t testing.TB, cfg *config.Config) string {
	t.Helper()
	recoveryDir := filepath.Join(e.dir, "store", "recovery")
	opts := controllers.Options{Config: cfg, RecoveryDir: recoveryDir, SkipNameValidation: true}
	opts.Worker.LogDir = filepath.Join(e.dir, "logs")
	if err := controllers.SetupAll(e.mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, e.mgr)
	return recoveryDir
}

func testConfig(t testing.TB) *config.Config {
	t.Setenv(config.HomeEnv, t.TempDir())
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newHook(name string, staleAfter time.Duration, steps ...string) *v1.Hook {
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.HookSpec{
			Goal:       "test " + name,
			StaleAfter: &metav1.Duration{Duration: staleAfter},
		},
	}
	for _, s := range steps {
		h.Spec.Steps = append(h.Spec.Steps, v1.Step{Name: s})
	}
	return h
}

// agent applies an agent event to the stored Hook through hookwrite, as
// the CLI verbs do.
func agent(t testing.TB, c client.Client, name string, in hookfsm.Input) *v1.Hook {
	t.Helper()
	h, _, err := hookwrite.Transition(context.Background(), c, client.ObjectKey{Namespace: "default", Name: name},
		hookwrite.Input(in), hookwrite.Options{Actor: "test-agent"})
	if err != nil {
		t.Fatalf("agent %s on %s: %v", in.Event, name, err)
	}
	return h
}

// waitFor polls the stored Hook until cond holds.
func waitFor(t testing.TB, c client.Client, name string, timeout time.Duration, cond func(*v1.Hook) bool) *v1.Hook {
	t.Helper()
	var h *v1.Hook
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		h = &v1.Hook{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(h), nil
	})
	if err != nil {
		t.Fatalf("hook %s: condition not reached within %s; last status %+v", name, timeout, h.Status)
	}
	return h
}

func state(s v1.HookState) func(*v1.Hook) bool {
	return func(h *v1.Hook) bool { return h.Status.State == s }
}

// waitGone polls until the Hook is deleted.
func waitGone(t testing.TB, c client.Client, name string, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &v1.Hook{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("hook %s not deleted within %s: %v", name, timeout, err)
	}
}

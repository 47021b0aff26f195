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

// Package testsupport gives tests the backends tether runs on: a file store
// with tether's scheme and CRDs, the complete local Manager on it, and a
// Manager on a real kube-apiserver started by envtest. Tests build their
// stores and Managers here instead of assembling them by hand, so that a
// test runs on what `tether run` runs on.
package testsupport

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/store/storemanager"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// OpenStore opens the file store in dir with tether's scheme and CRDs and
// no log; mutate may change the options first. The caller closes it.
func OpenStore(dir string, mutate ...func(*filestore.Options)) (*filestore.Store, error) {
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	crds, err := crd.Load()
	if err != nil {
		return nil, err
	}
	opts := filestore.Options{Scheme: s, CRDs: crds, Log: logr.Discard()}
	for _, m := range mutate {
		m(&opts)
	}
	return filestore.Open(dir, opts)
}

// Store opens the file store in dir, or in a new temporary directory's
// "store" when dir is empty, as OpenStore does, and closes it when t ends.
func Store(t testing.TB, dir string, mutate ...func(*filestore.Options)) *filestore.Store {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "store")
	}
	s, err := OpenStore(dir, mutate...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// LocalManager builds the complete Manager `tether run` uses on store
// (without the run lock, which only Open takes). Start it with Start.
func LocalManager(t testing.TB, store *filestore.Store) *storemanager.Manager {
	t.Helper()
	mgr, err := storemanager.New(store, storemanager.Options{Scheme: store.Client().Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close() })
	return mgr
}

// EnvtestManager starts a kube-apiserver with tether's CRDs for t (skipping
// t when KUBEBUILDER_ASSETS is unset) and builds a Manager on it, as
// `tether run --cluster` does. Start it with Start.
func EnvtestManager(t testing.TB) (manager.Manager, *testenv.Env) {
	t.Helper()
	env := testenv.Start(t)
	mgr, err := manager.New(env.Config, manager.Options{
		Scheme:    env.Client.Scheme(),
		Metrics:   metricsserver.Options{BindAddress: "0"},
		Cache:     cache.Options{DefaultTransform: storemanager.CacheTransform()},
		NewClient: storemanager.NewGuardedClient,
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr, env
}

// Start runs mgr until t ends and fails t if it returns an error.
func Start(t testing.TB, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager: %v", err)
		}
	})
}

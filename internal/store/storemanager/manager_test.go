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

package storemanager_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/eventsink"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/store/storemanager"
)

// seen records the generations a reconciler observed, per hook.
type seen struct {
	mu   sync.Mutex
	gens map[string][]int64
}

func (s *seen) last(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gens[name]
	if len(g) == 0 {
		return 0
	}
	return g[len(g)-1]
}

func TestManagerOnFileStore(t *testing.T) {
	dir := t.TempDir()
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	store, err := filestore.Open(dir, filestore.Options{Scheme: sch, CRDs: crds, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()

	mgr, trip, err := storemanager.New(store, storemanager.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	events := eventsink.NewProvider(store.Client(), sch)
	defer events.Shutdown()
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		return store.WatchHandEdits(ctx, events.GetEventRecorder("tether-store"))
	})); err != nil {
		t.Fatal(err)
	}
	obs := &seen{gens: map[string][]int64{}}
	skip := true
	err = ctrl.NewControllerManagedBy(mgr).For(&agentsv1alpha1.Hook{}).WithOptions(controller.Options{SkipNameValidation: &skip}).Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		h := &agentsv1alpha1.Hook{}
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, h); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		obs.mu.Lock()
		obs.gens[h.Name] = append(obs.gens[h.Name], h.Generation)
		obs.mu.Unlock()
		return reconcile.Result{}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if n := trip.Attempts(); n != 0 {
			t.Errorf("the manager attempted %d network requests", n)
		}
	}()

	h := &agentsv1alpha1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "managed"},
		Spec:       agentsv1alpha1.HookSpec{Goal: "g", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
	}
	if err := store.Client().Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reconciler to see generation 1", func() bool { return obs.last("managed") == 1 })

	path := filepath.Join(dir, "hooks", "default", "managed.yaml")
	sed(t, path, "s/goal: g$/goal: edited with sed/")
	waitFor(t, "the reconciler to see the sed -i edit as generation 2", func() bool { return obs.last("managed") == 2 })
	// The store rewrites an adopted file after committing it; a person edits
	// the file they see, so wait for that rewrite before the next edit.
	waitFor(t, "the store to rewrite the adopted file", func() bool {
		data, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(data), "generation: 2") && strings.Contains(string(data), "goal: edited with sed")
	})

	sed(t, path, `s/goal: edited with sed$/goal: "broken/`)
	waitFor(t, "an InvalidEdit event", func() bool {
		events := &corev1.EventList{}
		if err := store.Client().List(ctx, events, client.InNamespace("default")); err != nil {
			return false
		}
		for _, ev := range events.Items {
			if ev.Reason == "InvalidEdit" && ev.InvolvedObject.Name == "managed" && strings.Contains(ev.Message, "managed.yaml:") {
				return true
			}
		}
		return false
	})
	got := &agentsv1alpha1.Hook{}
	if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Goal != "edited with sed" {
		t.Fatalf("after an invalid edit the cache holds goal %q, want the last valid one", got.Spec.Goal)
	}
}

func sed(t *testing.T, path, expr string) {
	t.Helper()
	if out, err := exec.Command("sed", "-i", expr, path).CombinedOutput(); err != nil {
		t.Fatalf("sed: %v %s", err, out)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestRunLock(t *testing.T) {
	dir := t.TempDir()
	first, err := storemanager.AcquireRunLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = storemanager.AcquireRunLock(dir)
	if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v, want an error naming pid %d", err, os.Getpid())
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := storemanager.AcquireRunLock(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	_ = again.Release()
}

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
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/store/storemanager"
	"github.com/tether-dev/tether/internal/testing/testsupport"
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
	store := testsupport.Store(t, dir, func(o *filestore.Options) { o.Log = testr.New(t) })
	// The Manager watches hand edits and records Events on its own.
	mgr := testsupport.LocalManager(t, store)
	obs := &seen{gens: map[string][]int64{}}
	skip := true
	err := ctrl.NewControllerManagedBy(mgr).For(&agentsv1alpha1.Hook{}).WithOptions(controller.Options{SkipNameValidation: &skip}).Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
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
		if n := mgr.Tripwire().Attempts(); n != 0 {
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

	// Poison pills: a FIFO and a Hook whose duration Go cannot hold are
	// quarantined with a Warning Event naming their paths, and a new Hook
	// is still reconciled at once.
	fifo := filepath.Join(dir, "hooks", "default", "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	undecodable := filepath.Join(dir, "hooks", "default", "undecodable.yaml")
	if err := os.WriteFile(undecodable, []byte("apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata: {name: undecodable, namespace: default}\nspec: {goal: g, staleAfter: 2562048h, steps: [{name: one}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, undecodable} {
		waitFor(t, "a Quarantined event naming "+path, func() bool {
			events := &corev1.EventList{}
			if err := store.Client().List(ctx, events, client.InNamespace("default")); err != nil {
				return false
			}
			for _, ev := range events.Items {
				if ev.Type == corev1.EventTypeWarning && ev.Reason == filestore.ReasonQuarantined && strings.Contains(ev.Message, path) {
					return true
				}
			}
			return false
		})
	}
	after := h.DeepCopy()
	after.Name, after.ResourceVersion, after.UID = "after", "", ""
	if err := store.Client().Create(ctx, after); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, "the reconciler to see a new Hook beside the poison pills", func() bool { return obs.last("after") == 1 })
	if d := time.Since(start); d > time.Second {
		t.Errorf("a new Hook took %v to reach the reconciler", d)
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

// TestOpen builds `tether run`'s Manager on a store directory that does not
// exist yet; a second one on the same store is refused while the first
// holds it, and allowed once the first is closed.
func TestOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new-store")
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		closeFn bool
		wantErr string
	}{
		{"first", false, ""},
		{"second while the first runs", false, "already served by another tether run"},
		{"after the first closed", true, ""},
	}
	var first *storemanager.Manager
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.closeFn {
				if err := first.Close(); err != nil {
					t.Fatal(err)
				}
			}
			mgr, err := storemanager.Open(dir, crds, storemanager.Options{Scheme: sch})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Open = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The Manager is not started, so only a reader around the
			// cache can see the Hook.
			h := &agentsv1alpha1.Hook{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "read-" + strconv.Itoa(len(tt.name))},
				Spec:       agentsv1alpha1.HookSpec{Goal: "g", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
			}
			if err := mgr.Store().Client().Create(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			if err := mgr.GetAPIReader().Get(context.Background(), client.ObjectKeyFromObject(h), &agentsv1alpha1.Hook{}); err != nil {
				t.Errorf("the API reader does not read the store: %v", err)
			}
			if first == nil {
				first = mgr
				return
			}
			if err := mgr.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

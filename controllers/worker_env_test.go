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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/claim"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestWorkerEnvironment checks the tether environment of a launched agent:
// TETHER_WORKER, TETHER_NAMESPACE and TETHER_STORE (WorkerOptions.Env, as
// the local store's composition root passes it) always, TETHER_HOOK only
// when exactly one non-terminal Hook is assigned at launch, and never the
// values of tether run's own environment.
func TestWorkerEnvironment(t *testing.T) {
	// tether run's own environment: none of it may reach the agent.
	t.Setenv(config.HookEnv, "inherited-hook")
	t.Setenv(config.StoreEnv, "/inherited/store")
	t.Setenv(config.WorkerEnv, "inherited-worker")
	t.Setenv(config.ActorEnv, "inherited-actor")
	env := newStore(t)
	ctx := context.Background()
	out := filepath.Join(env.dir, "env")
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "env-agent", Namespace: "default"}}
	w.Spec.Command = []string{"sh", "-c", `env > "$OUT/$$.tmp" && mv "$OUT/$$.tmp" "$OUT/$$.env"; exec sleep 100010`}
	w.Spec.Env = []v1.EnvVar{{Name: "OUT", Value: out}}
	w.Spec.Restart = v1.RestartPolicy{Auto: true, MaxCrashes: 10, Window: &metav1.Duration{Duration: time.Minute}}
	if err := env.c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := env.c.Create(ctx, newHook("task", time.Hour, "one")); err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(env.dir, "store")
	opts := controllers.Options{Config: testConfig(t), RecoveryDir: filepath.Join(storeDir, "recovery"), SkipNameValidation: true}
	opts.Worker.LogDir = filepath.Join(env.dir, "logs")
	opts.Worker.Env = []string{config.StoreEnv + "=" + storeDir}
	if err := controllers.SetupAll(env.mgr, opts); err != nil {
		t.Fatal(err)
	}
	testsupport.Start(t, env.mgr)
	t.Cleanup(func() {
		got := &v1.Worker{}
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(w), got); err == nil && got.Status.PID != 0 {
			_ = syscall.Kill(int(got.Status.PID), syscall.SIGKILL)
		}
	})
	running := func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning && w.Status.PID != 0 }
	w = waitWorker(t, env.c, "env-agent", running)

	common := map[string]string{config.WorkerEnv: "env-agent", config.NamespaceEnv: "default", config.StoreEnv: storeDir, config.ActorEnv: "worker/env-agent"}
	// First launch: no Hook is assigned, so no TETHER_HOOK.
	checkEnv(t, readEnv(t, out, w.Status.PID), common, "")

	claimHook := func(name string) {
		t.Helper()
		waitFor(t, env.c, name, 10*time.Second, func(h *v1.Hook) bool { return h.Spec.Assignee == "" && h.Status.State != "" })
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			_, err := claim.One(ctx, env.c, client.ObjectKey{Namespace: "default", Name: name}, "env-agent")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// TETHER_HOOK comes from the reconciler's cache: wait for it there.
		waitFor(t, env.mgr.GetClient(), name, 10*time.Second, func(h *v1.Hook) bool { return h.Spec.Assignee == "env-agent" })
	}
	crash := func() {
		t.Helper()
		old := w.Status.PID
		if err := syscall.Kill(int(old), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		w = waitWorker(t, env.c, "env-agent", func(w *v1.Worker) bool { return running(w) && w.Status.PID != old })
	}
	// Claim the Hook, then crash the agent: the restart launches before
	// the Hook reconciler frees the Hook, so the new process gets it.
	claimHook("task")
	crash()
	checkEnv(t, readEnv(t, out, w.Status.PID), common, "task")

	// Two Hooks assigned at launch: no TETHER_HOOK.
	if err := env.c.Create(ctx, newHook("other", time.Hour, "one")); err != nil {
		t.Fatal(err)
	}
	claimHook("task") // freed by the Hook reconciler after the crash
	claimHook("other")
	crash()
	checkEnv(t, readEnv(t, out, w.Status.PID), common, "")
}

// readEnv waits for the environment the process pid wrote and parses it.
func readEnv(t *testing.T, dir string, pid int32) map[string]string {
	t.Helper()
	path := filepath.Join(dir, strconv.Itoa(int(pid))+".env")
	var data []byte
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		var err error
		data, err = os.ReadFile(path)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("process %d wrote no environment to %s", pid, path)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "TETHER_") {
			got[k] = v
		}
	}
	return got
}

func checkEnv(t *testing.T, got, want map[string]string, hook string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if v, ok := got[config.HookEnv]; hook == "" && ok {
		t.Errorf("%s=%q set, want it absent", config.HookEnv, v)
	} else if hook != "" && v != hook {
		t.Errorf("%s=%q, want %q", config.HookEnv, v, hook)
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t.Logf("agent environment: %v", keys)
}

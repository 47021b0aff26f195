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

package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/settlegc"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestRunSettlesTheCollectorAfterItsStartWave: `tether run` over a store of
// never-reconciled Hooks settles its collector once, and only once every
// Hook's first reconcile is stored: the queues it watches are the real
// controllers'.
func TestRunSettlesTheCollectorAfterItsStartWave(t *testing.T) {
	// Enough Hooks that the wave outlasts the two idle looks (2 s) a
	// Settler blind to the queues would settle after.
	const hooks = 3000
	run := startSettling(t, hooks)
	line := run.await(t, run.settled, "settled its collector")

	list := &v1.HookList{}
	if err := testsupport.Store(t, run.dir).Client().List(context.Background(), list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	reconciled := 0
	for i := range list.Items {
		if meta.FindStatusCondition(list.Items[i].Status.Conditions, controllers.ConditionReceiptsVerified) != nil {
			reconciled++
		}
	}
	if reconciled != hooks {
		t.Errorf("settled with %d of %d Hooks reconciled: %v", reconciled, hooks, line)
	}
	if got := line["gcPercent"]; got != float64(settlegc.SteadyGCPercent) {
		t.Errorf("settled with gcPercent %v, want %d", got, settlegc.SteadyGCPercent)
	}
	// The caches filled at FillGCPercent, and the GOGC found (the
	// default: GOGC is unset) came back at sync, before the settling.
	select {
	case f := <-run.filled:
		if f["gcPercent"] != float64(100) || f["fillGCPercent"] != float64(settlegc.FillGCPercent) {
			t.Errorf("the fill restored gcPercent %v after filling at %v, want 100 after %d", f["gcPercent"], f["fillGCPercent"], settlegc.FillGCPercent)
		}
	default:
		t.Errorf("tether run logged no %q before it settled:\n%s", settlegc.FilledMessage, run.log.String())
	}
	if live, _ := line["liveHeapMiB"].(float64); live <= 0 {
		t.Errorf("settled reporting a live heap of %v MiB", line["liveHeapMiB"])
	}
	run.stop(t)
}

// TestRunReturnsTheMemoryOfABurst: after its start-up wave, `tether run`
// returns the free heap of a burst of edits that drove its collector,
// once every edit has been reconciled, and not before.
func TestRunReturnsTheMemoryOfABurst(t *testing.T) {
	const hooks = 1000
	run := startSettling(t, hooks)
	run.await(t, run.settled, "settled its collector")
	select {
	case line := <-run.returned:
		t.Logf("returned before the burst (a collection while idle): %v", line)
	default:
	}

	// Each edit is a write through the store, a watch event and a reconcile
	// that writes status: on the local store, many times the heap's headroom.
	c := testsupport.Store(t, run.dir).Client()
	ctx := context.Background()
	generations := map[string]int64{}
	for i := range hooks {
		h := &v1.Hook{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: scaleHookName(i)}, h); err != nil {
			t.Fatal(err)
		}
		h.Spec.Goal = "burst " + strconv.Itoa(i)
		if err := c.Update(ctx, h); err != nil {
			t.Fatal(err)
		}
		generations[h.Name] = h.Generation
	}

	line := run.await(t, run.returned, "returned the burst's memory")
	t.Logf("returned: %v", line)
	if n, _ := line["collections"].(float64); n < 1 {
		t.Errorf("returned after %v collections of the burst: %v", line["collections"], line)
	}
	if live, _ := line["liveHeapMiB"].(float64); live <= 0 {
		t.Errorf("returned reporting a live heap of %v MiB", line["liveHeapMiB"])
	}
	// Returned once the controllers were idle: every edit had its reconcile.
	list := &v1.HookList{}
	if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		h := &list.Items[i]
		if h.Status.ObservedGeneration < generations[h.Name] {
			t.Errorf("returned with %s at observedGeneration %d, before its edit's reconcile (generation %d)", h.Name, h.Status.ObservedGeneration, generations[h.Name])
			break
		}
	}
	run.stop(t)
}

// settlingRun is a `tether run` whose collector log lines are watched.
type settlingRun struct {
	cmd *exec.Cmd
	// dir is the store it serves.
	dir                       string
	log                       *syncBuffer
	settled, filled, returned chan map[string]any
}

// startSettling starts `tether run`, with GOGC unset, over a new store of
// hooks never-reconciled Hooks, and watches its log for settlegc's lines.
func startSettling(t *testing.T, hooks int) *settlingRun {
	t.Helper()
	home := scaleHome(t)
	dir := filepath.Join(t.TempDir(), "store")
	fill := testsupport.Store(t, dir, testsupport.WithoutFsync)
	(&scaleFleet{hooks: hooks}).populate(t, fill.Client(), "default", scaleProto(t), 8)
	_ = fill.Close()

	cmd := exec.Command(tetherBin, "run", "--store", dir, "--metrics-bind-address", "0")
	cmd.Env = append(withoutEnv(os.Environ(), "GOGC"), config.HomeEnv+"="+home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := &settlingRun{cmd: cmd, dir: dir, log: &syncBuffer{},
		settled: make(chan map[string]any, 1), filled: make(chan map[string]any, 1), returned: make(chan map[string]any, 100)}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			_, _ = r.log.Write(append(sc.Bytes(), '\n'))
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			switch line["msg"] {
			case settlegc.SettledMessage:
				r.settled <- line
			case settlegc.FilledMessage:
				r.filled <- line
			case settlegc.ReturnedMessage:
				r.returned <- line
			}
		}
	}()
	return r
}

// await is the next line from c, which the run must log within 3 minutes
// (what: what it then did).
func (r *settlingRun) await(t *testing.T, c chan map[string]any, what string) map[string]any {
	t.Helper()
	select {
	case line := <-c:
		return line
	case <-time.After(3 * time.Minute):
		t.Fatalf("tether run never %s:\n%s", what, r.log.String())
		return nil
	}
}

// stop ends the run with SIGTERM, which it must exit cleanly on.
func (r *settlingRun) stop(t *testing.T) {
	t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("tether run after SIGTERM: %v", err)
	}
}

// withoutEnv is env without key's entries.
func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

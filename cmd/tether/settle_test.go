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
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	settled, filled := make(chan map[string]any, 1), make(chan map[string]any, 1)
	log := &syncBuffer{}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			_, _ = log.Write(append(sc.Bytes(), '\n'))
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			switch line["msg"] {
			case settlegc.SettledMessage:
				settled <- line
			case settlegc.FilledMessage:
				filled <- line
			}
		}
	}()
	var line map[string]any
	select {
	case line = <-settled:
	case <-time.After(3 * time.Minute):
		t.Fatalf("tether run never settled its collector:\n%s", log.String())
	}

	list := &v1.HookList{}
	if err := testsupport.Store(t, dir).Client().List(context.Background(), list, client.InNamespace("default")); err != nil {
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
	case f := <-filled:
		if f["gcPercent"] != float64(100) || f["fillGCPercent"] != float64(settlegc.FillGCPercent) {
			t.Errorf("the fill restored gcPercent %v after filling at %v, want 100 after %d", f["gcPercent"], f["fillGCPercent"], settlegc.FillGCPercent)
		}
	default:
		t.Errorf("tether run logged no %q before it settled:\n%s", settlegc.FilledMessage, log.String())
	}
	if live, _ := line["liveHeapMiB"].(float64); live <= 0 {
		t.Errorf("settled reporting a live heap of %v MiB", line["liveHeapMiB"])
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
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

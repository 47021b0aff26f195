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
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
)

// TestRestartOverASettledFleetWritesNothing: tether run over the fleet
// issue 29 measures (Hooks with passed steps verified by a receipt key,
// a Worker per 10 Hooks supervising a live process, 5 Checkpoints per
// Hook, each with its ref in a real repository), once it has reconciled
// every object, is stopped and started again: the second run finds
// everything in place and writes nothing (no status, no condition, no
// Event, no Checkpoint or Worker rewrite: the journal does not grow).
func TestRestartOverASettledFleetWritesNothing(t *testing.T) {
	const hooks = 30
	home := scaleHome(t)
	dir := filepath.Join(t.TempDir(), "store")
	s := openStore(t, dir)
	newScaleFleet(t, hooks).populate(t, s.Client(), "default", scaleProto(t), 4)
	c := s.Client()
	ctx := context.Background()
	reconciled := func() bool {
		list := &v1.HookList{}
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range list.Items {
			if meta.FindStatusCondition(h.Status.Conditions, controllers.ConditionReceiptsVerified) != nil {
				n++
			}
		}
		return n == hooks
	}
	serve := func(until func() bool) {
		t.Helper()
		cmd := exec.Command(tetherBin, "run", "--store", dir, "--metrics-bind-address", "0")
		cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for !until() {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("tether run did not settle:\n%s", out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	// The first run reconciles every Hook once, and is given the time its
	// Worker and Checkpoint reconcilers need to settle too.
	populated := journalSize(t, dir)
	var settledAt time.Time
	serve(func() bool {
		if settledAt.IsZero() && reconciled() {
			settledAt = time.Now()
		}
		return !settledAt.IsZero() && time.Since(settledAt) > 3*time.Second
	})
	before := journalSize(t, dir)
	if before == populated {
		t.Fatal("the first tether run wrote nothing to the journal; the Hooks' first reconciles should have")
	}
	started := time.Now()
	serve(func() bool { return time.Since(started) > 5*time.Second })
	if after := journalSize(t, dir); after != before {
		t.Errorf("tether run restarted over a settled store wrote %d bytes to its journal; want none", after-before)
	}
}

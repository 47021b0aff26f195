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

package controllers

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tether-dev/tether/internal/worker/supervise"
)

// TestProcTableHoldsNoGoroutinePerProcess: the processes the Worker
// reconciler follows, launched children and adopted processes alike, cost
// it no goroutine each while they run (a thousand Workers held two
// thousand parked goroutines, 12.5 MB of stacks), and each end still
// becomes the exit of its entry and one reconcile request.
func TestProcTableHoldsNoGoroutinePerProcess(t *testing.T) {
	const n = 32
	cases := []struct {
		name  string
		track func(t *testing.T, procs *procTable, key types.NamespacedName) supervise.Identity
	}{
		{"launched", func(t *testing.T, procs *procTable, key types.NamespacedName) supervise.Identity {
			id, exits := launchSleep(t)
			procs.child(key, id, exits)
			return id
		}},
		{"adopted", func(t *testing.T, procs *procTable, key types.NamespacedName) supervise.Identity {
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			id, err := supervise.Identify(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			if err := procs.watch(key, id); err != nil {
				t.Fatal(err)
			}
			return id
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			procs := newProcTable()
			t.Cleanup(procs.close)
			before := runtime.NumGoroutine()
			keys := make([]types.NamespacedName, n)
			ids := make([]supervise.Identity, n)
			for i := range n {
				keys[i] = types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("agent-%d", i)}
				ids[i] = tc.track(t, procs, keys[i])
			}
			time.Sleep(100 * time.Millisecond)
			if grown := runtime.NumGoroutine() - before; grown > n/8 {
				t.Errorf("following %d processes holds %d more goroutines", n, grown)
			}
			for _, id := range ids {
				if err := syscall.Kill(id.PID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			requested := map[string]bool{}
			for range n {
				select {
				case ev := <-procs.events:
					requested[ev.Object.GetName()] = true
				case <-time.After(10 * time.Second):
					t.Fatalf("%d of %d ends became reconcile requests", len(requested), n)
				}
			}
			for i, key := range keys {
				p, ok := procs.get(key)
				if !requested[key.Name] || !ok || p.exit == nil || p.exit.Identity.PID != ids[i].PID {
					t.Errorf("%s: requested %v, entry %v, exit %+v", key.Name, requested[key.Name], ok, p.exit)
				}
			}
		})
	}
}

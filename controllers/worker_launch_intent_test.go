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
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// TestAnUnrecordedLaunchIsAdopted plays the crash of tether run between
// starting a Worker's process and recording it: the process runs with the
// launch's token while status names no process (first launch) or the dead
// one (a restart after a crash). The next launch adopts it instead of
// starting a second agent; a process left by an earlier launch, carrying an
// older token, is not taken for the new one.
func TestAnUnrecordedLaunchIsAdopted(t *testing.T) {
	tests := []struct {
		name string
		// restart plays a crash restart (handleExit) rather than a first start.
		restart bool
		// ordinalOffset makes the left-over process carry the token of
		// another launch; then a new process must be started.
		ordinalOffset int32
		adopt         bool
	}{
		{name: "first launch", adopt: true},
		{name: "restart after a crash", restart: true, adopt: true},
		{name: "leftover of the previous launch at a restart", restart: true, ordinalOffset: -1, adopt: false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			argv := []string{"sleep", strconv.Itoa(300000 + i)}
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", UID: types.UID("uid-" + strconv.Itoa(i)), Finalizers: []string{WorkerFinalizer}}}
			w.Spec.Command = argv
			w.Spec.Restart = v1.RestartPolicy{Auto: true, MaxCrashes: 5, Window: &metav1.Duration{Duration: time.Minute}}
			w.Status.Restarts = 1
			var exit supervise.Exit
			if tt.restart {
				dead, exits := launchSleep(t)
				if err := syscall.Kill(dead.PID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				exit = <-exits.C()
				w.Status.Phase = v1.WorkerRunning
				w.Status.PID, w.Status.ProcessStartTicks, w.Status.BootID = int32(dead.PID), dead.StartTicks, dead.BootID
			}
			token := w.DeepCopy()
			token.Status.Restarts += tt.ordinalOffset
			orphan, _, err := supervise.Launch(supervise.LaunchSpec{Command: argv, Token: launchToken(token, tt.restart), LogFile: filepath.Join(t.TempDir(), "orphan.log")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(orphan.PID, syscall.SIGKILL) })

			c := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Worker{}).WithObjects(w).Build()
			r, err := newWorkerReconciler(c, c, events.NewFakeRecorder(16), WorkerOptions{LogDir: t.TempDir(), StopGrace: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.procs.close)
			stored := &v1.Worker{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(w), stored); err != nil {
				t.Fatal(err)
			}
			if tt.restart {
				err = handleTrackedExit(context.Background(), r, stored, exit, false)
			} else {
				err = r.start(context.Background(), stored)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := &v1.Worker{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// Closed first: a kill the table saw would start a
				// restart into the log directory being removed.
				r.procs.close()
				_ = syscall.Kill(int(got.Status.PID), syscall.SIGKILL)
			})
			if got.Status.Phase != v1.WorkerRunning || got.Status.PID == 0 {
				t.Fatalf("phase %s pid %d; want Running with a process", got.Status.Phase, got.Status.PID)
			}
			if adopted := got.Status.PID == int32(orphan.PID); adopted != tt.adopt {
				t.Fatalf("status pid %d, orphan %d: adopted %v, want %v", got.Status.PID, orphan.PID, adopted, tt.adopt)
			}
		})
	}
}

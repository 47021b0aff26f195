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
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

func launchSleep(t *testing.T) (supervise.Identity, <-chan supervise.Exit) {
	t.Helper()
	id, exits, err := supervise.Launch(supervise.LaunchSpec{
		Command: []string{"sleep", "1000"},
		LogFile: filepath.Join(t.TempDir(), "sleep.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(id.PID, syscall.SIGKILL) })
	return id, exits
}

// A reconcile that reads a Worker from a cache which has not yet seen the
// status naming the newly launched child must not replace the child's wait
// with a pidfd watch of the previous, dead process: the child's exit code
// and signal would be lost, and its crash recorded as Vanished.
func TestReconcileProcessKeepsTheChildWhenTheCacheLags(t *testing.T) {
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	previous, previousExits := launchSleep(t)
	if err := syscall.Kill(previous.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-previousExits
	current, currentExits := launchSleep(t)

	live := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", Finalizers: []string{WorkerFinalizer}}}
	live.Spec.Command = []string{"sleep", "1000"}
	live.Status.Phase = v1.WorkerRunning
	live.Status.PID, live.Status.ProcessStartTicks, live.Status.BootID = int32(current.PID), current.StartTicks, current.BootID
	c := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Worker{}).WithObjects(live).Build()
	r, err := newWorkerReconciler(c, c, events.NewFakeRecorder(16), WorkerOptions{LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.procs.close)
	key := client.ObjectKeyFromObject(live)
	r.procs.child(key, current, currentExits)

	stale := &v1.Worker{}
	if err := c.Get(context.Background(), key, stale); err != nil {
		t.Fatal(err)
	}
	stale.Status.PID, stale.Status.ProcessStartTicks = int32(previous.PID), previous.StartTicks
	if err := r.reconcileProcess(context.Background(), stale); err != nil {
		t.Fatal(err)
	}
	if p, ok := r.procs.get(key); !ok || p.id != current || p.stopWatch != nil || p.exit != nil {
		t.Fatalf("after a reconcile of a stale copy the table follows %+v (ok %v); want the waited-on child %s", p, ok, current)
	}

	if err := syscall.Kill(current.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, _ := r.procs.get(key)
		if p.exit != nil {
			if p.exit.Reason != supervise.ReasonSignaled || p.exit.Signal != syscall.SIGKILL {
				t.Fatalf("exit = %s; want killed by signal 9", p.exit)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the child's exit never reached the table")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

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
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

func launchSleep(t *testing.T) (supervise.Identity, *supervise.ExitNotice) {
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
	<-previousExits.C()
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

// laggingCache is a cache that has not seen the latest writes to one
// Worker: its Get returns an older copy; everything else, writes included,
// reaches the store.
type laggingCache struct {
	client.Client
	stale *v1.Worker
}

func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if w, ok := obj.(*v1.Worker); ok && key == client.ObjectKeyFromObject(c.stale) {
		c.stale.DeepCopyInto(w)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// A Worker whose cached copy shows no process must not be started while the
// store holds a newer status: most often the one this reconciler wrote when
// it launched the process the cache has not seen yet. Starting from the old
// copy launched a second process, whose status write then conflicted and
// which was stopped again: an agent started and killed for nothing, and,
// when the first process had crashed meanwhile, a restart that replaced the
// one the crash had already started.
func TestNoStartFromACacheThatLags(t *testing.T) {
	tests := []struct {
		name string
		// stored makes the store's status newer than the cached one; nil
		// leaves the cache current.
		stored func(st *v1.WorkerStatus, alive, dead supervise.Identity)
		launch bool
	}{
		{name: "cache current", launch: true},
		{name: "launch not yet cached, process running", stored: func(st *v1.WorkerStatus, alive, _ supervise.Identity) {
			st.Phase = v1.WorkerRunning
			st.PID, st.ProcessStartTicks, st.BootID = int32(alive.PID), alive.StartTicks, alive.BootID
		}},
		{name: "launch not yet cached, process crashed", stored: func(st *v1.WorkerStatus, _, dead supervise.Identity) {
			st.Phase = v1.WorkerRunning
			st.PID, st.ProcessStartTicks, st.BootID = int32(dead.PID), dead.StartTicks, dead.BootID
		}},
		{name: "stop not yet cached", stored: func(st *v1.WorkerStatus, _, _ supervise.Identity) {
			st.Phase = v1.WorkerStopped
		}},
		{name: "crash loop not yet cached", stored: func(st *v1.WorkerStatus, _, _ supervise.Identity) {
			st.Phase = v1.WorkerCrashLoop
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			alive, _ := launchSleep(t)
			dead, deadExits := launchSleep(t)
			if err := syscall.Kill(dead.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-deadExits.C()

			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", UID: types.UID(fmt.Sprintf("lag-%d-%d", os.Getpid(), i)), Finalizers: []string{WorkerFinalizer}}}
			w.Spec.Command = []string{"sleep", "1000"}
			w.Spec.Restart = v1.RestartPolicy{Auto: true, MaxCrashes: 5, Window: &metav1.Duration{Duration: time.Minute}}
			store := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Worker{}).WithObjects(w).Build()
			ctx, key := context.Background(), client.ObjectKeyFromObject(w)
			cached := &v1.Worker{}
			if err := store.Get(ctx, key, cached); err != nil {
				t.Fatal(err)
			}
			if tt.stored != nil {
				newer := cached.DeepCopy()
				tt.stored(&newer.Status, alive, dead)
				if err := store.Status().Update(ctx, newer); err != nil {
					t.Fatal(err)
				}
			}
			logDir := t.TempDir()
			r, err := newWorkerReconciler(laggingCache{Client: store, stale: cached}, store, events.NewFakeRecorder(16), WorkerOptions{LogDir: logDir, StopGrace: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			// Registered last, so run first: nothing restarts a process
			// the cleanups below kill.
			t.Cleanup(r.procs.close)
			before := &v1.Worker{}
			if err := store.Get(ctx, key, before); err != nil {
				t.Fatal(err)
			}

			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}

			after := &v1.Worker{}
			if err := store.Get(ctx, key, after); err != nil {
				t.Fatal(err)
			}
			if after.Status.PID != 0 && after.Status.PID != before.Status.PID {
				t.Cleanup(func() {
					r.procs.close()
					_ = syscall.Kill(int(after.Status.PID), syscall.SIGKILL)
				})
			}
			_, statErr := os.Stat(filepath.Join(logDir, w.Namespace, w.Name+".log"))
			if launched := statErr == nil; launched != tt.launch {
				t.Fatalf("a process was launched: %v, want %v (status pid %d, phase %s)", launched, tt.launch, after.Status.PID, after.Status.Phase)
			}
			if !tt.launch && after.ResourceVersion != before.ResourceVersion {
				t.Fatalf("the store's Worker was written (resourceVersion %s → %s): %+v", before.ResourceVersion, after.ResourceVersion, after.Status)
			}
			if tt.launch && (after.Status.PID == 0 || after.Status.Phase != v1.WorkerRunning) {
				t.Fatalf("a current cache must start the Worker: pid %d, phase %s", after.Status.PID, after.Status.Phase)
			}
		})
	}
}

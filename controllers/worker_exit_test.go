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
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// gatedReader is an API reader whose Lists wait until the restarted
// process has started (it writes its PID to a file), or fail.
type gatedReader struct {
	client.Client
	started string
	fail    error
	// launchedFirst is set when a List saw the new process already started.
	launchedFirst bool
}

func (g *gatedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(g.started); err == nil {
			g.launchedFirst = true
			break
		}
	}
	if g.fail != nil {
		return g.fail
	}
	return g.Client.List(ctx, list, opts...)
}

// exitFixture is a running, restartable Worker holding a Hook, whose
// process has just been killed, and a reconciler reading through gate.
func exitFixture(t *testing.T, fail error) (*WorkerReconciler, *gatedReader, *v1.Worker, supervise.Exit) {
	t.Helper()
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	dead, exits := launchSleep(t)
	if err := syscall.Kill(dead.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	exit := <-exits.C()
	started := filepath.Join(t.TempDir(), "started")
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", Finalizers: []string{WorkerFinalizer}}}
	w.Spec.Command = []string{"sh", "-c", `echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 1000`, started}
	w.Spec.Restart = v1.RestartPolicy{Auto: true, MaxCrashes: 5, Window: &metav1.Duration{Duration: time.Minute}}
	w.Status.Phase = v1.WorkerRunning
	w.Status.PID, w.Status.ProcessStartTicks, w.Status.BootID = int32(dead.PID), dead.StartTicks, dead.BootID
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"}}
	h.Spec.Goal, h.Spec.Steps, h.Spec.Assignee = "g", []v1.Step{{Name: "one"}}, "agent"
	c := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Worker{}, &v1.Hook{}).WithObjects(w, h).Build()
	gate := &gatedReader{Client: c, started: started, fail: fail}
	r, err := newWorkerReconciler(c, gate, events.NewFakeRecorder(16), WorkerOptions{LogDir: logDir(t), StopGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.procs.close)
	t.Cleanup(func() {
		// Closed first: a kill the table saw would start a restart into
		// the log directory being removed.
		r.procs.close()
		// The restarted shell may not have written its pid yet on a loaded
		// machine; killed before it does, it would write into the temporary
		// directory while the test removes it.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			data, err := os.ReadFile(started)
			if err != nil {
				continue
			}
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
	})
	stored := &v1.Worker{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(w), stored); err != nil {
		t.Fatal(err)
	}
	return r, gate, stored, exit
}

// The restart does not wait for the read of the Hooks held: the new
// process starts while they are listed, and the one status write records
// both.
func TestHandleExitRestartsWhileReadingTheHooksHeld(t *testing.T) {
	r, gate, w, exit := exitFixture(t, nil)
	ctx := context.Background()
	if err := handleTrackedExit(ctx, r, w, exit, true); err != nil {
		t.Fatal(err)
	}
	if !gate.launchedFirst {
		t.Fatal("the held Hooks were listed before the new process was launched")
	}
	got := &v1.Worker{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	n := len(got.Status.Crashes)
	if n != 1 || !got.Status.Crashes[0].Restarted || len(got.Status.Crashes[0].Held) != 1 || got.Status.Crashes[0].Held[0].Name != "task" {
		t.Fatalf("crashes = %+v; want one restarted crash holding task", got.Status.Crashes)
	}
	if got.Status.PID == 0 || got.Status.PID == int32(exit.Identity.PID) || got.Status.Phase != v1.WorkerRunning {
		t.Fatalf("phase %s pid %d; want Running with a new pid", got.Status.Phase, got.Status.PID)
	}
	if alive, err := identityOf(got).Alive(); err != nil || !alive {
		t.Fatalf("the recorded process %d is not alive (%v)", got.Status.PID, err)
	}
}

// handleTrackedExit hands exit to r as the procTable would deliver it: the
// process was followed while it ran (seenAlive) or found gone.
func handleTrackedExit(ctx context.Context, r *WorkerReconciler, w *v1.Worker, exit supervise.Exit, seenAlive bool) error {
	key := client.ObjectKeyFromObject(w)
	if p, ok := r.procs.get(key); !ok || p.id != exit.Identity {
		r.procs.put(key, &proc{id: exit.Identity, exit: &exit, seenAlive: seenAlive})
	}
	p, _ := r.procs.get(key)
	return r.handleExit(ctx, w, p)
}

// When the Hooks held cannot be read, nothing is recorded yet, but the
// process started for the restart keeps running: the retry records that
// same process, never a second one.
func TestHandleExitKeepsTheRestartUntilItIsRecorded(t *testing.T) {
	boom := errors.New("store unreadable")
	r, gate, w, exit := exitFixture(t, boom)
	ctx := context.Background()
	if err := handleTrackedExit(ctx, r, w.DeepCopy(), exit, true); !errors.Is(err, boom) {
		t.Fatalf("handleExit = %v; want %v", err, boom)
	}
	data, err := os.ReadFile(gate.started)
	if err != nil {
		t.Fatalf("the restart was not launched before the record: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the process launched for the restart, pid %d, was stopped (kill 0: %v)", pid, err)
	}
	got := &v1.Worker{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Crashes) != 0 || got.Status.PID != int32(exit.Identity.PID) {
		t.Fatalf("status changed: crashes %+v pid %d", got.Status.Crashes, got.Status.PID)
	}

	gate.fail = nil
	if err := handleTrackedExit(ctx, r, got, exit, true); err != nil {
		t.Fatal(err)
	}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Crashes) != 1 || !got.Status.Crashes[0].Restarted || got.Status.PID != int32(pid) || got.Status.Restarts != 1 {
		t.Fatalf("after the retry: crashes %+v pid %d restarts %d; want one restarted crash and pid %d", got.Status.Crashes, got.Status.PID, got.Status.Restarts, pid)
	}
	if p, ok := r.procs.get(client.ObjectKeyFromObject(w)); !ok || p.id.PID != pid || p.next != nil {
		t.Fatalf("proc table follows %+v; want the restarted pid %d", p, pid)
	}
}

// logDir is a directory for the logs of the processes a test's reconciler
// launches. The supervisor appends a process's end to its log from its own
// goroutine once the process is killed, which may be while the test's
// cleanup removes the directory; the removal is retried until that write
// is done, where t.TempDir's would fail the test.
func logDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tether-worker-logs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 100 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("removing %s: %v", dir, os.RemoveAll(dir))
	})
	return dir
}

// An exit in a phase that admits none (status.phase edited by hand while
// the process ran) is no reconcile error and not dropped silently: the
// status records the exit and keeps the phase, no successor is started,
// and the Ready condition and a Warning Event say why.
func TestHandleExitInAPhaseSetByHand(t *testing.T) {
	for _, phase := range []v1.WorkerPhase{v1.WorkerCrashed, v1.WorkerCrashLoop, v1.WorkerStopped, ""} {
		t.Run(string(phase), func(t *testing.T) {
			r, gate, w, exit := exitFixture(t, nil)
			launched := gate.started
			gate.started = t.TempDir() // exists: the read of the Hooks held waits for no launch
			ctx := context.Background()
			w.Status.Phase = phase
			if err := r.client.Status().Update(ctx, w); err != nil {
				t.Fatal(err)
			}
			if err := handleTrackedExit(ctx, r, w, exit, true); err != nil {
				t.Fatalf("handleExit = %v; want no reconcile error", err)
			}
			got := &v1.Worker{}
			if err := r.client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != phase || got.Status.PID != 0 || len(got.Status.Crashes) != 1 || got.Status.Crashes[0].Restarted || got.Status.Restarts != 0 {
				t.Fatalf("phase %q pid %d restarts %d crashes %+v; want phase %q kept, the process cleared, one crash not restarted",
					got.Status.Phase, got.Status.PID, got.Status.Restarts, got.Status.Crashes, phase)
			}
			ready := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady)
			if ready == nil || ready.Reason != ReasonInvalidTransition || !strings.Contains(ready.Message, "worker event crash") {
				t.Fatalf("Ready = %+v; want reason %s naming the event", ready, ReasonInvalidTransition)
			}
			rec := r.recorder.(*events.FakeRecorder)
			select {
			case e := <-rec.Events:
				if !strings.Contains(e, "Warning "+ReasonInvalidTransition) {
					t.Fatalf("event %q; want a Warning %s", e, ReasonInvalidTransition)
				}
			default:
				t.Fatal("no Event recorded")
			}
			if _, err := os.Stat(launched); err == nil {
				t.Fatal("a successor was launched")
			}
			if p, ok := r.procs.get(client.ObjectKeyFromObject(w)); ok {
				t.Fatalf("proc table still follows %+v", p)
			}
		})
	}
}

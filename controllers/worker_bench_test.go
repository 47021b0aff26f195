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
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/worker/supervise"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// crashLatencies are the delays from a kill to each effect, one per kill.
type crashLatencies struct {
	started, recorded, cleared []time.Duration
}

func (l *crashLatencies) report(b *testing.B, prefix string) {
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"started", l.started}, {"recorded", l.recorded}, {"cleared", l.cleared}} {
		reportPercentiles(b, prefix+"-"+m.name, m.d)
	}
}

func reportPercentiles(b *testing.B, name string, d []time.Duration) {
	b.ReportMetric(testsupport.Percentile(d, 50), name+"-p50-ms")
	b.ReportMetric(testsupport.Percentile(d, 99), name+"-p99-ms")
}

// benchObjects creates a restartable Worker running a sleep that
// announces itself on starts, and a Hook it holds.
func benchObjects(b *testing.B, c client.Client, starts *testsupport.StartLog) {
	ctx := context.Background()
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "default"}}
	w.Spec.Command = starts.Command(100000)
	w.Spec.Restart = v1.RestartPolicy{Auto: true, MaxCrashes: 100, Window: &metav1.Duration{Duration: time.Second}}
	if err := c.Create(ctx, w); err != nil {
		b.Fatal(err)
	}
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"}}
	h.Spec.Goal, h.Spec.Steps = "bench", []v1.Step{{Name: "only"}}
	if err := c.Create(ctx, h); err != nil {
		b.Fatal(err)
	}
}

// measureKills kills the Worker's process n times and times the new
// process's start, as it announces it on starts, and, through store
// watches, the crash record and the cleared assignee.
func measureKills(b *testing.B, c client.WithWatch, starts *testsupport.StartLog, n int) *crashLatencies {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	workers, err := c.Watch(ctx, &v1.WorkerList{}, client.InNamespace("default"))
	if err != nil {
		b.Fatal(err)
	}
	defer workers.Stop()
	hooks, err := c.Watch(ctx, &v1.HookList{}, client.InNamespace("default"))
	if err != nil {
		b.Fatal(err)
	}
	defer hooks.Stop()
	key := types.NamespacedName{Namespace: "default", Name: "bench"}
	pid := starts.Next(b, 0).PID
	lat := &crashLatencies{}
	for range n {
		// The Hook reconciler writes the Hook too: retry as a claimer does.
		// The claim's generation tells the clearing of this claim from
		// events of earlier rounds still queued in the watch (the Hook
		// reconciler's status writes after a clearing keep the assignee
		// empty), which would otherwise be timed as this round's.
		var claimed int64
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			h := &v1.Hook{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "task"}, h); err != nil {
				return err
			}
			h.Spec.Assignee = "bench"
			if err := c.Update(ctx, h); err != nil {
				return err
			}
			claimed = h.Generation
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		w := &v1.Worker{}
		if err := c.Get(ctx, key, w); err != nil {
			b.Fatal(err)
		}
		crashes := crashCount(w)
		start := time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		var started, recorded, cleared time.Duration
		next := 0
		for started == 0 || recorded == 0 || cleared == 0 {
			select {
			case s := <-starts.Starts:
				if started == 0 && s.PID != pid {
					started, next = s.At.Sub(start), s.PID
				}
			case ev := <-workers.ResultChan():
				if got, ok := ev.Object.(*v1.Worker); ok && recorded == 0 && crashCount(got) > crashes {
					recorded = time.Since(start)
				}
			case ev := <-hooks.ResultChan():
				if got, ok := ev.Object.(*v1.Hook); ok && cleared == 0 && got.Spec.Assignee == "" && got.Generation > claimed {
					cleared = time.Since(start)
				}
			case <-ctx.Done():
				b.Fatal("timed out waiting for the crash to be handled")
			}
		}
		pid = next
		lat.started, lat.recorded, lat.cleared = append(lat.started, started), append(lat.recorded, recorded), append(lat.cleared, cleared)
	}
	return lat
}

// crashCount counts crashes across the bounded records, by the restart counter.
func crashCount(w *v1.Worker) int32 {
	if n := len(w.Status.Crashes); n > 0 {
		return w.Status.Restarts + 1
	}
	return 0
}

// pollingSupervisor is the reference: the approach of earlier systems,
// checking the PID every interval, then recording the crash, clearing the
// assignee and restarting, one write each.
func pollingSupervisor(ctx context.Context, c client.Client, starts *testsupport.StartLog, interval time.Duration) error {
	key := types.NamespacedName{Namespace: "default", Name: "bench"}
	launch := func() (supervise.Identity, error) {
		id, _, err := supervise.Launch(supervise.LaunchSpec{Command: starts.Command(100000)})
		return id, err
	}
	id, err := launch()
	if err != nil {
		return err
	}
	write := func(mutate func(w *v1.Worker)) error {
		w := &v1.Worker{}
		if err := c.Get(ctx, key, w); err != nil {
			return err
		}
		mutate(w)
		return c.Status().Update(ctx, w)
	}
	if err := write(func(w *v1.Worker) { w.Status.PID, w.Status.Phase = int32(id.PID), v1.WorkerRunning }); err != nil {
		return err
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = supervise.Stop(id, time.Second)
			return nil
		case <-ticker.C:
		}
		if alive, _ := id.Alive(); alive {
			continue
		}
		if err := write(func(w *v1.Worker) {
			workerfsm.AppendCrash(&w.Status, v1.CrashRecord{Time: metav1.Now(), PID: int32(id.PID), Reason: supervise.ReasonVanished})
		}); err != nil {
			return err
		}
		h := &v1.Hook{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "task"}, h); err != nil {
			return err
		}
		if h.Spec.Assignee == "bench" {
			h.Spec.Assignee = ""
			if err := c.Update(ctx, h); err != nil {
				return err
			}
		}
		if id, err = launch(); err != nil {
			return err
		}
		if err := write(func(w *v1.Worker) { w.Status.PID, w.Status.Restarts = int32(id.PID), w.Status.Restarts+1 }); err != nil {
			return err
		}
	}
}

// BenchmarkWorkerCrashHandling kills a supervised worker b.N times and
// reports kill → new process running (as the process announces itself),
// → crash recorded (the same status write as the new PID) and → assignee
// cleared, p50 and p99, for the Worker reconciler on the file store. In the
// same run it reports two references: the floor, the hack/forkexec
// program restarting the same command (b.N kills), and a supervisor
// polling the PID every second (b.N/10 kills, at least 5). Run it with
// -benchtime=100x.
func BenchmarkWorkerCrashHandling(b *testing.B) {
	ctrl.SetLogger(logr.Discard())
	starts := testsupport.NewStartLog(b)
	st := testsupport.Store(b, "")
	benchObjects(b, st.Client(), starts)
	mgr := testsupport.LocalManager(b, st)
	b.Setenv(config.HomeEnv, b.TempDir())
	cfg, err := config.Load("")
	if err != nil {
		b.Fatal(err)
	}
	if err := SetupAll(mgr, Options{Config: cfg, Worker: WorkerOptions{LogDir: b.TempDir()}, SkipNameValidation: true}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	b.ResetTimer()
	event := measureKills(b, st.Client(), starts, b.N)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	w := &v1.Worker{}
	if err := st.Client().Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "bench"}, w); err == nil && w.Status.PID != 0 {
		_ = syscall.Kill(int(w.Status.PID), syscall.SIGKILL)
	}

	floor := testsupport.ForkExecRestarts(b, starts, b.N)

	ref := testsupport.Store(b, "")
	benchObjects(b, ref.Client(), starts)
	pctx, pcancel := context.WithCancel(context.Background())
	pdone := make(chan error, 1)
	go func() { pdone <- pollingSupervisor(pctx, ref.Client(), starts, time.Second) }()
	poll := measureKills(b, ref.Client(), starts, max(b.N/10, 5))
	pcancel()
	if err := <-pdone; err != nil {
		b.Fatal(err)
	}
	event.report(b, "event")
	reportPercentiles(b, "forkexec-started", floor)
	poll.report(b, "poll1s")
	b.ReportMetric(testsupport.Percentile(event.started, 99)/testsupport.Percentile(floor, 99), "event/forkexec-started-p99-ratio")
	b.ReportMetric(testsupport.Percentile(event.cleared, 50)/testsupport.Percentile(poll.cleared, 50), "event/poll1s-cleared-p50-ratio")
	fmt.Printf("kills: %d event-driven, %d fork+exec, %d polling\n", len(event.started), len(floor), len(poll.started))
}

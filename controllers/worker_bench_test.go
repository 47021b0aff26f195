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
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// crashLatencies are the delays from a kill to each effect, one per kill.
type crashLatencies struct {
	recorded, cleared, restarted []time.Duration
}

func (l *crashLatencies) report(b *testing.B, prefix string) {
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"recorded", l.recorded}, {"cleared", l.cleared}, {"restarted", l.restarted}} {
		b.ReportMetric(percentile(m.d, 50), prefix+"-"+m.name+"-p50-ms")
		b.ReportMetric(percentile(m.d, 99), prefix+"-"+m.name+"-p99-ms")
	}
}

func percentile(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return float64(s[i].Microseconds()) / 1000
}

// benchObjects creates a restartable Worker running sleep and a Hook it holds.
func benchObjects(b *testing.B, c client.Client) {
	ctx := context.Background()
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "default"}}
	w.Spec.Command = []string{"sleep", "100000"}
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

// measureKills kills the Worker's process n times and times, through
// store watches, the crash record, the cleared assignee and the new PID.
func measureKills(b *testing.B, c client.WithWatch, n int) *crashLatencies {
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
	w := &v1.Worker{}
	key := types.NamespacedName{Namespace: "default", Name: "bench"}
	for deadline := time.Now().Add(30 * time.Second); w.Status.PID == 0; time.Sleep(10 * time.Millisecond) {
		if err := c.Get(ctx, key, w); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
		if time.Now().After(deadline) {
			b.Fatal("the worker never started")
		}
	}
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
		if err := c.Get(ctx, key, w); err != nil {
			b.Fatal(err)
		}
		pid, crashes := w.Status.PID, crashCount(w)
		start := time.Now()
		if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		var recorded, cleared, restarted time.Duration
		for recorded == 0 || cleared == 0 || restarted == 0 {
			select {
			case ev := <-workers.ResultChan():
				got, ok := ev.Object.(*v1.Worker)
				if !ok {
					continue
				}
				if recorded == 0 && crashCount(got) > crashes {
					recorded = time.Since(start)
				}
				if restarted == 0 && crashCount(got) > crashes && got.Status.PID != 0 && got.Status.PID != pid {
					restarted = time.Since(start)
				}
			case ev := <-hooks.ResultChan():
				if got, ok := ev.Object.(*v1.Hook); ok && cleared == 0 && got.Spec.Assignee == "" && got.Generation > claimed {
					cleared = time.Since(start)
				}
			case <-ctx.Done():
				b.Fatal("timed out waiting for the crash to be handled")
			}
		}
		lat.recorded, lat.cleared, lat.restarted = append(lat.recorded, recorded), append(lat.cleared, cleared), append(lat.restarted, restarted)
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
func pollingSupervisor(ctx context.Context, c client.Client, interval time.Duration) error {
	key := types.NamespacedName{Namespace: "default", Name: "bench"}
	launch := func() (supervise.Identity, error) {
		id, _, err := supervise.Launch(supervise.LaunchSpec{Command: []string{"sleep", "100000"}})
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
			appendCrash(&w.Status, v1.CrashRecord{Time: metav1.Now(), PID: int32(id.PID), Reason: supervise.ReasonVanished})
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
// reports kill → crash recorded, → assignee cleared and → new process, p50
// and p99, for the Worker reconciler on the file store, and in the same run
// for a supervisor polling the PID every second (b.N/10 kills, at least 5).
// Run it with -benchtime=100x.
func BenchmarkWorkerCrashHandling(b *testing.B) {
	ctrl.SetLogger(logr.Discard())
	st := testsupport.Store(b, "")
	benchObjects(b, st.Client())
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
	event := measureKills(b, st.Client(), b.N)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	w := &v1.Worker{}
	if err := st.Client().Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "bench"}, w); err == nil && w.Status.PID != 0 {
		_ = syscall.Kill(int(w.Status.PID), syscall.SIGKILL)
	}

	ref := testsupport.Store(b, "")
	benchObjects(b, ref.Client())
	pctx, pcancel := context.WithCancel(context.Background())
	pdone := make(chan error, 1)
	go func() { pdone <- pollingSupervisor(pctx, ref.Client(), time.Second) }()
	poll := measureKills(b, ref.Client(), max(b.N/10, 5))
	pcancel()
	if err := <-pdone; err != nil {
		b.Fatal(err)
	}
	event.report(b, "event")
	poll.report(b, "poll1s")
	b.ReportMetric(percentile(poll.restarted, 99)/percentile(event.restarted, 99), "poll/event-restart-p99-ratio")
	fmt.Printf("kills: %d event-driven, %d polling\n", len(event.restarted), len(poll.restarted))
}

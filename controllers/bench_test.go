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

package controllers_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

func percentile(d []time.Duration, p float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

// BenchmarkStaleDetection measures detection error: when a stale Hook is
// seen recovering on a watch, minus the due time lastHeartbeat+staleAfter.
// The reference, in the same run, is the store's floor for the same path:
// a status write until a watch delivers it. burst-20 makes 20 Hooks fall
// due in the same instant each round (their agents begin with one
// heartbeat time), so that their stale transitions are made and written
// together; samples is the number of Hooks measured (20 a round), which
// bounds what the p99 means. The floor beside it (burstFloor) is the same
// Hooks' status writes issued at once with no reconciler, each until its
// watch event, and as many bare durable file replacements at once.
func BenchmarkStaleDetection(b *testing.B) {
	for _, hooks := range []int{1, 20} {
		b.Run(fmt.Sprintf("burst-%d", hooks), func(b *testing.B) { benchStale(b, hooks) })
	}
}

func benchStale(b *testing.B, hooks int) {
	env := newStore(b)
	env.startManager(b, testConfig(b))
	ctx := context.Background()
	// cpus is, per round, the CPU time this process spent from the due
	// time until the watch had seen every Hook recovering: on 2 cores the
	// last Hook cannot be seen sooner than half of it, whatever the load.
	var errs, refs, cpus []time.Duration
	var floor *burstFloor
	for i := 0; b.Loop(); i++ {
		w, err := env.c.Watch(ctx, &v1.HookList{}, client.InNamespace("default"))
		if err != nil {
			b.Fatal(err)
		}
		// The watch is read as events arrive, so each is timed on arrival.
		seen := make(chan map[string]time.Time, 1)
		var cpuSeen time.Duration
		prefix := fmt.Sprintf("h-%d-", i)
		go func() {
			at := map[string]time.Time{}
			for ev := range w.ResultChan() {
				// A watch from "" first lists earlier rounds' hooks too.
				if h, ok := ev.Object.(*v1.Hook); ok && h.Status.State == v1.HookRecovering && strings.HasPrefix(h.Name, prefix) {
					if _, dup := at[h.Name]; !dup {
						at[h.Name] = time.Now()
					}
					if len(at) == hooks {
						cpuSeen = processCPU(b)
						break
					}
				}
			}
			seen <- at
		}()
		names := make([]string, hooks)
		for j := range names {
			names[j] = fmt.Sprintf("h-%d-%d", i, j)
			if err := env.c.Create(ctx, newHook(names[j], time.Second, "only")); err != nil {
				b.Fatal(err)
			}
		}
		for _, name := range names {
			waitFor(b, env.c, name, 10*time.Second, state(v1.HookStepPending))
		}
		// Every agent begins with the same heartbeat time, so that the
		// Hooks fall due in the same instant, as Hooks whose agents beat
		// in the same microsecond do; side by side, so that all have begun
		// well before then on a loaded machine too.
		beat := time.Now()
		begun := make([]time.Time, hooks)
		var g errgroup.Group
		for j, name := range names {
			g.Go(func() error {
				h, err := beginAt(env.c, name, beat)
				if err == nil {
					begun[j] = h.Status.LastHeartbeat.Time
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		due := map[string]time.Time{}
		for j, name := range names {
			due[name] = begun[j].Add(time.Second)
		}
		if time.Now().After(beat.Add(time.Second)) {
			b.Fatal("the Hooks fell due before every agent had begun: the machine is too slow for staleAfter 1s")
		}
		time.Sleep(time.Until(beat.Add(time.Second)))
		cpuDue := processCPU(b)
		select {
		case at := <-seen:
			for name, d := range due {
				errs = append(errs, at[name].Sub(d))
			}
			cpus = append(cpus, cpuSeen-cpuDue)
		case <-time.After(30 * time.Second):
			b.Fatal("not every hook was seen recovering within 30s")
		}
		w.Stop()

		// Reference: a status write (a heartbeat) until the watch shows it.
		w, err = env.c.Watch(ctx, &v1.HookList{}, client.InNamespace("default"))
		if err != nil {
			b.Fatal(err)
		}
		for j := range hooks {
			name := fmt.Sprintf("h-%d-%d", i, j)
			h := &v1.Hook{}
			var start time.Time
			for {
				if err := env.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
					b.Fatal(err)
				}
				h.Status.LastHeartbeat = &metav1.MicroTime{Time: time.Now().Add(time.Hour)}
				start = time.Now()
				err := env.c.Status().Update(ctx, h)
				if err == nil {
					break
				}
				if !apierrors.IsConflict(err) {
					b.Fatal(err)
				}
			}
			for ev := range w.ResultChan() {
				if got, ok := ev.Object.(*v1.Hook); ok && got.Name == name && got.ResourceVersion == h.ResourceVersion {
					refs = append(refs, time.Since(start))
					break
				}
			}
		}
		w.Stop()

		if floor == nil {
			floor = newBurstFloor(b, env.c, names)
		}
		floor.round(b)
	}
	p50, p99 := percentile(errs, 0.5), percentile(errs, 0.99)
	r50 := percentile(refs, 0.5)
	b.ReportMetric(float64(p50.Microseconds())/1000, "err-p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "err-p99-ms")
	b.ReportMetric(float64(r50.Microseconds())/1000, "ref-write-to-watch-p50-ms")
	b.ReportMetric(float64(p50)/float64(r50), "p50-ratio-to-ref")
	b.ReportMetric(float64(len(errs)), "samples")
	b.ReportMetric(float64(percentile(cpus, 0.5).Microseconds())/1000, "cpu-due-to-seen-p50-ms")
	b.ReportMetric(float64(percentile(floor.store, 0.5).Microseconds())/1000, "floor-store-p50-ms")
	b.ReportMetric(float64(percentile(floor.store, 0.99).Microseconds())/1000, "floor-store-p99-ms")
	b.ReportMetric(float64(percentile(floor.cpu, 0.5).Microseconds())/1000, "floor-store-cpu-p50-ms")
	b.ReportMetric(float64(percentile(floor.fsync, 0.99).Microseconds())/1000, "floor-fsync-p99-ms")
}

// processCPU is the CPU time, user and system, this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Error(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// beginAt begins the Hook's step as its agent would, with the agent's
// clock reading at.
func beginAt(c client.Client, name string, at time.Time) (*v1.Hook, error) {
	h, _, err := hookwrite.Transition(context.Background(), c, client.ObjectKey{Namespace: "default", Name: name},
		hookwrite.Input(hookfsm.Input{Event: hookfsm.Begin}), hookwrite.Options{Actor: "test-agent", Now: func() time.Time { return at }})
	if err != nil {
		return nil, fmt.Errorf("agent begin on %s: %w", name, err)
	}
	return h, nil
}

// BenchmarkRecoveryFileRegen measures a state change written by an agent
// until the recovery file shows it, with tether's reconciler running; the
// reference in the same run is the agent's write alone.
func BenchmarkRecoveryFileRegen(b *testing.B) {
	env := newStore(b)
	dir := env.startManager(b, testConfig(b))
	ctx := context.Background()
	if err := env.c.Create(ctx, newHook("task", time.Hour, "only")); err != nil {
		b.Fatal(err)
	}
	waitFor(b, env.c, "task", 10*time.Second, state(v1.HookStepPending))
	agent(b, env.c, "task", hookfsm.Input{Event: hookfsm.Begin})
	path := recoveryfile.Path(dir, "default", "task")
	var regen, writes []time.Duration
	for i := 0; b.Loop(); i++ {
		in, want := hookfsm.Input{Event: hookfsm.Await, Message: "which database?"}, "- State: `awaiting_human`"
		if i%2 == 1 {
			in, want = hookfsm.Input{Event: hookfsm.Resume}, "- State: `step_running`"
		}
		start := time.Now()
		agent(b, env.c, "task", in)
		writes = append(writes, time.Since(start))
		for {
			if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), want) {
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
		regen = append(regen, time.Since(start))
	}
	p50, p99, w50 := percentile(regen, 0.5), percentile(regen, 0.99), percentile(writes, 0.5)
	b.ReportMetric(float64(p50.Microseconds())/1000, "regen-p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "regen-p99-ms")
	b.ReportMetric(float64(w50.Microseconds())/1000, "ref-agent-write-p50-ms")
	b.ReportMetric(float64(p50)/float64(w50), "p50-ratio-to-ref")
}

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
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// readoptSettle is how long a restarted `tether run` gets to re-adopt the
// Worker's process before it is killed; it is not part of any figure.
const readoptSettle = 500 * time.Millisecond

// BenchmarkAdoptedWorkerRestart is issue 6's adopted-process case: the
// Worker's process was launched by an earlier `tether run`, so the running
// one re-adopted it by PID and start time and watches it through a pidfd
// rather than waiting on a child. Each iteration restarts `tether run`,
// kills the adopted process with SIGKILL, and times kill → crash recorded
// and kill → new process running, as seen through a store watch (a
// poller's shared locks would delay the writes it times).
func BenchmarkAdoptedWorkerRestart(b *testing.B) {
	e := newWorkerEnv(b)
	w := sleeper("adopted", 100000, true)
	w.Spec.Restart.MaxCrashes = v1.WorkerCrashLimit
	w.Spec.Restart.Window = &metav1.Duration{Duration: time.Second}
	e.create(w)
	e.startRun()
	cur := e.waitRunning("adopted", 0)
	var recorded, restarted []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e.stopRun()
		e.startRun()
		time.Sleep(readoptSettle)
		changes, err := e.c.Watch(context.Background(), &v1.WorkerList{}, client.InNamespace("default"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		kill9(b, cur.Status.PID)
		var rec, rst time.Duration
		timeout := time.After(10 * time.Second)
		for rec == 0 || rst == 0 {
			var ev watch.Event
			select {
			case ev = <-changes.ResultChan():
			case <-timeout:
				b.Fatalf("no crash record or restart within 10s of killing pid %d", cur.Status.PID)
			}
			got, ok := ev.Object.(*v1.Worker)
			if !ok || got.Name != "adopted" {
				continue
			}
			if n := len(got.Status.Crashes); rec == 0 && n > 0 && got.Status.Crashes[n-1].PID == cur.Status.PID {
				rec = time.Since(start)
			}
			if rst == 0 && got.Status.Phase == v1.WorkerRunning && got.Status.PID != 0 && got.Status.PID != cur.Status.PID {
				rst = time.Since(start)
				cur = got
			}
		}
		changes.Stop()
		recorded, restarted = append(recorded, rec), append(restarted, rst)
	}
	b.StopTimer()
	report := func(name string, d []time.Duration) {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(d[(len(d)*99)/100].Microseconds())/1000, name+"-p99-ms")
	}
	report("adopted-recorded", recorded)
	report("adopted-restarted", restarted)
}

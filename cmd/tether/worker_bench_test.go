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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// watching tells whether the process runPID holds a pidfd of pid: a
// restarted `tether run` has re-adopted the Worker's process once it
// watches it, and only then is a kill the adopted case.
func watching(runPID int, pid int32) bool {
	dir := fmt.Sprintf("/proc/%d/fdinfo", runPID)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	want := fmt.Sprintf("Pid:\t%d\n", pid)
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && strings.Contains(string(data), want) {
			return true
		}
	}
	return false
}

// BenchmarkAdoptedWorkerRestart is issue 6's adopted-process case: the
// Worker's process was launched by an earlier `tether run`, so the running
// one re-adopted it by PID and start time and watches it through a pidfd
// rather than waiting on a child. Each iteration restarts `tether run`,
// waits until it holds a pidfd of the process, kills the adopted process with SIGKILL, and times kill → new process
// running, as the process announces itself, and kill → crash recorded (the
// same status write as the new PID), as seen through a store watch (a
// poller's shared locks would delay the writes it times). The floor, in the
// same run, is the hack/forkexec program restarting the same command.
func BenchmarkAdoptedWorkerRestart(b *testing.B) {
	e := newWorkerEnv(b)
	starts := testsupport.NewStartLog(b)
	w := sleeper("adopted", 100000, true)
	w.Spec.Command = starts.Command(100000)
	w.Spec.Restart.MaxCrashes = v1.WorkerCrashLimit
	w.Spec.Restart.Window = &metav1.Duration{Duration: time.Second}
	e.create(w)
	e.startRun()
	pid := int32(starts.Next(b, 0).PID)
	var started, recorded []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e.stopRun()
		e.startRun()
		e.waitFor(20*time.Second, "tether run to watch the worker's process", func() bool { return watching(e.run.Process.Pid, pid) })
		changes, err := e.c.Watch(context.Background(), &v1.WorkerList{}, client.InNamespace("default"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		kill9(b, pid)
		var st, rec time.Duration
		next := int32(0)
		timeout := time.After(10 * time.Second)
		for st == 0 || rec == 0 {
			var ev watch.Event
			select {
			case s := <-starts.Starts:
				if st == 0 && int32(s.PID) != pid {
					st, next = s.At.Sub(start), int32(s.PID)
				}
				continue
			case ev = <-changes.ResultChan():
			case <-timeout:
				b.Fatalf("no restart or crash record within 10s of killing pid %d", pid)
			}
			got, ok := ev.Object.(*v1.Worker)
			if !ok || got.Name != "adopted" {
				continue
			}
			if n := len(got.Status.Crashes); rec == 0 && n > 0 && got.Status.Crashes[n-1].PID == pid && got.Status.Phase == v1.WorkerRunning {
				rec = time.Since(start)
			}
		}
		changes.Stop()
		pid = next
		started, recorded = append(started, st), append(recorded, rec)
	}
	b.StopTimer()
	e.stopRun()
	floor := testsupport.ForkExecRestarts(b, starts, b.N)
	report := func(name string, d []time.Duration) {
		b.ReportMetric(testsupport.Percentile(d, 50), name+"-p50-ms")
		b.ReportMetric(testsupport.Percentile(d, 99), name+"-p99-ms")
	}
	report("adopted-started", started)
	report("adopted-recorded", recorded)
	report("forkexec-started", floor)
	b.ReportMetric(testsupport.Percentile(started, 99)/testsupport.Percentile(floor, 99), "adopted/forkexec-started-p99-ratio")
}

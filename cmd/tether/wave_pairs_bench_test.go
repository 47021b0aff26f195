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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// wavePairsEnv is how many pairs BenchmarkStartWavePairs runs (default 3).
const wavePairsEnv = "TETHER_BENCH_PAIRS"

// BenchmarkStartWavePairs times the first start over 10,000
// never-reconciled Hooks (the /hooks half of
// BenchmarkLocalOperatorScale10k: start → the last Hook's first reconcile
// stored, and the process's CPU time until then) with this tree's binary
// and with $TETHER_BENCH_BASELINE (another tether binary, an earlier
// build), alternated in pairs on copies of one populated store, the order
// swapped at every pair; then the store's floor under the wave
// (measureWriteFloor) in the same run. It reports the medians of each and
// their ratios (this tree / baseline). Without a baseline it is skipped.
func BenchmarkStartWavePairs(b *testing.B) {
	baseline := os.Getenv("TETHER_BENCH_BASELINE")
	if baseline == "" {
		b.Skip("set TETHER_BENCH_BASELINE to a tether binary to compare with")
	}
	pairs := 3
	if n, err := strconv.Atoi(os.Getenv(wavePairsEnv)); err == nil && n > 0 {
		pairs = n
	}
	home := scaleHome(b)
	pristine := filepath.Join(b.TempDir(), "pristine")
	fill := testsupport.Store(b, pristine, testsupport.WithoutFsync)
	fleet := newScaleFleet(b, operatorScaleHooks)
	fleet.pids, fleet.checkpoints = nil, 0
	fleet.populate(b, fill.Client(), "default", scaleProto(b), 8)
	_ = fill.Close()

	type runs struct{ wave, cpu []time.Duration }
	results := map[string]*runs{tetherBin: {}, baseline: {}}
	b.ResetTimer()
	for i := range pairs {
		order := []string{baseline, tetherBin}
		if i%2 == 1 {
			order = []string{tetherBin, baseline}
		}
		for _, bin := range order {
			dir := filepath.Join(b.TempDir(), "store")
			if out, err := exec.Command("cp", "-a", pristine, dir).CombinedOutput(); err != nil {
				b.Fatalf("copying the store: %v: %s", err, out)
			}
			wave, cpu := runWave(b, bin, dir, home)
			results[bin].wave = append(results[bin].wave, wave)
			results[bin].cpu = append(results[bin].cpu, cpu)
			name := "this tree"
			if bin == baseline {
				name = "baseline"
			}
			// Written at once, not with b.Logf, which prints when the
			// benchmark ends: a run cut short still shows its pairs.
			fmt.Fprintf(os.Stderr, "pair %d, %s: last first reconcile %v, CPU %v (%s)\n", i+1, name, wave.Round(time.Millisecond), cpu.Round(10*time.Millisecond), loadavg())
		}
	}
	b.StopTimer()
	floor := measureWriteFloor(b, scaleProto(b), operatorScaleHooks)
	fmt.Fprintf(os.Stderr, "floor-store %v, floor-reconcile %v, floor-fsync %v, floor-fsync-reconcile %v (%s)\n", floor.store.Round(time.Millisecond),
		floor.reconcile.Round(time.Millisecond), floor.fsync.Round(time.Millisecond), floor.fsyncReconcile.Round(time.Millisecond), loadavg())
	cur, base := results[tetherBin], results[baseline]
	for _, m := range []struct {
		unit  string
		value float64
	}{
		{"wave-ms", ms(median(cur.wave))},
		{"base-wave-ms", ms(median(base.wave))},
		{"wave-ratio", float64(median(cur.wave)) / float64(median(base.wave))},
		{"cpu-ms", ms(median(cur.cpu))},
		{"base-cpu-ms", ms(median(base.cpu))},
		{"cpu-ratio", float64(median(cur.cpu)) / float64(median(base.cpu))},
		{"floor-store-ms", ms(floor.store)},
		{"floor-fsync-ms", ms(floor.fsync)},
		{"floor-reconcile-ms", ms(floor.reconcile)},
		{"floor-fsync-reconcile-ms", ms(floor.fsyncReconcile)},
		{"wave-over-floor-store", float64(median(cur.wave)) / float64(floor.store)},
		{"wave-over-floor-reconcile", float64(median(cur.wave)) / float64(floor.reconcile)},
	} {
		b.ReportMetric(m.value, m.unit)
	}
}

// runWave starts `bin run` on the store in dir and returns the time from
// start until the last Hook's first reconcile was stored, and the
// process's CPU time then.
func runWave(b *testing.B, bin, dir, home string) (wave, cpu time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testsupport.Store(b, dir).Client()
	list := &v1.HookList{}
	if err := c.List(ctx, list, client.InNamespace("default"), client.Limit(1)); err != nil {
		b.Fatal(err)
	}
	w, err := c.Watch(ctx, &v1.HookList{}, client.InNamespace("default"), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	seen := newHookSeen()
	go seen.follow(w)
	cmd := exec.Command(bin, "run", "--store", dir, "--metrics-bind-address", "0")
	cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
	log := &syncBuffer{}
	cmd.Stderr = log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	at, ok := seen.waitFirst(operatorScaleHooks, 15*time.Minute)
	if !ok {
		b.Fatalf("%s run: only %d of %d Hooks reconciled:\n%s", bin, seen.firstCount(), operatorScaleHooks, log.String())
	}
	return at.Sub(start), procCPU(b, cmd.Process.Pid)
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load " + strings.Join(f[:3], " ")
}

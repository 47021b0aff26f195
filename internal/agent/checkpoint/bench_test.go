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

package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
)

func gitB(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// BenchmarkTake measures a whole checkpoint — snapshot, sequence
// allocation, Checkpoint object and lastCheckpoint on the file store — of a
// 10,000-file workspace with 10 files changed each time, next to `git stash
// create` on the same change, and the Hook's first take (cold index).
func BenchmarkTake(b *testing.B) {
	const files, changed = 10000, 10
	ws := b.TempDir()
	gitB(b, ws, "init", "-q")
	for i := range files {
		p := filepath.Join(ws, fmt.Sprintf("d%02d/f%04d.txt", i%100, i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gitB(b, ws, "add", "-A")
	// Packed, as a clone is: 10,000 loose objects would start git gc
	// --auto in the background, under every measurement (see
	// snapshot.BenchmarkCapture).
	gitB(b, ws, "-c", "gc.auto=0", "commit", "-q", "-m", "files")
	gitB(b, ws, "gc", "-q")
	c := newClient(b)
	key := createHook(b, c, "bench", ws)
	var takes, stash []time.Duration
	var first time.Duration
	round := 0
	for b.Loop() {
		round++
		b.StopTimer()
		for j := range changed {
			i := (round*changed + j) * 97 % files
			if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("d%02d/f%04d.txt", i%100, i)), []byte(fmt.Sprintf("round %d\n", round)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		gitB(b, ws, "stash", "create")
		stash = append(stash, time.Since(start))
		b.StartTimer()
		start = time.Now()
		if _, err := checkpoint.Take(context.Background(), c, key, checkpoint.Request{Trigger: v1.TriggerManual}); err != nil {
			b.Fatal(err)
		}
		if round == 1 { // the first fills the persistent index
			first = time.Since(start)
			continue
		}
		takes = append(takes, time.Since(start))
	}
	if len(takes) == 0 {
		return
	}
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(takes, 0.5), "take-p50-ms")
	b.ReportMetric(pct(takes, 0.99), "take-p99-ms")
	b.ReportMetric(pct(stash, 0.5), "stash-create-p50-ms")
	b.ReportMetric(pct(stash, 0.99), "stash-create-p99-ms")
	b.ReportMetric(float64(first.Microseconds())/1000, "first-take-ms")
	b.ReportMetric(pct(takes, 0.5)/pct(stash, 0.5), "p50-ratio-to-stash")
	b.ReportMetric(pct(takes, 0.99)/pct(stash, 0.99), "p99-ratio-to-stash")
}

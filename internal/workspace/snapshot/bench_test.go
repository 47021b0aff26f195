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

package snapshot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// benchFiles and benchChanged are the workspace's size and how many files
// change between two captures.
const (
	benchFiles   = 10000
	benchChanged = 10
)

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// benchRepo is a committed repository of benchFiles files in 100 directories.
func benchRepo(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	gitT(b, dir, "init", "-q")
	for i := range benchFiles {
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d/file%04d.go", i%100, i))
		if i < 100 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package pkg\n\n// file %d\nvar X%d = %q\n", i, i, strings.Repeat("x", i%200))), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gitT(b, dir, "add", "-A")
	// Packed, as a clone is. Left loose, the 10,000 objects make the
	// commit start git gc --auto in the background, and its seconds of
	// repacking then run under both measurements.
	gitT(b, dir, "-c", "gc.auto=0", "commit", "-q", "-m", "10k files")
	gitT(b, dir, "gc", "-q")
	return dir
}

// touch rewrites benchChanged tracked files (round r) so the next capture
// has new content to hash.
func touch(b *testing.B, dir string, r int) {
	b.Helper()
	for j := range benchChanged {
		i := (r*benchChanged + j) * 97 % benchFiles
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d/file%04d.go", i%100, i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package pkg\n\n// round %d\n", r)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the CPU time used so far by this process and by its children
// that have been waited for: the git processes of a capture.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// BenchmarkCapture measures a checkpoint capture (tree, commit and ref) of
// a 10,000-file workspace with 10 files changed since the previous one,
// and, in the same run, `git stash create` on the same change as the
// reference (it does similar work without untracked files), plus the first
// capture of a Hook (its index seeded from the user's). Target: p99 ≤ 100 ms
// and ≤ 1.5× git stash create. The CPU times (this process and its git
// children) vary less than wall times with the machine's load.
func BenchmarkCapture(b *testing.B) {
	ctx := context.Background()
	dir := benchRepo(b)
	indexDir := b.TempDir()

	var cold []time.Duration
	var capture, stash, captureCPU, stashCPU []time.Duration
	seq := int64(0)
	prev := ""
	round := 0
	for b.Loop() {
		round++
		touch(b, dir, round)
		b.StopTimer()
		// The reference, on the same working tree.
		start, cpu := time.Now(), cpuTime(b)
		if out, err := gitE(dir, "stash", "create"); err != nil {
			b.Fatalf("git stash create: %v\n%s", err, out)
		}
		stash = append(stash, time.Since(start))
		stashCPU = append(stashCPU, cpuTime(b)-cpu)
		b.StartTimer()

		seq++
		o := snapshot.Options{Namespace: "default", Hook: "bench", Seq: seq, IndexDir: indexDir, Previous: prev}
		start, cpu = time.Now(), cpuTime(b)
		res, err := snapshot.Capture(ctx, dir, o)
		d, c := time.Since(start), cpuTime(b)-cpu
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Changed) != benchChanged {
			b.Fatalf("capture %d saw %d changed files, want %d", seq, len(res.Changed), benchChanged)
		}
		prev = res.Commit
		if seq == 1 {
			cold = append(cold, d)
			continue
		}
		capture = append(capture, d)
		captureCPU = append(captureCPU, c)
	}
	b.StopTimer()
	// More first captures: each Hook name starts without a persistent index.
	for i := range 3 {
		o := snapshot.Options{Namespace: "default", Hook: fmt.Sprintf("cold%d", i), Seq: 1, IndexDir: indexDir}
		start := time.Now()
		if _, err := snapshot.Capture(ctx, dir, o); err != nil {
			b.Fatal(err)
		}
		cold = append(cold, time.Since(start))
	}
	if len(capture) == 0 {
		capture, captureCPU = cold[:1], cold[:1]
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	p50, p99 := percentile(capture, 0.5), percentile(capture, 0.99)
	s50, s99 := percentile(stash, 0.5), percentile(stash, 0.99)
	b.ReportMetric(ms(p50), "capture-p50-ms")
	b.ReportMetric(ms(p99), "capture-p99-ms")
	b.ReportMetric(ms(s50), "stash-create-p50-ms")
	b.ReportMetric(ms(s99), "stash-create-p99-ms")
	b.ReportMetric(ms(percentile(cold, 0.5)), "first-capture-ms")
	b.ReportMetric(float64(p50)/float64(s50), "p50-ratio-to-stash")
	b.ReportMetric(float64(p99)/float64(s99), "p99-ratio-to-stash")
	b.ReportMetric(ms(percentile(captureCPU, 0.5)), "capture-cpu-p50-ms")
	b.ReportMetric(ms(percentile(stashCPU, 0.5)), "stash-create-cpu-p50-ms")
}

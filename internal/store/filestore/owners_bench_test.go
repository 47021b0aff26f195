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

package filestore_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// BenchmarkDeleteAmongMany fills one store to 1,000, 10,000 and 100,000
// Hooks of realistic size and, at each size, times the deletion of Hooks
// that own two Checkpoints each, cascade included, each in a store opened
// for it as a CLI process opens one: through the owner index, and, in the
// same run, by listing every kind as the collector did before it. The
// index's cost must not grow with the store.
func BenchmarkDeleteAmongMany(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	const probes = 30
	filled := 0
	fill := func(n int) {
		// The filling's durability is not what is measured.
		s := testsupport.Store(b, dir, testsupport.WithoutFsync)
		c := s.Client()
		var wg sync.WaitGroup
		next := make(chan int)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					if err := c.Create(ctx, fleetHook(fmt.Sprintf("fleet-%06d", i))); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		for ; filled < n; filled++ {
			next <- filled
		}
		close(next)
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		_ = s.Close()
	}
	// deletes creates probes owners with two Checkpoints each (a sixth as
	// many when listing, which takes seconds each at 100,000), then times
	// the deletion of each in a store of its own.
	deletes := func(size int, listing bool) (p50, mean, cpu time.Duration) {
		probes := probes
		if listing {
			probes /= 6
		}
		owners := make([]*agentsv1alpha1.Hook, probes)
		s := benchStore(b, dir)
		for i := range owners {
			owners[i] = fleetHook(fmt.Sprintf("owner-%d-%v-%d", size, listing, i))
			must(b, s.Client().Create(ctx, owners[i]))
			for j := range 2 {
				must(b, s.Client().Create(ctx, checkpointOf(owners[i], j)))
			}
		}
		_ = s.Close()
		var l latencies
		var sum time.Duration
		for k, owner := range owners {
			s := benchStore(b, dir)
			if listing {
				s.ListDependents()
			}
			before := cpuTime()
			d := timeOp(b, func() error { return s.Client().Delete(ctx, owner) })
			l, sum, cpu = append(l, d), sum+d, cpu+cpuTime()-before
			left := &agentsv1alpha1.CheckpointList{}
			must(b, s.Client().List(ctx, left))
			if want := 2 * (probes - k - 1); len(left.Items) != want {
				b.Fatalf("%d Checkpoints left after deleting an owner, want %d", len(left.Items), want)
			}
			_ = s.Close()
		}
		return l.p50(), sum / time.Duration(probes), cpu / time.Duration(probes)
	}
	for b.Loop() {
		var base time.Duration
		for _, size := range []int{1000, 10000, 100000} {
			fill(size)
			p50, mean, cpu := deletes(size, false)
			lp50, lmean, lcpu := deletes(size, true)
			if size == 1000 {
				base = p50
			}
			tag := fmt.Sprintf("%dk-", size/1000)
			b.ReportMetric(toMillis(p50), tag+"delete-p50-ms")
			b.ReportMetric(durRatio(p50, base), tag+"delete-p50-x1k")
			b.ReportMetric(toMillis(cpu), tag+"delete-cpu-ms")
			b.ReportMetric(toMillis(lp50), tag+"listing-p50-ms")
			b.ReportMetric(toMillis(lcpu), tag+"listing-cpu-ms")
			b.Logf("%d Hooks: delete with the owner index p50/mean %s/%s, CPU %s; listing every kind %s/%s, CPU %s", size, p50, mean, cpu, lp50, lmean, lcpu)
		}
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

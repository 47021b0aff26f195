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

package settlegc

import (
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// look is what one tick finds: the controllers' metrics, if they are
// gathered then, and the collections the runtime has started on its own.
type look struct {
	depth, active, ended float64
	cycles               uint64
	err                  error
}

// script answers each Gather and each count of collections with the look
// of the current tick.
type script struct {
	mu    sync.Mutex
	looks []look
	// tick is the current tick, counted from 1.
	tick int
	// gatheredAt are the ticks at which the metrics were gathered.
	gatheredAt []int
}

func (s *script) current() look {
	return s.looks[min(max(s.tick, 1), len(s.looks))-1]
}

func (s *script) Gather() ([]*dto.MetricFamily, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gatheredAt = append(s.gatheredAt, s.tick)
	l := s.current()
	if l.err != nil {
		return nil, l.err
	}
	reg := prometheus.NewRegistry()
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: queueDepthMetric}, []string{"name", "priority"})
	active := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: activeWorkersMetric}, []string{"controller"})
	ended := prometheus.NewCounterVec(prometheus.CounterOpts{Name: reconcilesMetric}, []string{"controller", "result"})
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds"})
	reg.MustRegister(depth, active, ended, other)
	// Spread over two controllers, as the Hook and Worker queues would be.
	depth.WithLabelValues("hook", "0").Set(l.depth / 2)
	depth.WithLabelValues("worker", "-100").Set(l.depth / 2)
	active.WithLabelValues("hook").Set(l.active)
	active.WithLabelValues("worker").Set(0)
	ended.WithLabelValues("hook", "success").Add(l.ended)
	other.Set(7)
	return reg.Gather()
}

func (s *script) cycles() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current().cycles
}

func (s *script) now() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tick
}

// runResult is what a Settler did over a script: the ticks (counted from
// 1) at which it settled, returned a burst's memory and gathered the
// metrics.
type runResult struct {
	settledAt, releasedAt, gatheredAt []int
}

// run starts a Settler over looks, one tick each, then five more ticks of
// the last look, and tells what it did at which tick.
func run(t *testing.T, looks []look, unsynced bool) runResult {
	t.Helper()
	g := &script{looks: looks}
	var r runResult
	s := &Settler{
		Synced:  func(context.Context) bool { return !unsynced },
		Metrics: g,
		Log:     logr.Discard(),
		settle: func() settled {
			r.settledAt = append(r.settledAt, g.now())
			return settled{}
		},
		release: func() settled {
			r.releasedAt = append(r.releasedAt, g.now())
			return settled{}
		},
		cycles: g.cycles,
		next: func(context.Context) bool {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.tick++
			return g.tick <= len(looks)+5
		},
	}
	if err := s.Start(context.Background()); err != nil {
		t.Errorf("Start: %v", err)
	}
	r.gatheredAt = g.gatheredAt
	return r
}

// TestSettlesOnceIdle: the collector is settled once, at the second look
// in a row that finds nothing queued, nothing running and no reconcile
// ended since the look before; never when the caches do not sync, the
// controllers stay busy or the metrics cannot be read.
func TestSettlesOnceIdle(t *testing.T) {
	idle := look{}
	cases := []struct {
		name  string
		looks []look
		// unsynced: the caches never sync.
		unsynced bool
		// wantAt is the look (counted from 1) that settles; 0: none does.
		wantAt int
	}{
		{name: "idle from the start", looks: []look{idle}, wantAt: 2},
		{name: "a queue drains", looks: []look{{depth: 900}, {depth: 40, active: 2, ended: 860}, {ended: 902}, {ended: 902}}, wantAt: 4},
		{name: "reconciles still running", looks: []look{{active: 1, ended: 5}, {active: 1, ended: 5}, {ended: 6}, {ended: 6}}, wantAt: 4},
		{name: "work between the looks", looks: []look{{ended: 1}, {ended: 2}, {ended: 3}, {ended: 3}}, wantAt: 4},
		{name: "busy again between two idle looks", looks: []look{{ended: 1}, {depth: 3, ended: 1}, {ended: 4}, {ended: 4}}, wantAt: 4},
		{name: "never idle", looks: []look{{depth: 1}}},
		{name: "metrics unreadable", looks: []look{{err: errors.New("gathering failed")}}},
		{name: "caches never sync", looks: []look{idle}, unsynced: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.looks, tc.unsynced)
			switch {
			case tc.wantAt == 0 && len(r.settledAt) != 0:
				t.Errorf("settled at look %v, want never", r.settledAt)
			case tc.wantAt != 0 && (len(r.settledAt) != 1 || r.settledAt[0] != tc.wantAt):
				t.Errorf("settled at looks %v, want once at look %d", r.settledAt, tc.wantAt)
			}
			if len(r.releasedAt) != 0 {
				t.Errorf("returned a burst's memory at looks %v with the collector never run", r.releasedAt)
			}
		})
	}
}

// TestReturnsEachBurstThatDroveTheCollector: after the settling, the free
// heap is returned once for each burst in which the collector ran on its
// own, at the second idle look in a row after it with no reconcile ended
// between them; never while the controllers are busy, never for a burst
// that left the collector idle, and never before the settling. The
// controllers' metrics are gathered only while a return is due.
func TestReturnsEachBurstThatDroveTheCollector(t *testing.T) {
	idle := look{}
	cases := []struct {
		name  string
		looks []look
		// wantSettled is the tick that settles.
		wantSettled int
		// wantReleased are the ticks that return a burst's memory.
		wantReleased []int
		// wantGathered are the ticks that gather the metrics.
		wantGathered []int
	}{
		{name: "no collection after settling", looks: []look{idle, idle, idle, idle}, wantSettled: 2, wantGathered: []int{1, 2}},
		{
			name:         "a burst that left the collector idle",
			looks:        []look{idle, idle, {depth: 5}, {active: 1, ended: 4}, {ended: 9}, {ended: 9}},
			wantSettled:  2,
			wantGathered: []int{1, 2},
		},
		{
			name:         "a burst that drove the collector",
			looks:        []look{idle, idle, {depth: 5}, {active: 1, ended: 4, cycles: 1}, {ended: 9, cycles: 2}, {ended: 9, cycles: 2}},
			wantSettled:  2,
			wantReleased: []int{6},
			wantGathered: []int{1, 2, 4, 5, 6},
		},
		{
			name:         "collections during the start-up wave are the settling's",
			looks:        []look{{depth: 9, cycles: 3}, {ended: 9, cycles: 5}, {ended: 9, cycles: 5}, {ended: 9, cycles: 5}},
			wantSettled:  3,
			wantGathered: []int{1, 2, 3},
		},
		{
			name: "a reconcile ends between two idle looks",
			looks: []look{idle, idle, {depth: 1, cycles: 1}, {ended: 1, cycles: 1}, {ended: 2, cycles: 1},
				{ended: 3, cycles: 1}, {ended: 3, cycles: 1}},
			wantSettled:  2,
			wantReleased: []int{7},
			wantGathered: []int{1, 2, 3, 4, 5, 6, 7},
		},
		{
			name:         "the collector runs while the controllers are idle",
			looks:        []look{idle, idle, idle, {cycles: 1}, {cycles: 1}},
			wantSettled:  2,
			wantReleased: []int{5},
			wantGathered: []int{1, 2, 4, 5},
		},
		{
			name: "two bursts",
			looks: []look{idle, idle, {depth: 2, cycles: 1}, {ended: 2, cycles: 1}, {ended: 2, cycles: 1},
				{ended: 2, cycles: 1}, {depth: 4, ended: 2, cycles: 1}, {ended: 6, cycles: 3}, {ended: 6, cycles: 3}},
			wantSettled:  2,
			wantReleased: []int{5, 9},
			wantGathered: []int{1, 2, 3, 4, 5, 8, 9},
		},
		{
			name:         "metrics unreadable after the settling",
			looks:        []look{idle, idle, {depth: 1, cycles: 1}, {err: errors.New("gathering failed"), cycles: 1}, {cycles: 2}, {cycles: 2}},
			wantSettled:  2,
			wantGathered: []int{1, 2, 3, 4},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.looks, false)
			if len(r.settledAt) != 1 || r.settledAt[0] != tc.wantSettled {
				t.Errorf("settled at ticks %v, want once at tick %d", r.settledAt, tc.wantSettled)
			}
			if !slices.Equal(r.releasedAt, tc.wantReleased) {
				t.Errorf("returned a burst's memory at ticks %v, want %v", r.releasedAt, tc.wantReleased)
			}
			if !slices.Equal(r.gatheredAt, tc.wantGathered) {
				t.Errorf("gathered the metrics at ticks %v, want %v", r.gatheredAt, tc.wantGathered)
			}
		})
	}
}

// drop allocates n MiB and lets it go.
//
//go:noinline
func drop(n int) {
	garbage := make([][]byte, 0, n)
	for range n {
		garbage = append(garbage, make([]byte, 1<<20))
	}
	runtime.KeepAlive(garbage)
}

// TestReleaseRuntime: a return collects and gives the free pages back to
// the system, and leaves GOGC as it is.
func TestReleaseRuntime(t *testing.T) {
	prev := debug.SetGCPercent(300)
	defer debug.SetGCPercent(prev)
	before := automaticCycles()
	drop(64)
	r := releaseRuntime()
	if got := debug.SetGCPercent(300); got != 300 {
		t.Errorf("GOGC after a return = %d, want 300", got)
	}
	if r.live == 0 {
		t.Error("reported no live heap")
	}
	if r.released < 32<<20 {
		t.Errorf("returned %d MiB after dropping 64 MiB", r.released>>20)
	}
	if after := automaticCycles(); after < before {
		t.Errorf("the automatic collections went from %d to %d", before, after)
	}
}

// TestSettleRuntime: settling sets SteadyGCPercent when GOGC is not set,
// and keeps the user's when it is.
func TestSettleRuntime(t *testing.T) {
	for _, tc := range []struct {
		name, gogc string
		want       int
	}{
		{name: "GOGC unset", want: SteadyGCPercent},
		{name: "GOGC set", gogc: "300", want: 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.gogc != "" {
				t.Setenv("GOGC", tc.gogc)
			} else {
				t.Setenv("GOGC", "")
				unsetenv(t, "GOGC")
			}
			prev := debug.SetGCPercent(300)
			defer debug.SetGCPercent(prev)
			r := settleRuntime()
			got := debug.SetGCPercent(prev)
			if got != tc.want {
				t.Errorf("GOGC after settling = %d, want %d", got, tc.want)
			}
			if wantReported := tc.want * boolInt(tc.gogc == ""); r.gcPercent != wantReported {
				t.Errorf("reported gcPercent %d, want %d", r.gcPercent, wantReported)
			}
			if r.live == 0 {
				t.Error("reported no live heap")
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unsetenv removes key for the rest of the test; t.Setenv restores it.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

// TestFill: GOGC is FillGCPercent while the caches fill, and the one found
// before once they have synced, or when the wait ends with its context; a
// settling that comes first is never undone, and a fill after it changes
// nothing.
func TestFill(t *testing.T) {
	for _, tc := range []struct {
		name string
		// settleDuring settles before the caches have synced.
		settleDuring, settleBefore bool
		want                       []int
	}{
		{name: "synced", want: []int{FillGCPercent, 100}},
		{name: "settled before synced", settleDuring: true, want: []int{FillGCPercent, SteadyGCPercent}},
		{name: "settled before the fill", settleBefore: true, want: []int{SteadyGCPercent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current := 100
			var seen []int
			g := &gcPercent{set: func(p int) int {
				old := current
				current = p
				seen = append(seen, p)
				return old
			}}
			if tc.settleBefore {
				g.settle(SteadyGCPercent)
			}
			release, returned := make(chan struct{}), make(chan struct{})
			g.fill(context.Background(), func(context.Context) bool {
				<-release
				defer close(returned)
				return true
			}, logr.Discard())
			if tc.settleDuring {
				g.settle(SteadyGCPercent)
			}
			close(release)
			if !tc.settleBefore {
				<-returned
			}
			// The restore runs after synced returns, under the lock.
			deadline := time.Now().Add(5 * time.Second)
			for {
				g.mu.Lock()
				got := slices.Clone(seen)
				g.mu.Unlock()
				if slices.Equal(got, tc.want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("GOGC was set to %v, want %v", got, tc.want)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// TestFillKeepsTheUsersGOGC: a GOGC the user set is never changed.
func TestFillKeepsTheUsersGOGC(t *testing.T) {
	t.Setenv("GOGC", "300")
	prev := debug.SetGCPercent(300)
	defer debug.SetGCPercent(prev)
	Fill(context.Background(), func(context.Context) bool { return true }, logr.Discard())
	time.Sleep(10 * time.Millisecond)
	if got := debug.SetGCPercent(300); got != 300 {
		t.Errorf("GOGC = %d after a fill with GOGC=300 set", got)
	}
}

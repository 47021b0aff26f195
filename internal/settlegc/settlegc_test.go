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
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// look is what the controllers' metrics say at one look.
type look struct {
	depth, active, ended float64
	err                  error
}

// script is a prometheus.Gatherer that answers each Gather with the next
// look, and with the last one once they are used up.
type script struct {
	mu    sync.Mutex
	looks []look
	n     int
}

func (s *script) Gather() ([]*dto.MetricFamily, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.looks[min(s.n, len(s.looks)-1)]
	s.n++
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

func (s *script) gathered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
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
			g := &script{looks: tc.looks}
			var settledAt []int
			s := &Settler{
				Synced: func(ctx context.Context) bool {
					if tc.unsynced {
						<-ctx.Done()
						return false
					}
					return true
				},
				Metrics: g,
				Poll:    time.Millisecond,
				Log:     logr.Discard(),
				settle: func() settled {
					settledAt = append(settledAt, g.gathered())
					return settled{}
				},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := s.Start(ctx); err != nil {
				t.Fatalf("Start: %v", err)
			}
			switch {
			case tc.wantAt == 0 && len(settledAt) != 0:
				t.Errorf("settled at look %v, want never", settledAt)
			case tc.wantAt != 0 && (len(settledAt) != 1 || settledAt[0] != tc.wantAt):
				t.Errorf("settled at looks %v, want once at look %d", settledAt, tc.wantAt)
			}
		})
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

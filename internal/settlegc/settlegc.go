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

// Package settlegc sets `tether run`'s GOGC twice: to FillGCPercent while
// the informers' caches fill for the first time (Fill), back to what it
// was once they have synced, and to SteadyGCPercent once the start-up
// wave is over, when it also returns the wave's memory to the system
// (Settler). A GOGC the user set is never changed.
//
// The first start over thousands of objects reconciles every one of them:
// the collector lets the heap reach twice what it found live, and the
// runtime keeps those pages (about 2.2 times the live heap) long after the
// wave, while the live heap is then mostly the informers' caches, which an
// idle fleet hardly adds to. Once every controller's queue has drained,
// Settler collects, returns what is free and sets SteadyGCPercent.
package settlegc

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// SteadyGCPercent is the GOGC once the start-up wave is over: a heap goal
// of 1.5 times the live heap instead of 2. The caches that are most of that
// heap change little, so the extra collections cost little CPU, where the
// wave's churn would have paid a third more.
const SteadyGCPercent = 50

// FillGCPercent is the GOGC while the caches fill for the first time: the
// informers' first lists decode every object, and what the decoders throw
// away is interleaved with what the caches keep. The collector never moves
// an object, so the garbage of a long collection cycle leaves holes among
// the cached objects for as long as they are held; short cycles leave
// fewer. It costs collections only while the caches fill.
const FillGCPercent = 25

// FilledMessage is what Fill logs when it restores the GOGC it found.
const FilledMessage = "caches filled: collector back to its GOGC"

// Fill sets FillGCPercent until synced (cache.Cache's WaitForCacheSync)
// returns, unless the user set GOGC, then restores the GOGC it found and
// logs FilledMessage, unless the collector has been settled meanwhile.
// Call it before the caches start.
func Fill(ctx context.Context, synced func(context.Context) bool, log logr.Logger) {
	if _, userSet := os.LookupEnv("GOGC"); userSet {
		return
	}
	processGC.fill(ctx, synced, log)
}

// gcPercent orders the changes of one process's GOGC: Fill's restore must
// not undo a settling that came first.
type gcPercent struct {
	mu      sync.Mutex
	settled bool
	// set is debug.SetGCPercent; tests replace it.
	set func(int) int
}

var processGC = &gcPercent{set: debug.SetGCPercent}

func (g *gcPercent) fill(ctx context.Context, synced func(context.Context) bool, log logr.Logger) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.settled {
		return
	}
	found := g.set(FillGCPercent)
	begun := time.Now()
	go func() {
		synced(ctx)
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.settled {
			g.set(found)
			log.Info(FilledMessage, "after", time.Since(begun).Round(time.Millisecond), "gcPercent", found, "fillGCPercent", FillGCPercent)
		}
	}()
}

// settle sets percent, which from then on no fill undoes.
func (g *gcPercent) settle(percent int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.settled = true
	g.set(percent)
}

// SettledMessage is what Settler logs when it settles the collector.
const SettledMessage = "start-up wave over: collector settled"

// The controller-runtime metrics that tell whether the controllers have
// work: the ready keys queued (waiting ones are not counted), the
// reconciles running, and the reconciles ended.
const (
	queueDepthMetric    = "workqueue_depth"
	activeWorkersMetric = "controller_runtime_active_workers"
	reconcilesMetric    = "controller_runtime_reconcile_total"
)

// Settler is a manager.Runnable that waits for the caches to sync and for
// every controller to be idle, then settles the collector once.
type Settler struct {
	// Synced waits for the Manager's caches (cache.Cache's
	// WaitForCacheSync); it returns false when ctx ends first.
	Synced func(ctx context.Context) bool
	// Metrics gathers controller-runtime's metrics (its metrics.Registry).
	Metrics prometheus.Gatherer
	// Poll is how often the controllers are looked at; zero means a second.
	Poll time.Duration
	// Log reports the settling.
	Log logr.Logger

	// settle is the collector's change; tests replace it.
	settle func() settled
}

// NeedLeaderElection is true: the wave is the leader's, when it starts
// its controllers; a standby holds no controller's caches.
func (s *Settler) NeedLeaderElection() bool { return true }

// Start settles the collector once the controllers have been idle for two
// looks in a row with no reconcile ended between them, and returns; it
// returns without settling when ctx ends first.
func (s *Settler) Start(ctx context.Context) error {
	begun := time.Now()
	if !s.Synced(ctx) {
		return nil
	}
	poll := s.Poll
	if poll == 0 {
		poll = time.Second
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	last, quiet := -1.0, false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		idle, ended, err := s.look()
		if err != nil {
			s.Log.Error(err, "reading the controllers' metrics; the collector is left as it is")
			return nil
		}
		if idle && quiet && ended == last {
			break
		}
		quiet, last = idle, ended
	}
	settle := s.settle
	if settle == nil {
		settle = settleRuntime
	}
	r := settle()
	s.Log.Info(SettledMessage, "after", time.Since(begun).Round(time.Millisecond),
		"liveHeapMiB", r.live>>20, "releasedMiB", r.released>>20, "gcPercent", r.gcPercent, "userGOGC", r.gcPercent == 0)
	return nil
}

// look tells whether no key is queued ready and no reconcile runs, and how
// many reconciles have ended.
func (s *Settler) look() (idle bool, ended float64, err error) {
	families, err := s.Metrics.Gather()
	if err != nil {
		return false, 0, err
	}
	busy := 0.0
	for _, f := range families {
		switch f.GetName() {
		case queueDepthMetric, activeWorkersMetric:
			busy += sum(f)
		case reconcilesMetric:
			ended += sum(f)
		}
	}
	return busy == 0, ended, nil
}

func sum(f *dto.MetricFamily) float64 {
	total := 0.0
	for _, m := range f.GetMetric() {
		total += m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	return total
}

// settled is what settling did.
type settled struct {
	live, released uint64
	// gcPercent is the GOGC set, or 0 when the user's GOGC was kept.
	gcPercent int
}

// settleRuntime sets SteadyGCPercent unless the user set GOGC, collects
// and returns the free pages to the system.
func settleRuntime() settled {
	var r settled
	if _, userSet := os.LookupEnv("GOGC"); !userSet {
		processGC.settle(SteadyGCPercent)
		r.gcPercent = SteadyGCPercent
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	r.live, r.released = after.HeapAlloc, after.HeapReleased-min(before.HeapReleased, after.HeapReleased)
	return r
}

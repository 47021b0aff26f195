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
// (Settler). After that, Settler returns the memory of every later burst
// of work that drove the collector, once the controllers are idle again.
// A GOGC the user set is never changed.
//
// The first start over thousands of objects reconciles every one of them:
// the collector lets the heap reach twice what it found live, and the
// runtime keeps those pages (about 2.2 times the live heap) long after the
// wave, while the live heap is then mostly the informers' caches, which an
// idle fleet hardly adds to. Once every controller's queue has drained,
// Settler collects, returns what is free and sets SteadyGCPercent.
//
// A later burst (an apply of many specs, a round of edits) does the same
// on a smaller scale: on the local store the process does the API
// server's work too (validation, pruning, the journal), about four times
// the allocation of a write on a cluster, so a burst drives the heap to
// its goal, and the runtime keeps the heap's high-water mark for minutes
// after it. Settler collects once more when the controllers are idle
// after a burst in which the collector ran on its own: at most one
// collection for each the work itself caused, and none while it goes on.
package settlegc

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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

// ReturnedMessage is what Settler logs when it has returned the memory of
// a burst of work after the start-up wave.
const ReturnedMessage = "burst over: free heap returned to the system"

// The controller-runtime metrics that tell whether the controllers have
// work: the ready keys queued (waiting ones are not counted), the
// reconciles running, and the reconciles ended.
const (
	queueDepthMetric    = "workqueue_depth"
	activeWorkersMetric = "controller_runtime_active_workers"
	reconcilesMetric    = "controller_runtime_reconcile_total"
)

// automaticCyclesMetric counts the collections the runtime started on its
// own, when the heap reached its goal; forced ones (a settling's) are not.
const automaticCyclesMetric = "/gc/cycles/automatic:gc-cycles"

// Settler is a manager.Runnable that waits for the caches to sync and for
// every controller to be idle, then settles the collector once; from then
// on it returns the memory of each burst of work that drove the collector,
// once the controllers are idle again.
type Settler struct {
	// Synced waits for the Manager's caches (cache.Cache's
	// WaitForCacheSync); it returns false when ctx ends first.
	Synced func(ctx context.Context) bool
	// Metrics gathers controller-runtime's metrics (its metrics.Registry).
	Metrics prometheus.Gatherer
	// Poll is how often the controllers are looked at; zero means a second.
	Poll time.Duration
	// Log reports the settling and each return.
	Log logr.Logger

	// settle, release and cycles are the runtime's, and next waits for
	// Poll's next tick (false when ctx ends first); tests replace them.
	settle  func() settled
	release func() settled
	cycles  func() uint64
	next    func(ctx context.Context) bool
}

// NeedLeaderElection is true: the wave is the leader's, when it starts
// its controllers; a standby holds no controller's caches.
func (s *Settler) NeedLeaderElection() bool { return true }

// Start settles the collector once the controllers have been idle for two
// looks in a row with no reconcile ended between them. From then on, each
// time the collector has run on its own since the last settling or
// return, it collects and returns the free heap at the next such pair of
// idle looks. It only looks at the controllers while a return is due:
// gathering every metric allocates, and an idle process must not collect
// for its own looks. It returns when ctx ends, or when the metrics cannot
// be read.
func (s *Settler) Start(ctx context.Context) error {
	begun := time.Now()
	if !s.Synced(ctx) {
		return nil
	}
	poll := s.Poll
	if poll == 0 {
		poll = time.Second
	}
	settle, release, cycles := s.settle, s.release, s.cycles
	if settle == nil {
		settle, release, cycles = settleRuntime, releaseRuntime, automaticCycles
	}
	next := s.next
	if next == nil {
		ticker := time.NewTicker(poll)
		defer ticker.Stop()
		next = func(ctx context.Context) bool {
			select {
			case <-ctx.Done():
				return false
			case <-ticker.C:
				return true
			}
		}
	}
	if !s.awaitIdle(ctx, next, func() bool { return true }) {
		return nil
	}
	r := settle()
	s.Log.Info(SettledMessage, "after", time.Since(begun).Round(time.Millisecond),
		"liveHeapMiB", r.live>>20, "releasedMiB", r.released>>20, "gcPercent", r.gcPercent, "userGOGC", r.gcPercent == 0)
	for {
		since, last := time.Now(), cycles()
		if !s.awaitIdle(ctx, next, func() bool { return cycles() != last }) {
			return nil
		}
		ran, begun := cycles()-last, time.Now()
		r := release()
		s.Log.Info(ReturnedMessage, "after", begun.Sub(since).Round(time.Millisecond), "took", time.Since(begun).Round(time.Millisecond),
			"collections", ran, "liveHeapMiB", r.live>>20, "releasedMiB", r.released>>20)
	}
}

// awaitIdle waits, looking at the controllers at each tick from the first
// where due is true (it stays true), for a look that finds them idle, with
// the look before idle too and the same number of reconciles ended at
// both. It returns false when ctx ends or the metrics cannot be read.
func (s *Settler) awaitIdle(ctx context.Context, next func(context.Context) bool, due func() bool) bool {
	last, quiet := -1.0, false
	for next(ctx) {
		if !due() {
			continue
		}
		idle, ended, err := s.look()
		if err != nil {
			s.Log.Error(err, "reading the controllers' metrics; the collector is left as it is")
			return false
		}
		if idle && quiet && ended == last {
			return true
		}
		quiet, last = idle, ended
	}
	return false
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
	percent := 0
	if _, userSet := os.LookupEnv("GOGC"); !userSet {
		processGC.settle(SteadyGCPercent)
		percent = SteadyGCPercent
	}
	r := releaseRuntime()
	r.gcPercent = percent
	return r
}

// releaseRuntime collects and returns the free pages to the system.
func releaseRuntime() settled {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	return settled{live: after.HeapAlloc, released: after.HeapReleased - min(before.HeapReleased, after.HeapReleased)}
}

// automaticCycles is how many collections the runtime has started on its
// own.
func automaticCycles() uint64 {
	sample := []metrics.Sample{{Name: automaticCyclesMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

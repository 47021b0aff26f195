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

// The benchmarks below put the file store beside references measured in the
// same run, on the same disk: the raw durable-write floor and a real
// kube-apiserver. They report ratios and percentiles with b.ReportMetric
// and never fail on speed; disks and CI machines vary too much for timed
// assertions. The targets they are read against: create and update p50
// within 2x the floor (on top of the floor's work the store appends to and
// fsyncs its journal, so about 2x is its design cost), and status-update
// throughput with 1 and 8 concurrent writers.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// latencies holds one duration per operation. The benchmarks report its
// percentiles besides ns/op because ns/op is a mean, and the mean of
// fsync-bound writes is pulled around by the occasional slow flush, while
// the targets are about the median.
type latencies []time.Duration

// percentile returns the q-quantile (0 < q <= 1) of l by the nearest-rank
// method, so that it is always a duration that was actually measured. It
// returns 0 for no samples.
func (l latencies) percentile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	sorted := slices.Clone(l)
	slices.Sort(sorted)
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func (l latencies) p50() time.Duration { return l.percentile(0.50) }
func (l latencies) p99() time.Duration { return l.percentile(0.99) }

// toMillis converts d to fractional milliseconds, the unit of the latency
// metrics, because store writes take milliseconds, not nanoseconds.
func toMillis(d time.Duration) float64 { return d.Seconds() * 1e3 }

// durRatio returns a/b, or 0 when b is 0, so that a benchmark without samples
// reports a zero rather than NaN or +Inf.
func durRatio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// reportLatencies reports l's p50 and p99 in milliseconds, with the unit
// names prefixed by prefix to tell the backends of one benchmark apart.
func reportLatencies(b *testing.B, prefix string, l latencies) {
	b.Helper()
	b.ReportMetric(toMillis(l.p50()), prefix+"p50-ms")
	b.ReportMetric(toMillis(l.p99()), prefix+"p99-ms")
}

// timeOp runs op and returns how long it took. An error fails the benchmark,
// since a failed write measures nothing.
func timeOp(b *testing.B, op func() error) time.Duration {
	b.Helper()
	start := time.Now()
	err := op()
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// benchStore opens a store on dir for a benchmark. openStore needs a
// *testing.T and logs through it; benchmarks keep the default discarding
// logger so that logging costs nothing and prints nothing.
func benchStore(b *testing.B, dir string) *filestore.Store {
	b.Helper()
	s, err := newStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// floorPayloadSize is the size of the floor's file: a little more than a
// Hook object file with a few steps, so that the floor is not flattered by
// a smaller write than the store makes.
const floorPayloadSize = 2 << 10

// floorWriter performs the raw durable-write floor of this machine: the
// least a store that replaces a file crash-safely must do per write. It
// writes a temp file, fsyncs it, renames it over the target and fsyncs the
// directory, as the store does for an object file. The store also appends
// to and fsyncs its journal first, hence the 2x target.
type floorWriter struct {
	dir    string
	target string
	data   []byte
}

// newFloorWriter returns a floorWriter in a fresh directory under
// b.TempDir(), on the same file system as the benchmark's stores, with one
// write done so that the first measured write does not create the target.
func newFloorWriter(b *testing.B) *floorWriter {
	b.Helper()
	dir := b.TempDir()
	f := &floorWriter{dir: dir, target: filepath.Join(dir, "floor.yaml"), data: bytes.Repeat([]byte("x"), floorPayloadSize)}
	if err := f.write(); err != nil {
		b.Fatal(err)
	}
	return f
}

func (f *floorWriter) write() error {
	tmp, err := os.CreateTemp(f.dir, ".tmp-floor-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(f.data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), f.target); err != nil {
		return err
	}
	d, err := os.Open(f.dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// untimed performs one floor write with the benchmark timer stopped and
// returns its duration. Interleaving floor writes with store writes puts
// both under the same disk conditions, which drift during a run, while
// keeping ns/op the store's own. It first lets s finish the removals of
// replaced files it does in the background, which would otherwise run
// during, and slow down, the floor's write.
func (f *floorWriter) untimed(b *testing.B, s *filestore.Store) time.Duration {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	s.AwaitRemovals()
	return timeOp(b, f.write)
}

// reportVsFloor reports the store's latency percentiles, the floor's p50
// measured in the same run, and their ratio.
func reportVsFloor(b *testing.B, store, floor latencies) {
	b.Helper()
	reportLatencies(b, "", store)
	b.ReportMetric(toMillis(floor.p50()), "floor-p50-ms")
	b.ReportMetric(durRatio(store.p50(), floor.p50()), "p50-x-floor")
}

// BenchmarkFloor measures the raw durable-write floor on its own.
func BenchmarkFloor(b *testing.B) {
	f := newFloorWriter(b)
	var lat latencies
	for b.Loop() {
		lat = append(lat, timeOp(b, f.write))
	}
	reportLatencies(b, "", lat)
}

// BenchmarkCreate measures creating Hooks through the typed client, one
// writer, against floor writes interleaved in the same run.
func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, b.TempDir())
	c := s.Client()
	floor := newFloorWriter(b)
	// The first create also makes the namespace's directory.
	if err := c.Create(ctx, hook("warm-up")); err != nil {
		b.Fatal(err)
	}
	var store, fl latencies
	n := 0
	for b.Loop() {
		n++
		h := hook(fmt.Sprintf("create-%d", n))
		store = append(store, timeOp(b, func() error { return c.Create(ctx, h) }))
		fl = append(fl, floor.untimed(b, s))
	}
	reportVsFloor(b, store, fl)
}

// BenchmarkUpdate measures updating one Hook's spec through the typed
// client, one writer, against floor writes interleaved in the same run.
func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, b.TempDir())
	c := s.Client()
	floor := newFloorWriter(b)
	h := hook("update")
	if err := c.Create(ctx, h); err != nil {
		b.Fatal(err)
	}
	var store, fl latencies
	n := 0
	for b.Loop() {
		n++
		// A new goal each time: an update that changes nothing writes nothing.
		h.Spec.Goal = fmt.Sprintf("goal %d", n)
		store = append(store, timeOp(b, func() error { return c.Update(ctx, h) }))
		fl = append(fl, floor.untimed(b, s))
	}
	reportVsFloor(b, store, fl)
}

// benchHook returns hook(name) in benchNamespace, which exists on both
// backends of BenchmarkVsKubeAPIServer.
func benchHook(name string) *agentsv1alpha1.Hook {
	h := hook(name)
	h.Namespace = benchNamespace
	return h
}

// kubeAPIServerWarmUps is how many creates and updates each backend gets
// before anything is measured. The first create after a CRD becomes ready
// can stall for about 2 s on kube-apiserver, and the first writes of both
// backends pay for connections, caches and directories.
const kubeAPIServerWarmUps = 5

// warmUp creates kubeAPIServerWarmUps Hooks through c and updates one of
// them as many times.
func warmUp(b *testing.B, c client.Client) {
	b.Helper()
	ctx := context.Background()
	var h *agentsv1alpha1.Hook
	for i := range kubeAPIServerWarmUps {
		h = benchHook(fmt.Sprintf("warm-up-%d", i))
		if err := c.Create(ctx, h); err != nil {
			b.Fatal(err)
		}
	}
	for i := range kubeAPIServerWarmUps {
		h.Spec.Goal = fmt.Sprintf("warm-up %d", i)
		if err := c.Update(ctx, h); err != nil {
			b.Fatal(err)
		}
	}
}

// nameSeq numbers the name prefixes of BenchmarkVsKubeAPIServer's Hooks.
// Its backends live across its sub-benchmarks, which -count runs several
// times, so every run needs names no earlier run used.
var nameSeq atomic.Int64

// seqName returns prefix followed by a number unique in this process.
func seqName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nameSeq.Add(1))
}

// The backends of BenchmarkVsKubeAPIServer, as indexes for measurePair.
const (
	onKubeAPIServer = iota
	onStore
)

// measurePair runs op on kube-apiserver and then on the store, once per
// b.Loop iteration with iteration number n, and reports both backends'
// percentiles and p50-x-apiserver. Interleaving puts both under the same
// machine conditions, which drift during a run (on a shared machine, a
// lot). The timer runs only for the store's operation, so ns/op is the
// store's.
func measurePair(b *testing.B, op func(backend, n int) error) {
	b.Helper()
	var api, fs latencies
	n := 0
	for b.Loop() {
		n++
		b.StopTimer()
		api = append(api, timeOp(b, func() error { return op(onKubeAPIServer, n) }))
		b.StartTimer()
		fs = append(fs, timeOp(b, func() error { return op(onStore, n) }))
	}
	reportLatencies(b, "", fs)
	reportLatencies(b, "apiserver-", api)
	b.ReportMetric(durRatio(fs.p50(), api.p50()), "p50-x-apiserver")
}

// BenchmarkVsKubeAPIServer runs the same client calls as BenchmarkCreate
// and BenchmarkUpdate on the file store and on a real kube-apiserver (with
// etcd fsyncing, see startKubeAPIServer), interleaved by measurePair. It
// reports p50-x-apiserver, the store's p50 over the kube-apiserver's, for
// create and update.
func BenchmarkVsKubeAPIServer(b *testing.B) {
	ctx := context.Background()
	kube := startKubeAPIServer(b)
	warmUp(b, kube)
	store := benchStore(b, b.TempDir()).Client()
	warmUp(b, store)
	clients := [2]client.Client{onKubeAPIServer: kube, onStore: store}

	b.Run("create", func(b *testing.B) {
		prefix := seqName("create")
		measurePair(b, func(backend, n int) error {
			return clients[backend].Create(ctx, benchHook(fmt.Sprintf("%s-%d", prefix, n)))
		})
	})
	b.Run("update", func(b *testing.B) {
		name := seqName("update")
		var hooks [2]*agentsv1alpha1.Hook
		for i, c := range clients {
			hooks[i] = benchHook(name)
			if err := c.Create(ctx, hooks[i]); err != nil {
				b.Fatal(err)
			}
		}
		measurePair(b, func(backend, n int) error {
			hooks[backend].Spec.Goal = fmt.Sprintf("goal %d", n)
			return clients[backend].Update(ctx, hooks[backend])
		})
	})
}

// BenchmarkStatusUpdateThroughput measures status updates per second with
// 1 and 8 concurrent writers, each updating its own Hook's status, as
// controllers reconciling different Hooks do. Distinct objects never
// conflict, so what the writers contend for is the store's lock and disk.
// ns/op is the inverse of the throughput.
func BenchmarkStatusUpdateThroughput(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			ctx := context.Background()
			c := benchStore(b, b.TempDir()).Client()
			hooks := make([]*agentsv1alpha1.Hook, writers)
			for i := range hooks {
				hooks[i] = hook(fmt.Sprintf("status-%d", i))
				if err := c.Create(ctx, hooks[i]); err != nil {
					b.Fatal(err)
				}
			}
			// A heartbeat a second later each time: metav1.Time has
			// second precision, and an unchanged status writes nothing.
			base := time.Now()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for _, h := range hooks {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						h.Status.LastHeartbeat = &metav1.MicroTime{Time: base.Add(time.Duration(i) * time.Second)}
						if err := c.Status().Update(ctx, h); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if s := b.Elapsed().Seconds(); s > 0 {
				b.ReportMetric(float64(b.N)/s, "updates/s")
			}
		})
	}
}

// list10kObjects is the number of Hooks BenchmarkList10k lists.
const list10kObjects = 10000

// BenchmarkList10k measures listing 10,000 Hooks from disk: read, parse
// and convert every file, as a client List does without a cache. Listing
// from the informer cache comes later, with the manager; this is the cost
// of a cold start or a re-list.
//
// Creating the Hooks takes tens of seconds, so it happens once, before the
// measured loop; b.Loop runs this function once per measurement.
func BenchmarkList10k(b *testing.B) {
	ctx := context.Background()
	c := benchStore(b, b.TempDir()).Client()
	for i := range list10kObjects {
		if err := c.Create(ctx, hook(fmt.Sprintf("list-%05d", i))); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		list := &agentsv1alpha1.HookList{}
		if err := c.List(ctx, list); err != nil {
			b.Fatal(err)
		}
		if len(list.Items) != list10kObjects {
			b.Fatalf("listed %d hooks, want %d", len(list.Items), list10kObjects)
		}
	}
	b.ReportMetric(toMillis(b.Elapsed())/float64(b.N), "ms/op")
}

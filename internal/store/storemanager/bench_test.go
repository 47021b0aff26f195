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

package storemanager_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/store/storemanager"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// populate creates n hooks in a fresh store directory, 8 at a time and
// without fsyncs: the setup's durability is not what is measured, and a
// store of 100,000 Hooks then takes a minute rather than several.
func populate(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	store, err := testsupport.OpenStore(dir, testsupport.WithoutFsync)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	c := store.Client()
	var g errgroup.Group
	g.SetLimit(8)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			return c.Create(context.Background(), &agentsv1alpha1.Hook{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("hook-%05d", i)},
				Spec:       agentsv1alpha1.HookSpec{Goal: "g", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
			})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return dir
}

func openBenchStore(b *testing.B, dir string) *filestore.Store {
	b.Helper()
	store, err := testsupport.OpenStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	return store
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkEditToReconcile measures the time from a hand edit of a store
// file (written elsewhere and renamed into place, as an editor or sed -i
// does) until a running Manager's reconciler sees the new spec. It times
// at least editsMeasured edits, after the start-up wave that reconciles
// every object once, so the figure is the steady state's and not the
// position of the edited object in the initial queue.
func BenchmarkEditToReconcile(b *testing.B) {
	ctrl.SetLogger(logr.Discard())
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) { editToReconcile(b, n) })
	}
}

// BenchmarkEditToReconcile100k is BenchmarkEditToReconcile at 100,000
// objects; run it with -bench 100k.
func BenchmarkEditToReconcile100k(b *testing.B) {
	testsupport.Skip100k(b)
	ctrl.SetLogger(logr.Discard())
	editToReconcile(b, 100000)
}

func editToReconcile(b *testing.B, n int) {
	dir := populate(b, n)
	store := openBenchStore(b, dir)
	defer func() { _ = store.Close() }()
	sch := store.Client().Scheme()
	mgr, err := storemanager.New(store, storemanager.Options{Scheme: sch})
	if err != nil {
		b.Fatal(err)
	}
	goals := watchGoals(b, mgr)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = mgr.Start(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}
	goals.waitStartup(b, n)
	path := filepath.Join(dir, "hooks", "default", "hook-00000.yaml")
	var latencies []time.Duration
	b.ResetTimer()
	for i := 0; i < max(b.N, editsMeasured); i++ {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		goal := "edit-" + strconv.Itoa(i)
		edited := goalLine.ReplaceAllString(stripHeader(string(data)), "  goal: "+goal)
		tmp := path + ".edit"
		if err := os.WriteFile(tmp, []byte(edited), 0o600); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
		for {
			if at, ok := goals.seen(goal); ok {
				latencies = append(latencies, at.Sub(start))
				break
			}
			if time.Since(start) > 10*time.Second {
				cur, _ := os.ReadFile(path)
				h := &agentsv1alpha1.Hook{}
				gerr := store.Client().Get(ctx, client.ObjectKey{Namespace: "default", Name: "hook-00000"}, h)
				b.Fatalf("edit %d not reconciled within 10s; file:\n%s\nstore: %v %q", i, cur, gerr, h.Spec.Goal)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(latencies, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(latencies, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(latencies)), "edits")
}

// goalWatch is a Hook reconciler for the benchmarks: it counts reconciles
// and records when it first read each spec.goal, so that an edit setting a
// new goal can be timed until a reconciler sees it.
type goalWatch struct {
	mu         sync.Mutex
	seenAt     map[string]time.Time
	reconciled atomic.Int64
}

func watchGoals(b *testing.B, mgr manager.Manager) *goalWatch {
	b.Helper()
	g := &goalWatch{seenAt: map[string]time.Time{}}
	skip := true
	err := ctrl.NewControllerManagedBy(mgr).For(&agentsv1alpha1.Hook{}).WithOptions(controller.Options{SkipNameValidation: &skip}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			g.reconciled.Add(1)
			h := &agentsv1alpha1.Hook{}
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, h); err == nil {
				g.mu.Lock()
				if _, ok := g.seenAt[h.Spec.Goal]; !ok {
					g.seenAt[h.Spec.Goal] = time.Now()
				}
				g.mu.Unlock()
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// waitStartup waits for the start-up wave: n objects reconciled once.
func (g *goalWatch) waitStartup(b *testing.B, n int) {
	b.Helper()
	for deadline := time.Now().Add(5 * time.Minute); g.reconciled.Load() < int64(n); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d objects reconciled after start-up", g.reconciled.Load(), n)
		}
	}
}

// seen returns when a reconciler first read goal.
func (g *goalWatch) seen(goal string) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.seenAt[goal]
	return at, ok
}

// editsMeasured is the fewest edits BenchmarkEditToReconcile times.
const editsMeasured = 200

var goalLine = regexp.MustCompile(`(?m)^  goal: .*$`)

// stripHeader drops the store's header line, as a person's edit would leave it stale.
func stripHeader(s string) string {
	if strings.HasPrefix(s, "# Managed by tether") {
		return s[strings.IndexByte(s, '\n')+1:]
	}
	return s
}

// waitSynced waits for informer to sync, looking every 100µs:
// WaitForCacheSync looks every 100 ms, which would round every figure up
// to the next 100 ms.
func waitSynced(b *testing.B, informer cache.Informer) {
	b.Helper()
	for deadline := time.Now().Add(10 * time.Minute); !informer.HasSynced(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			b.Fatal("cache did not sync")
		}
	}
}

// cpuTime is the process's CPU time so far, user and system: on a loaded
// machine it varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkCacheSync10k measures a Manager's start until its Hook informer
// has synced 10,000 objects, the process's RSS then, and a List of all of
// them from the cache.
func BenchmarkCacheSync10k(b *testing.B) { cacheSync(b, 10000) }

// BenchmarkCacheSync1k is BenchmarkCacheSync10k at 1,000 objects.
func BenchmarkCacheSync1k(b *testing.B) { cacheSync(b, 1000) }

// BenchmarkCacheSync100k is BenchmarkCacheSync10k at 100,000 objects; run
// it with -bench 100k.
func BenchmarkCacheSync100k(b *testing.B) {
	testsupport.Skip100k(b)
	cacheSync(b, 100000)
}

// cacheSync measures start → synced (wall and the process's CPU time),
// RSS and a cached List at n objects.
// The RSS is the process's at sync and once the Manager has settled
// (Manager.Settled), with the memory of the setup (and of earlier
// benchmarks) returned to the system before each start; the heap is the
// live Go heap then, after a GC.
func cacheSync(b *testing.B, n int) {
	ctrl.SetLogger(logr.Discard())
	dir := populate(b, n)
	var syncs, cpus, lists []time.Duration
	var rss, settled, heap float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		debug.FreeOSMemory()
		b.StartTimer()
		store := openBenchStore(b, dir)
		mgr, err := storemanager.New(store, storemanager.Options{Scheme: store.Client().Scheme()})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		start, cpu := time.Now(), cpuTime()
		informer, err := mgr.GetCache().GetInformer(ctx, &agentsv1alpha1.Hook{})
		if err != nil {
			b.Fatal(err)
		}
		stopped := make(chan struct{})
		go func() { _ = mgr.Start(ctx); close(stopped) }()
		waitSynced(b, informer)
		syncs = append(syncs, time.Since(start))
		cpus = append(cpus, cpuTime()-cpu)
		rss = max(rss, rssMiB())
		<-mgr.Settled()
		settled = max(settled, rssMiB())
		list := &agentsv1alpha1.HookList{}
		start = time.Now()
		if err := mgr.GetClient().List(ctx, list, client.InNamespace("default")); err != nil {
			b.Fatal(err)
		}
		lists = append(lists, time.Since(start))
		if len(list.Items) != n {
			b.Fatalf("listed %d hooks from the cache, want %d", len(list.Items), n)
		}
		list = nil
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, float64(ms.HeapInuse)/(1<<20))
		cancel()
		<-stopped
		_ = store.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(syncs, 0.5).Milliseconds()), "sync-ms")
	b.ReportMetric(float64(percentile(cpus, 0.5).Milliseconds()), "sync-cpu-ms")
	b.ReportMetric(float64(percentile(lists, 0.5).Microseconds())/1000, "list-ms")
	b.ReportMetric(rss, "rss-MiB")
	b.ReportMetric(settled, "settled-rss-MiB")
	b.ReportMetric(heap, "heap-MiB")
}

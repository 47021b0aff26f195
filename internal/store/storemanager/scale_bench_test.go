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
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/storemanager"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// scaleObjects is how many Hooks BenchmarkScale10k serves.
const scaleObjects = 10000

// scaleBackend is one backend of BenchmarkScale10k: a client to populate
// and edit with, and a Manager on the same objects.
type scaleBackend struct {
	client     client.Client
	newManager func() (manager.Manager, error)
}

// BenchmarkScale10k serves 10,000 Hooks from each backend in the same run,
// the file store and envtest's kube-apiserver with etcd, to a Manager with
// one Hook reconciler, as `tether run` and `tether run --cluster` do, and
// reports for each: start until the Hook informer has synced (sync-ms), the
// Go heap in use then, after a GC (heap-MiB), and edit → reconcile through
// the backend's client, after the start-up wave (p50-ms, p99-ms). The
// kube-apiserver figures are the reference for the file store's.
func BenchmarkScale10k(b *testing.B) {
	ctrl.SetLogger(logr.Discard())
	b.Run("backend=file", func(b *testing.B) {
		dir := populate(b, scaleObjects)
		store := openBenchStore(b, dir)
		defer func() { _ = store.Close() }()
		scaleRun(b, scaleBackend{
			client: store.Client(),
			newManager: func() (manager.Manager, error) {
				return storemanager.New(store, storemanager.Options{Scheme: store.Client().Scheme()})
			},
		})
	})
	b.Run("backend=kube-apiserver", func(b *testing.B) {
		env := testenv.Start(b)
		cfg := rest.CopyConfig(env.Config)
		// The bench measures the server, not client-go's default 5 QPS.
		cfg.QPS, cfg.Burst = -1, 0
		c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
		if err != nil {
			b.Fatal(err)
		}
		populateThrough(b, c, scaleObjects)
		scaleRun(b, scaleBackend{
			client: c,
			newManager: func() (manager.Manager, error) {
				return manager.New(cfg, manager.Options{Scheme: env.Client.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
			},
		})
	})
}

// populateThrough creates n Hooks through c, 16 at a time.
func populateThrough(b *testing.B, c client.Client, n int) {
	b.Helper()
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
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
}

func scaleRun(b *testing.B, be scaleBackend) {
	mgr, err := be.newManager()
	if err != nil {
		b.Fatal(err)
	}
	goals := watchGoals(b, mgr)
	ctx, cancel := context.WithCancel(context.Background())
	runtime.GC()
	start := time.Now()
	informer, err := mgr.GetCache().GetInformer(ctx, &agentsv1alpha1.Hook{})
	if err != nil {
		b.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { _ = mgr.Start(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	waitSynced(b, informer)
	synced := time.Since(start)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	goals.waitStartup(b, scaleObjects)
	key := client.ObjectKey{Namespace: "default", Name: "hook-00000"}
	var latencies []time.Duration
	b.ResetTimer()
	for i := 0; i < max(b.N, editsMeasured); i++ {
		goal := "edit-" + strconv.Itoa(i)
		var begun time.Time
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			h := &agentsv1alpha1.Hook{}
			if err := be.client.Get(ctx, key, h); err != nil {
				return err
			}
			h.Spec.Goal = goal
			begun = time.Now()
			return be.client.Update(ctx, h)
		})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if at, ok := goals.seen(goal); ok {
				latencies = append(latencies, at.Sub(begun))
				break
			}
			if time.Since(begun) > 30*time.Second {
				b.Fatalf("edit %d not reconciled within 30s", i)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(synced.Milliseconds()), "sync-ms")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(percentile(latencies, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(latencies, 0.99).Microseconds())/1000, "p99-ms")
}

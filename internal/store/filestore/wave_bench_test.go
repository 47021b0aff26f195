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
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// waveWriters is how many status writers BenchmarkStatusWave runs at
// once: as many Hooks as tether run's Hook reconciler works on.
const waveWriters = 12

// BenchmarkStatusWave is the store's part of tether run's start-up wave:
// 2,000 Hooks like testdata/hooks/running.yaml, each given one status
// write (a new condition and observedGeneration, as its first reconcile
// stores), waveWriters at a time, with fsyncs. It reports the writes per
// second, the mean wall time per write, and the process's CPU time per
// write in user space and in the kernel (the user part is the store's own
// work, which a busy machine disturbs less than the wall time; the kernel
// part includes creating files, which other processes' deletions slow).
func BenchmarkStatusWave(b *testing.B) {
	const hooks = 2000
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "hooks", "running.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	proto := &agentsv1alpha1.Hook{}
	if err := yaml.Unmarshal(data, proto); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	fill, err := newStore(dir, testsupport.WithoutFsync)
	if err != nil {
		b.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(8)
	for i := range hooks {
		g.Go(func() error {
			h := proto.DeepCopy()
			h.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("hook-%05d", i)}
			status := h.Status
			if err := fill.Client().Create(ctx, h); err != nil {
				return err
			}
			h.Status = status
			return fill.Client().Status().Update(ctx, h)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	_ = fill.Close()
	s := benchStore(b, dir)
	c := s.Client()
	round := 0
	var writes int
	var took, user, sys time.Duration
	for b.Loop() {
		round++
		list := &agentsv1alpha1.HookList{}
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			b.Fatal(err)
		}
		next := make(chan *agentsv1alpha1.Hook)
		g = errgroup.Group{}
		userStart, sysStart := processCPU(b)
		start := time.Now()
		for range waveWriters {
			g.Go(func() error {
				for h := range next {
					meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{
						Type: "ReceiptsVerified", Status: metav1.ConditionTrue, Reason: "ReceiptsVerified",
						Message: fmt.Sprintf("round %d: every passed step's receipts check out", round), ObservedGeneration: h.Generation, LastTransitionTime: metav1.Now(),
					})
					h.Status.ObservedGeneration = h.Generation
					if err := c.Status().Update(ctx, h); err != nil {
						return err
					}
				}
				return nil
			})
		}
		for i := range list.Items {
			next <- &list.Items[i]
		}
		close(next)
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		userEnd, sysEnd := processCPU(b)
		user += userEnd - userStart
		sys += sysEnd - sysStart
		writes += len(list.Items)
	}
	b.ReportMetric(float64(writes)/took.Seconds(), "writes/s")
	b.ReportMetric(toMillis(took)/float64(writes), "ms/write")
	b.ReportMetric(toMillis(user)/float64(writes), "user-ms/write")
	b.ReportMetric(toMillis(sys)/float64(writes), "sys-ms/write")
}

// processCPU is the CPU time this process has used, in user space and in
// the kernel.
func processCPU(b *testing.B) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

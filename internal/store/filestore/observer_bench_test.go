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
	"testing"

	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// BenchmarkUpdateObserved measures what `tether run`'s metrics cost a
// write: BenchmarkUpdate's spec update on a store with metrics.StoreObserver
// (a histogram observation per write), interleaved with the same update on
// a store without an observer, in the same run. It reports both p50s and
// p50-x-unobserved, their ratio; ns/op is the observed store's.
func BenchmarkUpdateObserved(b *testing.B) {
	ctx := context.Background()
	plain := benchStore(b, b.TempDir()).Client()
	s, err := newStore(b.TempDir(), func(o *filestore.Options) { o.Observer = metrics.StoreObserver{} })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	observed := s.Client()
	hp, ho := hook("update"), hook("update")
	if err := plain.Create(ctx, hp); err != nil {
		b.Fatal(err)
	}
	if err := observed.Create(ctx, ho); err != nil {
		b.Fatal(err)
	}
	var with, without latencies
	n := 0
	for b.Loop() {
		n++
		b.StopTimer()
		hp.Spec.Goal = fmt.Sprintf("goal %d", n)
		without = append(without, timeOp(b, func() error { return plain.Update(ctx, hp) }))
		b.StartTimer()
		ho.Spec.Goal = fmt.Sprintf("goal %d", n)
		with = append(with, timeOp(b, func() error { return observed.Update(ctx, ho) }))
	}
	reportLatencies(b, "", with)
	reportLatencies(b, "unobserved-", without)
	b.ReportMetric(durRatio(with.p50(), without.p50()), "p50-x-unobserved")
}

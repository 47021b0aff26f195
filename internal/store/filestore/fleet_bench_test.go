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
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// fleetHook is a Hook of realistic size (about 2.7 KB of JSON, as the
// Hooks of issue 29's measurements): a goal, five steps of two validations
// each, a workspace and a stale threshold.
func fleetHook(name string) *agentsv1alpha1.Hook {
	h := &agentsv1alpha1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
		Labels: map[string]string{"team": "platform", "repo": "service-" + name[len(name)-1:]}}}
	h.Spec.Goal = "Add pagination to the list endpoints of the orders service, with cursor tokens, limits, docs and tests; keep the old offset parameters working for one release."
	h.Spec.Workspace = "/src/checkouts/orders-service-" + name
	h.Spec.StaleAfter = &metav1.Duration{Duration: 10 * time.Minute}
	for i, s := range []string{"design", "api", "implement", "tests", "docs"} {
		h.Spec.Steps = append(h.Spec.Steps, agentsv1alpha1.Step{
			Name:        s,
			Description: fmt.Sprintf("Step %d of the pagination work: %s, reviewed against the style guide and the API conventions of the service.", i+1, s),
			Validate: []agentsv1alpha1.ValidationCommand{
				{Command: []string{"go", "vet", "./internal/orders/...", "./internal/http/..."}, Timeout: &metav1.Duration{Duration: 5 * time.Minute}},
				{Command: []string{"go", "test", "-count=1", "-run", "Pagination|Cursor|Limit", "./internal/orders/..."}, Timeout: &metav1.Duration{Duration: 10 * time.Minute}},
			},
		})
	}
	return h
}

// fleetEvent is an Event about Hook name, as tether run records one per
// Hook it initializes.
func fleetEvent(name string) *corev1.Event {
	now := metav1.NewTime(time.Now())
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: name + ".initialized"},
		InvolvedObject: corev1.ObjectReference{APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "Hook", Namespace: "default", Name: name},
		Reason:         "Initialized", Message: "initialized by tether-hook-controller: initializing -> step_pending, step 1 of 5",
		Type: corev1.EventTypeNormal, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source: corev1.EventSource{Component: "tether-hook-controller"},
	}
}

// BenchmarkFleetWrites fills one store to 1,000, 10,000 and 100,000 Hooks
// of realistic size, each with an Event, and at each size times creates
// and updates through the typed client, one writer. It reports each
// size's p50 and mean against those at 1,000 in the same run: a write must
// cost about the same whatever the store holds. The mean counts the
// compactions the writes pay (rare, but each reads the whole journal).
func BenchmarkFleetWrites(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s := benchStore(b, dir)
	c := s.Client()
	const probes = 400
	filled := 0
	fill := func(n int) {
		var wg sync.WaitGroup
		next := make(chan int)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					name := fmt.Sprintf("fleet-%06d", i)
					if err := c.Create(ctx, fleetHook(name)); err != nil {
						b.Error(err)
						return
					}
					if err := c.Create(ctx, fleetEvent(name)); err != nil {
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
	}
	type figures struct{ createP50, createMean, updateP50, updateMean time.Duration }
	measure := func(size int) figures {
		var creates, updates latencies
		var cSum, uSum time.Duration
		for i := range probes {
			h := fleetHook(fmt.Sprintf("probe-%d-%d", size, i))
			d := timeOp(b, func() error { return c.Create(ctx, h) })
			creates, cSum = append(creates, d), cSum+d
			h.Spec.Goal += fmt.Sprintf(" (revision %d)", i)
			d = timeOp(b, func() error { return c.Update(ctx, h) })
			updates, uSum = append(updates, d), uSum+d
		}
		return figures{creates.p50(), cSum / probes, updates.p50(), uSum / probes}
	}
	for b.Loop() {
		var base figures
		for _, size := range []int{1000, 10000, 100000} {
			start := time.Now()
			fill(size)
			fillTime := time.Since(start)
			f := measure(size)
			if size == 1000 {
				base = f
			}
			tag := fmt.Sprintf("%dk-", size/1000)
			b.ReportMetric(toMillis(f.createP50), tag+"create-p50-ms")
			b.ReportMetric(toMillis(f.updateMean), tag+"update-mean-ms")
			b.ReportMetric(durRatio(f.createP50, base.createP50), tag+"create-p50-x1k")
			b.ReportMetric(durRatio(f.createMean, base.createMean), tag+"create-mean-x1k")
			b.ReportMetric(durRatio(f.updateP50, base.updateP50), tag+"update-p50-x1k")
			b.ReportMetric(durRatio(f.updateMean, base.updateMean), tag+"update-mean-x1k")
			if fi, err := os.Stat(filepath.Join(dir, "journal")); err == nil {
				b.ReportMetric(float64(fi.Size())/(1<<20), tag+"journal-MiB")
			}
			b.Logf("%d Hooks (+%d Events): filled in %s; create p50/mean %s/%s, update p50/mean %s/%s",
				size, size, fillTime.Round(time.Millisecond), f.createP50, f.createMean, f.updateP50, f.updateMean)
		}
	}
}

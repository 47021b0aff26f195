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

package metrics

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/cachestore"
)

// Setup adds to mgr what computes the observed metrics: the Hook gauge,
// from mgr's cache at scrape time, and the counters of what other
// processes did (transitions, receipts, checkpoints), from the Hook and
// Checkpoint informers. Both run only on the elected leader, so that
// replicas summed count each event once. SetupAll calls it.
func Setup(mgr manager.Manager) error {
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		src := &hookSource{reader: mgr.GetCache()}
		for _, o := range []struct {
			obj     client.Object
			handler toolscache.ResourceEventHandler
		}{
			{&v1.Hook{}, toolscache.ResourceEventHandlerDetailedFuncs{AddFunc: hookAdded, UpdateFunc: hookUpdated}},
			{&v1.Checkpoint{}, toolscache.ResourceEventHandlerDetailedFuncs{AddFunc: checkpointAdded}},
		} {
			inf, err := mgr.GetCache().GetInformer(ctx, o.obj)
			if err != nil {
				return err
			}
			reg, err := inf.AddEventHandler(o.handler)
			if err != nil {
				return err
			}
			defer func() { _ = inf.RemoveEventHandler(reg) }()
			if st, ok := cachestore.Of(inf); ok {
				if _, isHook := o.obj.(*v1.Hook); isHook {
					src.store = st
				}
			}
		}
		hooksCollector.source.Store(src)
		<-ctx.Done()
		hooksCollector.source.CompareAndSwap(src, nil)
		return nil
	}))
}

// hookAdded counts the history and receipts of a Hook created while this
// process watches. The informer's first list of existing objects is not
// counted: counters start when the process does.
func hookAdded(obj interface{}, initialList bool) {
	h, ok := obj.(*v1.Hook)
	if !ok || initialList {
		return
	}
	countHook(nil, h)
}

func hookUpdated(oldObj, newObj interface{}) {
	old, ok1 := oldObj.(*v1.Hook)
	h, ok2 := newObj.(*v1.Hook)
	if !ok1 || !ok2 || old.UID != h.UID {
		return
	}
	countHook(old, h)
}

// countHook counts what h holds beyond old, the version this process saw
// before (nil for none): the history entries appended since, by total
// count (the history keeps its newest entries and counts those dropped),
// and the receipts that were not there.
func countHook(old, h *v1.Hook) {
	var seen int64
	if old != nil {
		seen = historyTotal(old)
	}
	if fresh := historyTotal(h) - seen; fresh > 0 {
		hist := h.Status.History
		for _, e := range hist[max(0, len(hist)-int(fresh)):] {
			HookTransitions.WithLabelValues(eventLabel(e.Event)).Inc()
		}
	}
	before := map[string]bool{}
	if old != nil {
		for i := range old.Status.Steps {
			for j := range old.Status.Steps[i].Receipts {
				before[receiptKey(&old.Status.Steps[i], &old.Status.Steps[i].Receipts[j])] = true
			}
		}
	}
	for i := range h.Status.Steps {
		for j := range h.Status.Steps[i].Receipts {
			r := &h.Status.Steps[i].Receipts[j]
			if before[receiptKey(&h.Status.Steps[i], r)] {
				continue
			}
			result := ValidationPassed
			if r.ExitCode != 0 {
				result = ValidationFailed
			}
			ValidationDuration.WithLabelValues(result).Observe(float64(r.DurationMillis) / 1000)
			if r.Envelope != nil && len(r.Envelope.Signatures) > 0 {
				ReceiptsSigned.Inc()
			}
		}
	}
}

// historyTotal is how many history entries h has ever had.
func historyTotal(h *v1.Hook) int64 {
	return h.Status.HistoryDropped + int64(len(h.Status.History))
}

// receiptKey identifies one run of one validation command of a step.
func receiptKey(step *v1.StepResult, r *v1.Receipt) string {
	return strings.Join([]string{
		step.Name, strings.Join(r.Command, "\x00"),
		strconv.FormatInt(r.StartedAt.UnixNano(), 10), strconv.FormatInt(r.FinishedAt.UnixNano(), 10),
		r.StdoutSHA256, r.StderrSHA256,
	}, "\x01")
}

// checkpointAdded counts a Checkpoint created while this process watches.
func checkpointAdded(obj interface{}, initialList bool) {
	cp, ok := obj.(*v1.Checkpoint)
	if !ok || initialList {
		return
	}
	trigger := triggerLabel(cp.Spec.Trigger)
	Checkpoints.WithLabelValues(trigger).Inc()
	if d, err := time.ParseDuration(cp.Annotations[v1.CaptureDurationAnnotation]); err == nil && d >= 0 {
		CheckpointCapture.WithLabelValues(trigger).Observe(d.Seconds())
	}
}

// hooksDesc describes tether_hooks.
var hooksDesc = prometheus.NewDesc(Namespace+"_hooks", "Hooks by namespace and state, counted from the cache when scraped.", []string{"namespace", "state"}, nil)

// collectTimeout bounds the cache read of one scrape.
const collectTimeout = 5 * time.Second

// hookSource is where the Hook gauge counts Hooks from: the informer's
// store itself when there is one, read without copies (a List through the
// cache deep-copies every Hook, 100,000 of them about 2 s of CPU a
// scrape), the reader otherwise.
type hookSource struct {
	reader client.Reader
	store  toolscache.Store
}

// states calls count with the namespace and state of every Hook.
func (s *hookSource) states(ctx context.Context, count func(namespace string, state v1.HookState)) error {
	if s.store != nil {
		for _, o := range s.store.List() {
			if h, ok := o.(*v1.Hook); ok {
				count(h.Namespace, h.Status.State)
			}
		}
		return nil
	}
	hooks := &v1.HookList{}
	if err := s.reader.List(ctx, hooks); err != nil {
		return err
	}
	for i := range hooks.Items {
		count(hooks.Items[i].Namespace, hooks.Items[i].Status.State)
	}
	return nil
}

// hookCollector computes tether_hooks from the source's Hooks at every
// scrape, so it is exact whatever events were missed; with no source (no
// Manager running, or not the leader) it reports nothing.
type hookCollector struct {
	source atomic.Pointer[hookSource]
}

var hooksCollector = &hookCollector{}

// Describe implements prometheus.Collector.
func (c *hookCollector) Describe(ch chan<- *prometheus.Desc) { ch <- hooksDesc }

// Collect implements prometheus.Collector.
func (c *hookCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.source.Load()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	// Every state of a namespace that has Hooks is reported, zeros
	// included, so that a state emptied reads 0 rather than vanishing.
	counts := map[string]map[v1.HookState]int{}
	err := src.states(ctx, func(ns string, st v1.HookState) {
		if st == "" {
			st = v1.HookInitializing
		}
		if counts[ns] == nil {
			counts[ns] = map[v1.HookState]int{}
		}
		counts[ns][st]++
	})
	if err != nil {
		// An invalid metric would fail the whole scrape; the gauge's
		// absence says enough, and the rest of the metrics still count.
		return
	}
	for ns, byState := range counts {
		for _, st := range hookStates {
			ch <- prometheus.MustNewConstMetric(hooksDesc, prometheus.GaugeValue, float64(byState[st]), ns, string(st))
		}
	}
}

// hookStates are the nine states of a Hook.
var hookStates = []v1.HookState{
	v1.HookInitializing, v1.HookStepPending, v1.HookStepRunning, v1.HookStepValidating, v1.HookAwaitingHuman,
	v1.HookRecovering, v1.HookCompleted, v1.HookFailed, v1.HookAbandoned,
}

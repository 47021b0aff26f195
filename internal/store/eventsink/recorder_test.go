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

package eventsink

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const combinedPrefix = "(combined from similar events): "

// newTestRecorder returns a Recorder writing to a fresh fake store, shut
// down when the test ends.
func newTestRecorder(t *testing.T, component string) (*Recorder, client.WithWatch) {
	t.Helper()
	scheme := newScheme(t)
	store := newStore(t, scheme)
	r := NewRecorder(store, scheme, component)
	t.Cleanup(r.Shutdown)
	return r, store
}

func TestRecorderStoresWarningEvent(t *testing.T) {
	r, store := newTestRecorder(t, "tether")
	obj := subject()

	r.For("").Eventf(obj, corev1.EventTypeWarning, "ReconcileFailed", "applying %s failed", "deployment")

	evs := waitForEvents(t, store, "one event", func(evs []corev1.Event) bool { return len(evs) == 1 })
	ev := evs[0]
	want := corev1.ObjectReference{
		Kind:       "ConfigMap",
		APIVersion: "v1",
		Namespace:  obj.Namespace,
		Name:       obj.Name,
		UID:        obj.UID,
	}
	if ev.InvolvedObject != want {
		t.Errorf("involvedObject = %+v, want %+v", ev.InvolvedObject, want)
	}
	if ev.Namespace != testNamespace {
		t.Errorf("namespace = %q, want %q", ev.Namespace, testNamespace)
	}
	if ev.Type != corev1.EventTypeWarning || ev.Reason != "ReconcileFailed" || ev.Message != "applying deployment failed" {
		t.Errorf("type/reason/message = %q/%q/%q", ev.Type, ev.Reason, ev.Message)
	}
	if ev.Source.Component != "tether" || ev.ReportingController != "tether" {
		t.Errorf("source.component = %q, reportingComponent = %q, want tether", ev.Source.Component, ev.ReportingController)
	}
	if ev.Count != 1 {
		t.Errorf("count = %d, want 1", ev.Count)
	}
	if ev.FirstTimestamp.IsZero() || !ev.FirstTimestamp.Equal(&ev.LastTimestamp) {
		t.Errorf("firstTimestamp = %v, lastTimestamp = %v", ev.FirstTimestamp, ev.LastTimestamp)
	}
	if ev.ResourceVersion == "" {
		t.Errorf("stored event has no resourceVersion")
	}
}

func TestRecorderCountsRepeatedEvents(t *testing.T) {
	r, store := newTestRecorder(t, "tether")
	rec := r.For("")
	for range 5 {
		rec.Event(subject(), corev1.EventTypeWarning, "BackOff", "restarting failed container")
	}

	evs := waitForEvents(t, store, "one event with count 5", func(evs []corev1.Event) bool {
		return len(evs) == 1 && evs[0].Count == 5
	})
	if ev := evs[0]; !ev.LastTimestamp.After(ev.FirstTimestamp.Time) && !ev.LastTimestamp.Equal(&ev.FirstTimestamp) {
		t.Errorf("lastTimestamp %v before firstTimestamp %v", ev.LastTimestamp, ev.FirstTimestamp)
	}
}

func TestRecorderCombinesSimilarEvents(t *testing.T) {
	r, store := newTestRecorder(t, "tether")
	rec := r.For("")
	// client-go aggregates once 10 distinct messages with the same source,
	// object, type and reason were seen in 10 minutes: events 1-9 are stored
	// as they are, event 10 creates the combined event, and events 11 and
	// 12 raise its count.
	for i := 1; i <= 12; i++ {
		rec.Eventf(subject(), corev1.EventTypeWarning, "ProbeFailed", "probe %02d failed", i)
	}

	evs := waitForEvents(t, store, "9 events and a combined one with count 3", func(evs []corev1.Event) bool {
		combined := 0
		for _, ev := range evs {
			if strings.HasPrefix(ev.Message, combinedPrefix) && ev.Count == 3 {
				combined++
			}
		}
		return len(evs) == 10 && combined == 1
	})
	for _, ev := range evs {
		if strings.HasPrefix(ev.Message, combinedPrefix) {
			if want := combinedPrefix + "probe 12 failed"; ev.Message != want {
				t.Errorf("combined message = %q, want %q", ev.Message, want)
			}
			if ev.Reason != "ProbeFailed" || ev.Type != corev1.EventTypeWarning || ev.Source.Component != "tether" {
				t.Errorf("combined event = %s", describe([]corev1.Event{ev}))
			}
			continue
		}
		if ev.Count != 1 {
			t.Errorf("individual event %q has count %d, want 1", ev.Message, ev.Count)
		}
	}
}

func TestRecorderFor(t *testing.T) {
	for _, tc := range []struct {
		component, name, want string
	}{
		{"tether", "", "tether"},
		{"tether", "deployments", "tether/deployments"},
		{"", "deployments", "deployments"},
	} {
		t.Run(tc.component+"+"+tc.name, func(t *testing.T) {
			r, store := newTestRecorder(t, tc.component)
			r.For(tc.name).Event(subject(), corev1.EventTypeNormal, "Synced", "ok")
			r.Shutdown()
			evs := listEvents(t, store)
			if len(evs) != 1 || evs[0].Source.Component != tc.want {
				t.Fatalf("want one event from %q, got %s", tc.want, describe(evs))
			}
		})
	}
}

func TestRecorderShutdownFlushes(t *testing.T) {
	r, store := newTestRecorder(t, "tether")
	rec := r.For("")
	for range 5 {
		rec.Event(subject(), corev1.EventTypeNormal, "Synced", "synced")
	}
	for i := 1; i <= 12; i++ {
		rec.Eventf(subject(), corev1.EventTypeWarning, "ProbeFailed", "probe %02d failed", i)
	}

	// No polling: Shutdown itself must wait for the queue to drain.
	r.Shutdown()

	evs := listEvents(t, store)
	counts := map[string]int32{}
	for _, ev := range evs {
		counts[ev.Message] = ev.Count
	}
	if len(evs) != 11 || counts["synced"] != 5 || counts[combinedPrefix+"probe 12 failed"] != 3 {
		t.Fatalf("after Shutdown want 11 events (synced x5, 9 probes, combined x3), got %s", describe(evs))
	}
}

func TestRecorderRecreatesDeletedEvent(t *testing.T) {
	r, store := newTestRecorder(t, "tether")
	rec := r.For("")
	rec.Event(subject(), corev1.EventTypeNormal, "Synced", "synced")
	evs := waitForEvents(t, store, "one event", func(evs []corev1.Event) bool { return len(evs) == 1 })

	// The correlator still remembers the event; its patch gets NotFound and
	// client-go falls back to creating the event with the next count.
	if err := store.Delete(context.Background(), &evs[0]); err != nil {
		t.Fatalf("deleting event: %v", err)
	}
	rec.Event(subject(), corev1.EventTypeNormal, "Synced", "synced")
	waitForEvents(t, store, "the event re-created with count 2", func(evs []corev1.Event) bool {
		return len(evs) == 1 && evs[0].Count == 2
	})
}

func TestRecorderShutdownStopsGoroutines(t *testing.T) {
	waitNoBrokerGoroutines(t)

	scheme := newScheme(t)
	store := newStore(t, scheme)
	r := NewRecorder(store, scheme, "tether")
	rec := r.For("worker")

	// Emit from several goroutines while shutting down; the race detector
	// and the absence of panics are part of the test.
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			<-start
			for i := range 50 {
				rec.Eventf(subject(), corev1.EventTypeNormal, "Working", "worker %d step %d", w, i)
			}
		})
	}
	close(start)
	r.Shutdown()
	wg.Wait()
	r.Shutdown() // idempotent

	stored := len(listEvents(t, store))
	rec.Event(subject(), corev1.EventTypeWarning, "Late", "after shutdown")
	r.For("other").Event(subject(), corev1.EventTypeWarning, "Late", "after shutdown")

	waitNoBrokerGoroutines(t)
	if got := len(listEvents(t, store)); got != stored {
		t.Fatalf("events recorded after Shutdown were stored: %d events before, %d after", stored, got)
	}
}

func TestRecorderShutdownWithoutEvents(t *testing.T) {
	waitNoBrokerGoroutines(t)
	scheme := newScheme(t)
	r := NewRecorder(newStore(t, scheme), scheme, "tether")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.ShutdownWithContext(ctx) // an expired context still stops everything
	waitNoBrokerGoroutines(t)
}

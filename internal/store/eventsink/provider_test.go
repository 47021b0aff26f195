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
	"maps"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// newTestProvider returns a Provider writing to a fresh fake store, shut
// down when the test ends.
func newTestProvider(t *testing.T) (*Provider, client.WithWatch) {
	t.Helper()
	scheme := newScheme(t)
	store := newStore(t, scheme)
	p := NewProvider(store, scheme)
	t.Cleanup(p.Shutdown)
	return p, store
}

func TestProviderLegacyRecorder(t *testing.T) {
	p, store := newTestProvider(t)
	var _ recorder.Provider = p // what a Manager hands to reconcilers

	rec := p.GetEventRecorderFor("deployment-controller")
	for range 3 {
		rec.Event(subject(), corev1.EventTypeWarning, "Failed", "boom")
	}
	evs := waitForEvents(t, store, "one event in a series", func(evs []corev1.Event) bool {
		return len(evs) == 1 && evs[0].Series != nil && evs[0].Series.Count >= 2
	})
	if evs[0].ReportingController != "deployment-controller" || evs[0].Action != "Failed" || evs[0].Message != "boom" {
		t.Errorf("reportingController/action/message = %q/%q/%q, want deployment-controller/Failed/boom",
			evs[0].ReportingController, evs[0].Action, evs[0].Message)
	}
}

func TestProviderEventsRecorder(t *testing.T) {
	p, store := newTestProvider(t)
	rec := p.GetEventRecorder("tether.dev/deployments")
	obj := subject()
	related := &corev1.Secret{}
	related.Name, related.Namespace = "creds", testNamespace

	rec.Eventf(obj, related, corev1.EventTypeWarning, "ApplyFailed", "Apply", "applying %s failed", "deployment")
	evs := waitForEvents(t, store, "one event", func(evs []corev1.Event) bool { return len(evs) == 1 })
	ev := evs[0]
	if ev.InvolvedObject.Kind != "ConfigMap" || ev.InvolvedObject.Name != obj.Name || ev.InvolvedObject.UID != obj.UID {
		t.Errorf("involvedObject = %+v", ev.InvolvedObject)
	}
	if ev.Related == nil || ev.Related.Kind != "Secret" || ev.Related.Name != "creds" {
		t.Errorf("related = %+v", ev.Related)
	}
	if ev.Type != corev1.EventTypeWarning || ev.Reason != "ApplyFailed" || ev.Action != "Apply" || ev.Message != "applying deployment failed" {
		t.Errorf("type/reason/action/message = %q/%q/%q/%q", ev.Type, ev.Reason, ev.Action, ev.Message)
	}
	if ev.ReportingController != "tether.dev/deployments" || !strings.HasPrefix(ev.ReportingInstance, "tether.dev/deployments-") {
		t.Errorf("reportingComponent/Instance = %q/%q", ev.ReportingController, ev.ReportingInstance)
	}
	if ev.EventTime.IsZero() || ev.Series != nil {
		t.Errorf("eventTime = %v, series = %+v", ev.EventTime, ev.Series)
	}

	// An isomorphic event turns the stored event into a series; client-go
	// writes that with a strategic merge patch on events.k8s.io/v1, which
	// the EventsSink applies to the stored core/v1 Event.
	rec.Eventf(obj, related, corev1.EventTypeWarning, "ApplyFailed", "Apply", "applying %s failed", "deployment")
	evs = waitForEvents(t, store, "a series of 2", func(evs []corev1.Event) bool {
		return len(evs) == 1 && evs[0].Series != nil && evs[0].Series.Count == 2
	})
	if evs[0].Name != ev.Name || evs[0].Message != ev.Message {
		t.Errorf("series update changed the event: %s", describe(evs))
	}

	rec.AnnotatedEventf(obj, nil, map[string]string{"tether.dev/run": "42"}, corev1.EventTypeNormal, "Applied", "Apply", "applied")
	waitForEvents(t, store, "an annotated event", func(evs []corev1.Event) bool {
		for _, ev := range evs {
			if ev.Reason == "Applied" && ev.Annotations["tether.dev/run"] == "42" {
				return true
			}
		}
		return false
	})
}

func TestProviderShutdown(t *testing.T) {
	waitNoBrokerGoroutines(t)

	scheme := newScheme(t)
	store := newStore(t, scheme)
	p := NewProvider(store, scheme)
	legacy := p.GetEventRecorderFor("legacy")
	current := p.GetEventRecorder("current")

	legacy.Event(subject(), corev1.EventTypeNormal, "Legacy", "legacy")
	current.Eventf(subject(), nil, corev1.EventTypeNormal, "Current", "Sync", "current")
	// Invalid events are dropped by client-go and must not hold up Shutdown.
	current.Eventf(subject(), nil, "Bogus", "Current", "Sync", "bad type")
	current.Eventf(nil, nil, corev1.EventTypeNormal, "Current", "Sync", "no object")

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range 25 {
				legacy.Eventf(subject(), corev1.EventTypeNormal, "Busy", "legacy worker %d", w)
				current.Eventf(subject(), nil, corev1.EventTypeNormal, "Busy", "Work", "worker %d", w)
			}
		})
	}
	p.Shutdown()
	wg.Wait()
	p.Shutdown()

	evs := listEvents(t, store)
	var sawLegacy, sawCurrent bool
	for _, ev := range evs {
		sawLegacy = sawLegacy || ev.Reason == "Legacy"
		sawCurrent = sawCurrent || ev.Reason == "Current"
	}
	if !sawLegacy || !sawCurrent {
		t.Errorf("events recorded before Shutdown were not flushed (legacy %v, events.k8s.io %v): %s", sawLegacy, sawCurrent, describe(evs))
	}

	legacy.Event(subject(), corev1.EventTypeWarning, "Late", "late")
	current.Eventf(subject(), nil, corev1.EventTypeWarning, "Late", "Late", "late")
	p.GetEventRecorder("new").Eventf(subject(), nil, corev1.EventTypeWarning, "Late", "Late", "late")
	waitNoBrokerGoroutines(t)
	if got := listEvents(t, store); len(got) != len(evs) {
		t.Errorf("events recorded after Shutdown were stored: %d before, %d after", len(evs), len(got))
	}
}

// TestProviderEveryNoteIsShown records Events of one object, type, reason
// and action with different notes: a repeat of the same note folds into a
// series counting every occurrence, written at once, and a new note is an
// Event of its own (client-go's own series keep the first note for all,
// and write the third count only when the series ends, six minutes later).
func TestProviderEveryNoteIsShown(t *testing.T) {
	tests := []struct {
		name  string
		notes []string
		want  map[string]int32 // message: occurrences
	}{
		{name: "a second reason", notes: []string{"the file holds no object", "line 3: a tab"},
			want: map[string]int32{"the file holds no object": 1, "line 3: a tab": 1}},
		{name: "the same note again", notes: []string{"same", "same", "same", "same"}, want: map[string]int32{"same": 4}},
		{name: "back to the first", notes: []string{"a", "b", "a"}, want: map[string]int32{"a": 2, "b": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, store := newTestProvider(t)
			rec := p.GetEventRecorder("tether-store")
			obj := subject()
			for _, note := range tt.notes {
				rec.Eventf(obj, nil, corev1.EventTypeWarning, "InvalidEdit", "AdoptEdit", "%s", note)
			}
			waitForEvents(t, store, "an Event per note, counting its occurrences", func(evs []corev1.Event) bool {
				got := map[string]int32{}
				for _, ev := range evs {
					n := int32(1)
					if ev.Series != nil {
						n = ev.Series.Count
					}
					got[ev.Message] += n
				}
				return maps.Equal(got, tt.want) && len(evs) == len(tt.want)
			})
		})
	}
}

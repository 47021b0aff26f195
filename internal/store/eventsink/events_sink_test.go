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
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// sampleEvent returns an event as client-go's events recorder would build it.
func sampleEvent() *eventsv1.Event {
	t := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "app-config.1", Namespace: testNamespace},
		Regarding: corev1.ObjectReference{
			Kind: "ConfigMap", APIVersion: "v1", Namespace: testNamespace, Name: "app-config", UID: subject().UID,
		},
		EventTime:           t,
		Reason:              "BackOff",
		Action:              "Sync",
		Note:                "first",
		Type:                corev1.EventTypeWarning,
		ReportingController: "tether",
		ReportingInstance:   "tether-host",
	}
}

// seriesPatch builds the patch client-go's events broadcaster sends when an
// isomorphic event turns ev into a series (event_broadcaster.go:
// createPatchBytesForSeries).
func seriesPatch(t *testing.T, ev *eventsv1.Event, count int32, last time.Time) []byte {
	t.Helper()
	next := ev.DeepCopy()
	next.Series = &eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(last)}
	old := next.DeepCopy()
	old.Series = nil
	oldData, _ := json.Marshal(old)
	newData, _ := json.Marshal(next)
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, eventsv1.Event{})
	if err != nil {
		t.Fatalf("creating patch: %v", err)
	}
	return patch
}

func TestEventsSinkCreateAndPatch(t *testing.T) {
	ctx := context.Background()
	store := newStore(t, newScheme(t))
	sink := NewEventsSink(store)

	created, err := sink.Create(ctx, sampleEvent())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if created.ResourceVersion == "" {
		t.Fatalf("Create returned no resourceVersion")
	}

	last := time.Date(2026, 1, 2, 3, 9, 0, 0, time.UTC)
	patched, err := sink.Patch(ctx, created, seriesPatch(t, created, 2, last))
	if err != nil {
		t.Fatalf("Patch: %v", err)
	}
	if patched.Series == nil || patched.Series.Count != 2 || !patched.Series.LastObservedTime.Time.Equal(last) || patched.Note != "first" {
		t.Errorf("patched series/note = %+v/%q", patched.Series, patched.Note)
	}
	if patched.ResourceVersion == created.ResourceVersion {
		t.Errorf("Patch did not return the new resourceVersion")
	}

	stored := &corev1.Event{}
	if err := store.Get(ctx, client.ObjectKeyFromObject(created), stored); err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := eventsV1ToCore(created)
	want.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(last)}
	want.ResourceVersion = stored.ResourceVersion
	want.TypeMeta = stored.TypeMeta
	if !apiequality.Semantic.DeepEqual(stored, want) {
		t.Errorf("stored event = %+v\nwant %+v", stored, want)
	}

	updated := coreToEventsV1(stored)
	updated.Note = "updated"
	if _, err := sink.Update(ctx, updated); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if _, err := sink.Update(ctx, coreToEventsV1(stored)); !apierrors.IsConflict(err) {
		t.Errorf("Update with a stale resourceVersion: err = %v, want Conflict", err)
	}
}

// TestEventsSinkPatchRenamesFields checks that fields named differently in
// events.k8s.io/v1 land on their core/v1 fields.
func TestEventsSinkPatchRenamesFields(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		check func(*corev1.Event) bool
	}{
		{name: "note is message", patch: `{"note":"changed"}`, check: func(ev *corev1.Event) bool { return ev.Message == "changed" }},
		{name: "deprecatedCount is count", patch: `{"deprecatedCount":5}`, check: func(ev *corev1.Event) bool { return ev.Count == 5 }},
		{name: "series keeps its name", patch: `{"series":{"count":3,"lastObservedTime":"2026-01-02T03:09:00.000000Z"}}`, check: func(ev *corev1.Event) bool { return ev.Series != nil && ev.Series.Count == 3 }},
		{name: "action keeps its name", patch: `{"action":"Retry"}`, check: func(ev *corev1.Event) bool { return ev.Action == "Retry" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store := newStore(t, newScheme(t))
			sink := NewEventsSink(store)
			created, err := sink.Create(ctx, sampleEvent())
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if _, err := sink.Patch(ctx, created, []byte(tt.patch)); err != nil {
				t.Fatalf("Patch: %v", err)
			}
			stored := &corev1.Event{}
			if err := store.Get(ctx, client.ObjectKeyFromObject(created), stored); err != nil {
				t.Fatalf("Get: %v", err)
			}
			if !tt.check(stored) {
				t.Errorf("after patch %s the stored event is %+v", tt.patch, stored)
			}
		})
	}
}

func TestEventsSinkPatchMissingEvent(t *testing.T) {
	sink := NewEventsSink(newStore(t, newScheme(t)))
	ev := sampleEvent()
	_, err := sink.Patch(context.Background(), ev, seriesPatch(t, ev, 2, time.Now()))
	// client-go's broadcaster re-creates the event only on a NotFound
	// StatusError.
	statusErr, ok := err.(*apierrors.StatusError) //nolint:errorlint // the bare type is the point
	if !ok || !apierrors.IsNotFound(statusErr) {
		t.Fatalf("Patch of a missing event: err = %#v, want a bare NotFound StatusError", err)
	}
}

func TestEventsSinkPatchRejectsMalformedPatches(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		want  func(error) bool
	}{
		{name: "not JSON", patch: `{not json`, want: apierrors.IsBadRequest},
		{name: "a JSON array", patch: `[1]`, want: apierrors.IsBadRequest},
		{name: "a stale resourceVersion", patch: `{"metadata":{"resourceVersion":"12345"},"note":"x"}`, want: apierrors.IsConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			sink := NewEventsSink(newStore(t, newScheme(t)))
			created, err := sink.Create(ctx, sampleEvent())
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if _, err := sink.Patch(ctx, created, []byte(tt.patch)); !tt.want(err) {
				t.Fatalf("Patch %s: err = %v", tt.patch, err)
			}
		})
	}
}

func TestEventsSinkUnwrapsStatusErrors(t *testing.T) {
	store := newStore(t, newScheme(t), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return fmt.Errorf("file store: %w", apierrors.NewAlreadyExists(corev1.Resource("events"), obj.GetName()))
		},
	})
	_, err := NewEventsSink(store).Create(context.Background(), sampleEvent())
	statusErr, ok := err.(*apierrors.StatusError) //nolint:errorlint // the bare type is the point
	if !ok {
		t.Fatalf("err = %#v, want a bare *StatusError", err)
	}
	if !apierrors.IsAlreadyExists(statusErr) || !strings.Contains(statusErr.Error(), "file store:") {
		t.Errorf("err = %v, want AlreadyExists keeping the wrapping message", statusErr)
	}

	plain := fmt.Errorf("disk full")
	if got := normalizeError(plain); got != plain { //nolint:errorlint // identity check
		t.Errorf("normalizeError changed a non-status error: %v", got)
	}
}

func TestEventsSinkRejectsEmptyNamespace(t *testing.T) {
	ctx := context.Background()
	sink := NewEventsSink(newStore(t, newScheme(t)))
	ev := sampleEvent()
	ev.Namespace = ""
	if _, err := sink.Create(ctx, ev); !apierrors.IsBadRequest(err) {
		t.Errorf("Create: err = %v, want BadRequest", err)
	}
	if _, err := sink.Update(ctx, ev); !apierrors.IsBadRequest(err) {
		t.Errorf("Update: err = %v, want BadRequest", err)
	}
	if _, err := sink.Patch(ctx, ev, []byte(`{}`)); !apierrors.IsBadRequest(err) {
		t.Errorf("Patch: err = %v, want BadRequest", err)
	}
}

func TestEventConversionRoundTrip(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	in := &eventsv1.Event{
		ObjectMeta:               metav1.ObjectMeta{Name: "e", Namespace: testNamespace, Annotations: map[string]string{"a": "b"}},
		EventTime:                metav1.NewMicroTime(now),
		Series:                   &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now)},
		ReportingController:      "tether",
		ReportingInstance:        "tether-host",
		Action:                   "Reconcile",
		Reason:                   "Failed",
		Regarding:                corev1.ObjectReference{Kind: "ConfigMap", Name: "app-config"},
		Related:                  &corev1.ObjectReference{Kind: "Secret", Name: "creds"},
		Note:                     "note",
		Type:                     corev1.EventTypeWarning,
		DeprecatedSource:         corev1.EventSource{Component: "legacy", Host: "h"},
		DeprecatedFirstTimestamp: metav1.NewTime(now.Add(-time.Minute)),
		DeprecatedLastTimestamp:  metav1.NewTime(now),
		DeprecatedCount:          7,
	}
	core := eventsV1ToCore(in)
	if core.Message != "note" || core.InvolvedObject.Name != "app-config" || core.Count != 7 ||
		core.Source.Component != "legacy" || core.Series == nil || core.Series.Count != 4 || core.Action != "Reconcile" {
		t.Errorf("eventsV1ToCore = %+v", core)
	}
	if back := coreToEventsV1(core); !apiequality.Semantic.DeepEqual(back, in) {
		t.Errorf("round trip = %+v\nwant %+v", back, in)
	}
	core.Related.Name = "changed"
	if in.Related.Name != "creds" {
		t.Errorf("eventsV1ToCore shares memory with its input")
	}
}

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
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	recordutil "k8s.io/client-go/tools/record/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// sampleEvent returns an event as client-go's recorder would build it.
func sampleEvent() *corev1.Event {
	t := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "app-config.1", Namespace: testNamespace},
		InvolvedObject: corev1.ObjectReference{
			Kind: "ConfigMap", APIVersion: "v1", Namespace: testNamespace, Name: "app-config", UID: subject().UID,
		},
		Reason:              "BackOff",
		Message:             "first",
		Source:              corev1.EventSource{Component: "tether"},
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		Type:                corev1.EventTypeWarning,
		ReportingController: "tether",
	}
}

// countPatch builds the patch client-go's correlator sends for a repeated
// event (events_cache.go: eventObserve).
func countPatch(t *testing.T, ev *corev1.Event, count int32, message string, last time.Time) []byte {
	t.Helper()
	next := ev.DeepCopy()
	next.Count = count
	next.Message = message
	next.LastTimestamp = metav1.NewTime(last)
	old := next.DeepCopy()
	old.Count = 0
	old.Message = ""
	old.LastTimestamp = metav1.NewTime(time.Unix(0, 0))
	oldData, _ := json.Marshal(old)
	newData, _ := json.Marshal(next)
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, next)
	if err != nil {
		t.Fatalf("creating patch: %v", err)
	}
	return patch
}

func TestSinkCreateAndPatch(t *testing.T) {
	store := newStore(t, newScheme(t))
	sink := NewSink(store)

	created, err := sink.Create(sampleEvent())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if created.ResourceVersion == "" {
		t.Fatalf("Create returned no resourceVersion")
	}

	last := time.Date(2026, 1, 2, 3, 9, 0, 0, time.UTC)
	patched, err := sink.Patch(created, countPatch(t, created, 2, "second", last))
	if err != nil {
		t.Fatalf("Patch: %v", err)
	}
	if patched.Count != 2 || patched.Message != "second" || !patched.LastTimestamp.Time.Equal(last) {
		t.Errorf("patched count/message/lastTimestamp = %d/%q/%v", patched.Count, patched.Message, patched.LastTimestamp)
	}
	if patched.ResourceVersion == created.ResourceVersion {
		t.Errorf("Patch did not return the new resourceVersion")
	}

	stored := &corev1.Event{}
	if err := store.Get(context.Background(), client.ObjectKeyFromObject(created), stored); err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := created.DeepCopy()
	want.Count, want.Message, want.LastTimestamp = 2, "second", metav1.NewTime(last)
	want.ResourceVersion = stored.ResourceVersion
	want.TypeMeta = stored.TypeMeta
	if !apiequality.Semantic.DeepEqual(stored, want) {
		t.Errorf("stored event = %+v\nwant %+v", stored, want)
	}

	updated := stored.DeepCopy()
	updated.Message = "updated"
	if _, err := sink.Update(updated); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if _, err := sink.Update(stored); !apierrors.IsConflict(err) {
		t.Errorf("Update with a stale resourceVersion: err = %v, want Conflict", err)
	}
}

func TestSinkPatchRetriesOnConflict(t *testing.T) {
	var raced atomic.Bool
	store := newStore(t, newScheme(t), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if raced.CompareAndSwap(false, true) {
				// Someone else updates the event between the sink's Get and
				// its Update.
				other := &corev1.Event{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
					return err
				}
				other.Annotations = map[string]string{"touched": "yes"}
				if err := c.Update(ctx, other); err != nil {
					return err
				}
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	sink := NewSink(store)
	created, err := sink.Create(sampleEvent())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}

	patched, err := sink.Patch(created, countPatch(t, created, 2, "second", time.Now()))
	if err != nil {
		t.Fatalf("Patch: %v", err)
	}
	if !raced.Load() {
		t.Fatalf("the interceptor did not run")
	}
	if patched.Count != 2 || patched.Annotations["touched"] != "yes" {
		t.Errorf("patch was not re-applied to the current event: count=%d annotations=%v", patched.Count, patched.Annotations)
	}
}

func TestSinkPatchMissingEvent(t *testing.T) {
	sink := NewSink(newStore(t, newScheme(t)))
	ev := sampleEvent()
	_, err := sink.Patch(ev, countPatch(t, ev, 2, "second", time.Now()))
	// client-go's broadcaster re-creates the event only on this exact error
	// shape.
	if !recordutil.IsKeyNotFoundError(err) {
		t.Fatalf("Patch of a missing event: err = %#v, want a bare NotFound StatusError", err)
	}
}

func TestSinkPatchResourceVersionPrecondition(t *testing.T) {
	sink := NewSink(newStore(t, newScheme(t)))
	created, err := sink.Create(sampleEvent())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	patch := []byte(`{"metadata":{"resourceVersion":"12345"},"count":2}`)
	if _, err := sink.Patch(created, patch); !apierrors.IsConflict(err) {
		t.Fatalf("Patch with a stale resourceVersion: err = %v, want Conflict", err)
	}
	if _, err := sink.Patch(created, []byte(`{"metadata":{"name":"renamed"}}`)); !apierrors.IsBadRequest(err) {
		t.Fatalf("Patch renaming the event: err = %v, want BadRequest", err)
	}
	if _, err := sink.Patch(created, []byte(`{not json`)); !apierrors.IsBadRequest(err) {
		t.Fatalf("Patch with a malformed patch: err = %v, want BadRequest", err)
	}
}

func TestSinkUnwrapsStatusErrors(t *testing.T) {
	store := newStore(t, newScheme(t), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return fmt.Errorf("file store: %w", apierrors.NewAlreadyExists(corev1.Resource("events"), obj.GetName()))
		},
	})
	_, err := NewSink(store).Create(sampleEvent())
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

func TestSinkRejectsEmptyNamespace(t *testing.T) {
	sink := NewSink(newStore(t, newScheme(t)))
	ev := sampleEvent()
	ev.Namespace = ""
	if _, err := sink.Create(ev); !apierrors.IsBadRequest(err) {
		t.Errorf("Create: err = %v, want BadRequest", err)
	}
	if _, err := sink.Update(ev); !apierrors.IsBadRequest(err) {
		t.Errorf("Update: err = %v, want BadRequest", err)
	}
	if _, err := sink.Patch(ev, []byte(`{}`)); !apierrors.IsBadRequest(err) {
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

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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventsSink stores events.k8s.io/v1 Events through a controller-runtime
// client. It implements events.EventSink, so it can back
// events.NewBroadcaster; Provider does that for you.
//
// Events are stored as core/v1 Events, converted field by field the way the
// API server converts between the two versions of its single events
// resource (regarding is involvedObject, note is message, deprecatedCount is
// count, and so on), so the store only needs core/v1 Event in its scheme and
// lists one kind of Event no matter which recorder wrote it.
//
// Every error carrying a Kubernetes API status is returned as a bare
// *apierrors.StatusError, because client-go's broadcaster inspects the
// concrete error type: NotFound on Patch makes it fall back to Create, and
// other status errors make it drop the event instead of retrying it.
type EventsSink struct {
	client client.Client
}

var _ events.EventSink = (*EventsSink)(nil)

// NewEventsSink returns an EventsSink that writes events with c.
func NewEventsSink(c client.Client) *EventsSink {
	return &EventsSink{client: c}
}

// Create stores a new event in the event's namespace and returns the stored
// object, as events.EventSinkImpl does.
func (s *EventsSink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	if event.Namespace == "" {
		return nil, apierrors.NewBadRequest("can't create an event with empty namespace")
	}
	obj := eventsV1ToCore(event)
	if err := s.client.Create(ctx, obj); err != nil {
		return nil, normalizeError(err)
	}
	return coreToEventsV1(obj), nil
}

// Update replaces a stored event, honouring its resourceVersion, and returns
// the stored object, as events.EventSinkImpl does.
func (s *EventsSink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	if event.Namespace == "" {
		return nil, apierrors.NewBadRequest("can't update an event with empty namespace")
	}
	obj := eventsV1ToCore(event)
	if err := s.client.Update(ctx, obj); err != nil {
		return nil, normalizeError(err)
	}
	return coreToEventsV1(obj), nil
}

// Patch sends data, a strategic merge patch for an events.k8s.io/v1 Event
// (the broadcaster sends the new series), to the client as a strategic
// merge patch of the stored core/v1 Event named like oldEvent, and returns
// the result, as events.EventSinkImpl does. The patch's top-level fields are
// renamed to their core/v1 names (note is message, regarding is
// involvedObject, and so on); the store applies it, retrying on conflicts
// unless the patch pins a resourceVersion. A missing event is a NotFound,
// and the broadcaster then creates it afresh.
func (s *EventsSink) Patch(ctx context.Context, oldEvent *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if oldEvent.Namespace == "" {
		return nil, apierrors.NewBadRequest("can't patch an event with empty namespace")
	}
	coreData, err := patchToCore(data)
	if err != nil {
		return nil, err
	}
	obj := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: oldEvent.Namespace, Name: oldEvent.Name}}
	if err := s.client.Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, coreData)); err != nil {
		return nil, normalizeError(err)
	}
	return coreToEventsV1(obj), nil
}

// coreFieldNames maps the top-level fields of an events.k8s.io/v1 Event
// whose core/v1 names differ to those names; the other fields, such as
// series, metadata, action and reason, are named alike.
var coreFieldNames = map[string]string{
	"regarding":                "involvedObject",
	"note":                     "message",
	"deprecatedSource":         "source",
	"deprecatedFirstTimestamp": "firstTimestamp",
	"deprecatedLastTimestamp":  "lastTimestamp",
	"deprecatedCount":          "count",
}

// patchToCore renames the top-level fields of a patch for an
// events.k8s.io/v1 Event to their core/v1 names.
func patchToCore(data []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding the event patch: %v", err))
	}
	renamed := make(map[string]json.RawMessage, len(fields))
	for name, value := range fields {
		if core, ok := coreFieldNames[name]; ok {
			name = core
		}
		renamed[name] = value
	}
	return json.Marshal(renamed)
}

// eventsV1ToCore converts an events.k8s.io/v1 Event to a core/v1 Event as
// the API server does (k8s.io/kubernetes/pkg/apis/events/v1). The result
// shares no memory with in.
func eventsV1ToCore(in *eventsv1.Event) *corev1.Event {
	in = in.DeepCopy()
	out := &corev1.Event{
		ObjectMeta:          in.ObjectMeta,
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		Related:             in.Related,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{
			Count:            in.Series.Count,
			LastObservedTime: in.Series.LastObservedTime,
		}
	}
	return out
}

// coreToEventsV1 converts a core/v1 Event to an events.k8s.io/v1 Event as
// the API server does; it is the inverse of eventsV1ToCore. The result shares
// no memory with in.
func coreToEventsV1(in *corev1.Event) *eventsv1.Event {
	in = in.DeepCopy()
	out := &eventsv1.Event{
		ObjectMeta:               in.ObjectMeta,
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{
			Count:            in.Series.Count,
			LastObservedTime: in.Series.LastObservedTime,
		}
	}
	return out
}

// normalizeError returns err unchanged unless it wraps a
// *apierrors.StatusError, in which case it returns a bare *StatusError with
// the same status and err's full message. client-go's event broadcaster
// switches on the concrete error type, so a wrapped status error would be
// mistaken for a transport error and retried.
func normalizeError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*apierrors.StatusError); ok { //nolint:errorlint // the broadcaster needs the bare type
		return err
	}
	var statusErr *apierrors.StatusError
	if !errors.As(err, &statusErr) {
		return err
	}
	status := statusErr.ErrStatus
	status.Message = err.Error()
	return &apierrors.StatusError{ErrStatus: status}
}

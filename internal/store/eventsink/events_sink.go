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

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// lists one kind of Event no matter which recorder wrote it. Errors are
// normalized as Sink's are.
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

// Patch applies data, a strategic merge patch for an events.k8s.io/v1 Event
// (the broadcaster sends the new series), to the stored event named like
// oldEvent and returns the result, as events.EventSinkImpl does. The stored
// event is converted to events.k8s.io/v1, patched in memory, converted back
// and written with an Update under the stored resourceVersion, retrying on
// conflicts; see Sink.Patch.
func (s *EventsSink) Patch(ctx context.Context, oldEvent *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if oldEvent.Namespace == "" {
		return nil, apierrors.NewBadRequest("can't patch an event with empty namespace")
	}
	key := client.ObjectKey{Namespace: oldEvent.Namespace, Name: oldEvent.Name}
	stored, err := patchStoredEvent(ctx, s.client, key, func(current *corev1.Event) (*corev1.Event, error) {
		patched, err := strategicPatch(coreToEventsV1(current), data, &eventsv1.Event{})
		if err != nil {
			return nil, err
		}
		return eventsV1ToCore(patched), nil
	})
	if err != nil {
		return nil, err
	}
	return coreToEventsV1(stored), nil
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

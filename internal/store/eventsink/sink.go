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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Sink stores core/v1 Events through a controller-runtime client. It
// implements record.EventSink, so it can be handed to
// record.EventBroadcaster.StartRecordingToSink; Recorder does that for you.
//
// Every error a Sink returns that carries a Kubernetes API status is returned
// as a bare *apierrors.StatusError, because client-go's broadcaster inspects
// the concrete error type: NotFound on Patch makes it fall back to Create, and
// other status errors make it drop the event instead of retrying it (twelve
// times, ten seconds apart) as it does for transport errors.
type Sink struct {
	client client.Client
	ctx    context.Context
}

var _ record.EventSink = (*Sink)(nil)

// NewSink returns a Sink that writes events with c.
func NewSink(c client.Client) *Sink {
	return newSink(context.Background(), c)
}

// newSink returns a Sink whose calls to c use ctx.
func newSink(ctx context.Context, c client.Client) *Sink {
	return &Sink{client: c, ctx: ctx}
}

// Create stores a new event in the event's namespace and returns the stored
// object, as the typed client's CreateWithEventNamespace does.
func (s *Sink) Create(event *corev1.Event) (*corev1.Event, error) {
	if event.Namespace == "" {
		return nil, apierrors.NewBadRequest("can't create an event with empty namespace")
	}
	obj := event.DeepCopy()
	if err := s.client.Create(s.ctx, obj); err != nil {
		return nil, normalizeError(err)
	}
	return obj, nil
}

// Update replaces a stored event, honouring its resourceVersion, and returns
// the stored object, as the typed client's UpdateWithEventNamespace does.
func (s *Sink) Update(event *corev1.Event) (*corev1.Event, error) {
	if event.Namespace == "" {
		return nil, apierrors.NewBadRequest("can't update an event with empty namespace")
	}
	obj := event.DeepCopy()
	if err := s.client.Update(s.ctx, obj); err != nil {
		return nil, normalizeError(err)
	}
	return obj, nil
}

// Patch applies data, a strategic merge patch for a core/v1 Event (the
// broadcaster sends the new count, lastTimestamp and message), to the stored
// event named like oldEvent and returns the result, as the typed client's
// PatchWithEventNamespace does with types.StrategicMergePatchType.
//
// The patch is applied in memory to the currently stored event and written
// back with an Update carrying the stored resourceVersion, retrying when the
// store reports a conflict. If the event no longer exists the NotFound error
// is returned, and the broadcaster then creates it afresh.
func (s *Sink) Patch(oldEvent *corev1.Event, data []byte) (*corev1.Event, error) {
	if oldEvent.Namespace == "" {
		return nil, apierrors.NewBadRequest("can't patch an event with empty namespace")
	}
	key := client.ObjectKey{Namespace: oldEvent.Namespace, Name: oldEvent.Name}
	return patchStoredEvent(s.ctx, s.client, key, func(current *corev1.Event) (*corev1.Event, error) {
		return strategicPatch(current, data, &corev1.Event{})
	})
}

// strategicPatch applies the strategic merge patch data to obj, using
// schema's Go type for the merge strategy, and decodes the result into a new
// object of obj's type.
func strategicPatch[T any](obj *T, data []byte, schema *T) (*T, error) {
	original, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("encoding event: %w", err))
	}
	patched, err := strategicpatch.StrategicMergePatch(original, data, schema)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("applying strategic merge patch to event: %v", err))
	}
	out := new(T)
	if err := json.Unmarshal(patched, out); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding patched event: %v", err))
	}
	return out, nil
}

// patchStoredEvent reads the core/v1 Event at key, computes its new state with
// mutate, and writes that back with an Update under the resourceVersion it
// read, starting over on conflicts. The result must keep the event's name and
// namespace; a resourceVersion in it other than the stored one is a failed
// precondition and yields a Conflict without retrying, as the API server does
// for a patch carrying metadata.resourceVersion.
func patchStoredEvent(ctx context.Context, c client.Client, key client.ObjectKey, mutate func(current *corev1.Event) (*corev1.Event, error)) (*corev1.Event, error) {
	var (
		result       *corev1.Event
		preconditErr error
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &corev1.Event{}
		if err := c.Get(ctx, key, current); err != nil {
			return err
		}
		next, err := mutate(current.DeepCopy())
		if err != nil {
			return err
		}
		if next.Name != current.Name || next.Namespace != current.Namespace {
			return apierrors.NewBadRequest(fmt.Sprintf("a patch must not change an event's name or namespace (%s/%s)", key.Namespace, key.Name))
		}
		if next.ResourceVersion != "" && next.ResourceVersion != current.ResourceVersion {
			preconditErr = apierrors.NewConflict(corev1.Resource("events"), key.Name,
				fmt.Errorf("the patch requires resourceVersion %s but the stored one is %s", next.ResourceVersion, current.ResourceVersion))
			return nil
		}
		next.ResourceVersion = current.ResourceVersion
		if err := c.Update(ctx, next); err != nil {
			return err
		}
		result = next
		return nil
	})
	if err == nil {
		err = preconditErr
	}
	if err != nil {
		return nil, normalizeError(err)
	}
	return result, nil
}

// normalizeError returns err unchanged unless it wraps a
// *apierrors.StatusError, in which case it returns a bare *StatusError with
// the same status and err's full message. client-go's event broadcasters
// switch on the concrete error type, so a wrapped status error would be
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

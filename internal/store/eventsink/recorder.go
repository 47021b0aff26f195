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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultFlushTimeout bounds how long Shutdown waits for queued events to be
// written before it stops recording anyway.
const DefaultFlushTimeout = 10 * time.Second

// flushComponent is the event source of the marker events Recorder emits to
// find out when everything queued before them has been written. Events from
// this source are never stored.
const flushComponent = "eventsink.tether.dev/flush-marker"

// Recorder owns a client-go record.EventBroadcaster that writes core/v1
// Events to a Sink, so events get client-go's correlation (deduplication
// with counts, aggregation of similar events, spam filtering). Recorders
// handed out by For share the broadcaster and its correlator, like those of a
// controller-runtime Manager. Call Shutdown when done: it writes what is
// still queued and stops the broadcaster's goroutines.
type Recorder struct {
	component   string
	scheme      *runtime.Scheme
	broadcaster record.EventBroadcaster
	marker      record.EventRecorder
	sink        *recorderSink
	cancel      context.CancelFunc

	// mu guards stopped; emitting holds it for reading, so that once
	// Shutdown has set stopped under the write lock, every event accepted
	// before is queued ahead of the flush marker.
	mu       sync.RWMutex
	stopped  bool
	shutdown sync.Once
}

// NewRecorder starts a broadcaster that records events to NewSink(c).
// scheme resolves the kind of the objects events are about; component is the
// default event source (see For).
func NewRecorder(c client.Client, scheme *runtime.Scheme, component string) *Recorder {
	ctx, cancel := context.WithCancel(context.Background())
	sink := &recorderSink{
		sink:     newSink(ctx, c),
		barriers: map[types.UID]chan struct{}{},
	}
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(sink)
	return &Recorder{
		component:   component,
		scheme:      scheme,
		broadcaster: broadcaster,
		marker:      broadcaster.NewRecorder(scheme, corev1.EventSource{Component: flushComponent}),
		sink:        sink,
		cancel:      cancel,
	}
}

// For returns a recorder whose events have source component name joined to
// the Recorder's component with a slash ("component/name"), or just either
// one when the other is empty; with an empty component For(name) therefore
// behaves like a Manager's GetEventRecorderFor(name). Events recorded after
// Shutdown are dropped.
func (r *Recorder) For(name string) record.EventRecorder {
	component := r.component
	switch {
	case component == "":
		component = name
	case name != "":
		component += "/" + name
	}
	return &legacyRecorder{
		r:   r,
		rec: r.broadcaster.NewRecorder(r.scheme, corev1.EventSource{Component: component}),
	}
}

// Shutdown writes the events recorded so far, waiting at most
// DefaultFlushTimeout, and then stops the broadcaster. It is
// ShutdownWithContext with that timeout.
func (r *Recorder) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultFlushTimeout)
	defer cancel()
	r.ShutdownWithContext(ctx)
}

// ShutdownWithContext stops accepting events, waits until every event
// recorded before the call has gone through the correlator and been written
// (or until ctx is done), and then shuts the broadcaster down. When it
// returns, the Recorder makes no further calls to the client, and later
// events are dropped. Only the first call has an effect; later calls wait for
// it to finish.
func (r *Recorder) ShutdownWithContext(ctx context.Context) {
	r.shutdown.Do(func() {
		r.mu.Lock()
		r.stopped = true
		r.mu.Unlock()

		// The broadcaster hands events to the sink one at a time, in the
		// order they were recorded, so once the marker reaches the sink
		// everything recorded before it has been written or given up on.
		uid := uuid.NewUUID()
		done := r.sink.addBarrier(uid)
		r.marker.Event(&corev1.ObjectReference{Kind: "FlushMarker", Name: "flush", UID: uid}, corev1.EventTypeNormal, "Flush", "flush")
		select {
		case <-done:
		case <-ctx.Done():
		}

		r.cancel()
		r.broadcaster.Shutdown()
		r.sink.close()
	})
}

// legacyRecorder is the record.EventRecorder For hands out.
type legacyRecorder struct {
	r   *Recorder
	rec record.EventRecorder
}

// Event records an event unless the Recorder has been shut down.
func (l *legacyRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	l.r.mu.RLock()
	defer l.r.mu.RUnlock()
	if !l.r.stopped {
		l.rec.Event(object, eventtype, reason, message)
	}
}

// Eventf records an event unless the Recorder has been shut down.
func (l *legacyRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.r.mu.RLock()
	defer l.r.mu.RUnlock()
	if !l.r.stopped {
		l.rec.Eventf(object, eventtype, reason, messageFmt, args...)
	}
}

// AnnotatedEventf records an event unless the Recorder has been shut down.
func (l *legacyRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	l.r.mu.RLock()
	defer l.r.mu.RUnlock()
	if !l.r.stopped {
		l.rec.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
	}
}

// recorderSink is the record.EventSink of a Recorder: a Sink that swallows
// flush markers and refuses writes once closed.
type recorderSink struct {
	sink *Sink
	gate gate

	mu       sync.Mutex
	barriers map[types.UID]chan struct{}
}

// addBarrier returns a channel that is closed when the flush marker about
// uid reaches the sink.
func (s *recorderSink) addBarrier(uid types.UID) <-chan struct{} {
	ch := make(chan struct{})
	s.mu.Lock()
	s.barriers[uid] = ch
	s.mu.Unlock()
	return ch
}

// Create stores event, or releases the barrier if event is a flush marker.
func (s *recorderSink) Create(event *corev1.Event) (*corev1.Event, error) {
	if event.Source.Component == flushComponent {
		s.mu.Lock()
		if ch, ok := s.barriers[event.InvolvedObject.UID]; ok {
			close(ch)
			delete(s.barriers, event.InvolvedObject.UID)
		}
		s.mu.Unlock()
		return event.DeepCopy(), nil
	}
	if !s.gate.enter() {
		return nil, errShutDown()
	}
	defer s.gate.exit()
	return s.sink.Create(event)
}

// Update forwards to the Sink unless closed.
func (s *recorderSink) Update(event *corev1.Event) (*corev1.Event, error) {
	if !s.gate.enter() {
		return nil, errShutDown()
	}
	defer s.gate.exit()
	return s.sink.Update(event)
}

// Patch forwards to the Sink unless closed.
func (s *recorderSink) Patch(oldEvent *corev1.Event, data []byte) (*corev1.Event, error) {
	if !s.gate.enter() {
		return nil, errShutDown()
	}
	defer s.gate.exit()
	return s.sink.Patch(oldEvent, data)
}

// close waits for calls in progress and makes later ones fail.
func (s *recorderSink) close() {
	s.gate.close()
}

// errShutDown is what sinks return once their recorder is shut down. It is a
// status error so that client-go's broadcasters drop the event rather than
// retry it.
func errShutDown() error {
	return apierrors.NewServiceUnavailable("the event recorder has been shut down; event dropped")
}

// gate lets calls through until it is closed; closing waits for the calls
// in progress.
type gate struct {
	mu     sync.RWMutex
	closed bool
}

// enter reports whether the gate is open; if so the caller must call exit
// when done.
func (g *gate) enter() bool {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return false
	}
	return true
}

// exit ends a call admitted by enter.
func (g *gate) exit() {
	g.mu.RUnlock()
}

// close waits for admitted calls to exit and refuses later ones.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

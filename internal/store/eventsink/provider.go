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
	"sync/atomic"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	recordutil "k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// DefaultFlushTimeout bounds how long Shutdown waits for recorded events to
// be written before it stops recording anyway.
const DefaultFlushTimeout = 10 * time.Second

// eventsSettle is how long the events.k8s.io/v1 pipeline must have been idle
// before Shutdown gives up on an event it accepted but never saw written
// (dropped by the broadcaster); see Provider.ShutdownWithContext.
const eventsSettle = 100 * time.Millisecond

// Provider implements controller-runtime's recorder.Provider, the interface
// through which a Manager hands event recorders to reconcilers, on top of a
// client.Client, so reconcilers can be given the same recorders in file mode
// as on a cluster:
//
//   - GetEventRecorder returns a recorder.EventRecorder writing
//     events.k8s.io/v1 Events through client-go's events broadcaster,
//     StartRecording's series and an
//     EventsSink, which stores them as core/v1 Events.
//   - GetEventRecorderFor, which recorder.Provider still requires, returns a
//     record.EventRecorder that records through the same events.k8s.io/v1
//     pipeline, with the reason as the action.
//
// Call Shutdown when done.
type Provider struct {
	scheme *runtime.Scheme

	broadcaster events.EventBroadcaster
	sink        *providerEventsSink
	cancel      context.CancelFunc
	activity    *activity

	// mu guards stopped; emitting holds it for reading.
	mu       sync.RWMutex
	stopped  bool
	shutdown sync.Once
}

var _ recorder.Provider = (*Provider)(nil)

// NewProvider starts the broadcasters of a Provider writing with c. scheme
// resolves the kind of the objects events are about.
func NewProvider(c client.Client, scheme *runtime.Scheme) *Provider {
	return NewProviderForSink(NewEventsSink(c), scheme)
}

// NewProviderForSink is NewProvider writing to any events.EventSink, such
// as client-go's EventSinkImpl on a cluster: a new note is an Event of its
// own there too (see StartRecording), where a Manager's own recorders fold
// it into the first.
func NewProviderForSink(target events.EventSink, scheme *runtime.Scheme) *Provider {
	act := &activity{}
	sink := &providerEventsSink{sink: target, activity: act}
	broadcaster := events.NewBroadcaster(sink)
	ctx, cancel := context.WithCancel(context.Background())
	p := &Provider{
		scheme:      scheme,
		broadcaster: broadcaster,
		sink:        sink,
		cancel:      cancel,
		activity:    act,
	}
	// Count the events once written, so Shutdown can tell when all
	// recorded events have been.
	if err := startRecording(ctx, broadcaster, sink, act.distributed); err != nil {
		// Only possible on a shut-down broadcaster.
		panic(err)
	}
	return p
}

// GetEventRecorderFor returns a record.EventRecorder with reporting
// controller name, for callers of the deprecated core/v1 recorder API. Its
// events go through the events.k8s.io/v1 pipeline of GetEventRecorder, each
// with its reason as its action.
//
// Deprecated: use GetEventRecorder.
func (p *Provider) GetEventRecorderFor(name string) record.EventRecorder {
	return legacyRecorder{rec: p.GetEventRecorder(name)}
}

// GetEventRecorder returns a recorder of events.k8s.io/v1 Events with
// reportingController name and reportingInstance name-hostname, like a
// Manager's GetEventRecorder. It supports Eventf and AnnotatedEventf.
func (p *Provider) GetEventRecorder(name string) recorder.EventRecorder {
	rec := p.broadcaster.NewRecorder(p.scheme, name)
	annotated, _ := rec.(events.AnnotatedEventRecorder)
	return &eventsRecorder{p: p, rec: rec, annotated: annotated}
}

// Shutdown is ShutdownWithContext with a DefaultFlushTimeout timeout.
func (p *Provider) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultFlushTimeout)
	defer cancel()
	p.ShutdownWithContext(ctx)
}

// ShutdownWithContext stops accepting events, writes what has been recorded
// and stops both broadcasters; when it returns the Provider makes no further
// calls to the client. ctx bounds the wait for pending writes.
//
// The Provider waits until every accepted event has been written (each
// occurrence of a series is written at once, see StartRecording) and no
// write is in progress; an event dropped on the way ends the wait after a
// short settling period without activity.
func (p *Provider) ShutdownWithContext(ctx context.Context) {
	p.shutdown.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()

		p.activity.wait(ctx, eventsSettle)

		p.cancel()
		p.broadcaster.Shutdown()
		p.sink.close()
	})
}

// eventsRecorder is the recorder.EventRecorder GetEventRecorder hands out.
type eventsRecorder struct {
	p         *Provider
	rec       events.EventRecorder
	annotated events.AnnotatedEventRecorder
}

// Eventf records an event unless the Provider has been shut down.
func (e *eventsRecorder) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	e.p.emit(regarding, eventtype, func() {
		e.rec.Eventf(regarding, related, eventtype, reason, action, note, args...)
	})
}

// AnnotatedEventf records an event with annotations unless the Provider has
// been shut down.
func (e *eventsRecorder) AnnotatedEventf(regarding runtime.Object, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any) {
	e.p.emit(regarding, eventtype, func() {
		if e.annotated == nil {
			e.rec.Eventf(regarding, related, eventtype, reason, action, note, args...)
			return
		}
		e.annotated.AnnotatedEventf(regarding, related, annotations, eventtype, reason, action, note, args...)
	})
}

// legacyRecorder adapts the recorder of GetEventRecorder to the core/v1
// record.EventRecorder interface.
type legacyRecorder struct {
	rec recorder.EventRecorder
}

// Event records an event whose action is its reason.
func (l legacyRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	l.rec.Eventf(object, nil, eventtype, reason, reason, "%s", message)
}

// Eventf records an event whose action is its reason.
func (l legacyRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.rec.Eventf(object, nil, eventtype, reason, reason, messageFmt, args...)
}

// AnnotatedEventf records an event with annotations whose action is its reason.
func (l legacyRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	l.rec.AnnotatedEventf(object, nil, annotations, eventtype, reason, reason, messageFmt, args...)
}

// emit runs record unless the Provider has been shut down, counting the
// event if client-go's recorder will queue it (it drops events it cannot
// reference or whose type is neither Normal nor Warning).
func (p *Provider) emit(regarding runtime.Object, eventtype string, record func()) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.stopped {
		return
	}
	if _, err := reference.GetReference(p.scheme, regarding); err == nil && recordutil.ValidateEventType(eventtype) {
		p.activity.accepted()
	}
	record()
}

// activity tracks the events.k8s.io/v1 pipeline so Shutdown can tell when it
// has drained.
type activity struct {
	nAccepted    atomic.Int64
	nDistributed atomic.Int64
	nInflight    atomic.Int64
	lastNanos    atomic.Int64
}

// accepted notes an event handed to client-go's recorder.
func (a *activity) accepted() {
	a.nAccepted.Add(1)
	a.touch()
}

// distributed notes an event that left the broadcaster's queue and was
// written (or dropped).
func (a *activity) distributed() {
	a.nDistributed.Add(1)
	a.touch()
}

// begin notes the start of a sink call.
func (a *activity) begin() {
	a.nInflight.Add(1)
	a.touch()
}

// end notes the end of a sink call.
func (a *activity) end() {
	a.touch()
	a.nInflight.Add(-1)
}

// touch records that something happened now.
func (a *activity) touch() {
	a.lastNanos.Store(time.Now().UnixNano())
}

// wait returns once every accepted event has been distributed (written, or
// given up on) and no sink call is in progress; or, when an event was
// dropped on the way (client-go's broadcaster drops when its queue is full),
// once no sink call is in progress and nothing has happened for settle; or
// when ctx is done. The one flush of tether's recorders: the CLI's and a
// Manager's alike.
func (a *activity) wait(ctx context.Context, settle time.Duration) {
	if a.nAccepted.Load() == 0 {
		return
	}
	ticker := time.NewTicker(2 * time.Millisecond)
	defer ticker.Stop()
	for {
		if a.nInflight.Load() == 0 {
			if a.nDistributed.Load() >= a.nAccepted.Load() {
				return
			}
			if time.Since(time.Unix(0, a.lastNanos.Load())) >= settle {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// providerEventsSink is the events.EventSink of a Provider: an EventsSink
// that reports its activity and refuses writes once closed.
type providerEventsSink struct {
	sink     events.EventSink
	activity *activity
	gate     gate
}

// Create forwards to the EventsSink unless closed.
func (s *providerEventsSink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	if !s.enter() {
		return nil, errShutDown()
	}
	defer s.exit()
	return s.sink.Create(ctx, event)
}

// Update forwards to the EventsSink unless closed.
func (s *providerEventsSink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	if !s.enter() {
		return nil, errShutDown()
	}
	defer s.exit()
	return s.sink.Update(ctx, event)
}

// Patch forwards to the EventsSink unless closed.
func (s *providerEventsSink) Patch(ctx context.Context, oldEvent *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if !s.enter() {
		return nil, errShutDown()
	}
	defer s.exit()
	return s.sink.Patch(ctx, oldEvent, data)
}

// enter admits a call through the gate and counts it as in progress.
func (s *providerEventsSink) enter() bool {
	if !s.gate.enter() {
		return false
	}
	s.activity.begin()
	return true
}

// exit ends a call admitted by enter.
func (s *providerEventsSink) exit() {
	s.activity.end()
	s.gate.exit()
}

// close waits for calls in progress and makes later ones fail.
func (s *providerEventsSink) close() {
	s.gate.close()
}

// errShutDown is what the sink returns once its Provider is shut down. It is
// a status error so that client-go's broadcaster drops the event rather than
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

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

package cli

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	recordutil "k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"

	"github.com/tether-dev/tether/internal/store/eventsink"
)

// cliComponent is the reportingController of the CLI verbs' Events.
const cliComponent = "tether-cli"

// eventFlushTimeout bounds how long Close waits for Events to be written.
const eventFlushTimeout = 5 * time.Second

// Recorder returns the recorder of the verb's Events, created on first use:
// client-go's events.k8s.io/v1 broadcaster writing to the API server in
// cluster mode, and to the store through eventsink's EventsSink on the
// local store. Close writes what was recorded before it returns.
func (b *Backend) Recorder() (events.EventRecorder, error) {
	b.eventsOnce.Do(func() {
		var sink events.EventSink
		if b.RESTConfig != nil {
			cs, err := kubernetes.NewForConfig(b.RESTConfig)
			if err != nil {
				b.eventsErr = err
				return
			}
			sink = &events.EventSinkImpl{Interface: cs.EventsV1()}
		} else {
			sink = eventsink.NewEventsSink(b.Client)
		}
		b.events = newFlushingRecorder(sink, b.Scheme, cliComponent)
	})
	if b.eventsErr != nil {
		return nil, b.eventsErr
	}
	return b.events, nil
}

// flushEvents waits until the recorded Events are written, or the timeout.
func (b *Backend) flushEvents() {
	if b.events == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventFlushTimeout)
	defer cancel()
	b.events.flush(ctx)
}

// flushingRecorder is client-go's events recorder, writing with
// eventsink.StartRecording (a new note is an Event of its own) to a sink
// that counts its calls, so that a short-lived process can wait for its Events:
// the broadcaster writes each one from a goroutine of its own.
type flushingRecorder struct {
	rec         events.EventRecorder
	scheme      *runtime.Scheme
	broadcaster events.EventBroadcaster
	cancel      context.CancelFunc
	// accepted counts Events handed to the broadcaster; done counts sink
	// calls that ended; inflight those under way.
	accepted, done, inflight atomic.Int64
	lastNanos                atomic.Int64
	shutdown                 sync.Once
}

func newFlushingRecorder(sink events.EventSink, scheme *runtime.Scheme, component string) *flushingRecorder {
	f := &flushingRecorder{scheme: scheme}
	f.broadcaster = events.NewBroadcaster(sink)
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	// Only a shut-down broadcaster refuses to start.
	_ = eventsink.StartRecording(ctx, f.broadcaster, &countingSink{sink: sink, f: f})
	f.rec = f.broadcaster.NewRecorder(scheme, component)
	return f
}

// Eventf records an Event, counting it when client-go will send it (it
// drops Events it cannot reference or of an unknown type).
func (f *flushingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if _, err := reference.GetReference(f.scheme, regarding); err == nil && recordutil.ValidateEventType(eventtype) {
		f.accepted.Add(1)
		f.touch()
	}
	f.rec.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

func (f *flushingRecorder) touch() { f.lastNanos.Store(time.Now().UnixNano()) }

// flush returns once every accepted Event has been written (each is one
// write or more), or once no write is under way and nothing happened for
// a moment (an Event dropped); or when ctx ends. It then stops the
// broadcaster.
func (f *flushingRecorder) flush(ctx context.Context) {
	f.shutdown.Do(func() {
		defer func() {
			f.cancel()
			f.broadcaster.Shutdown()
		}()
		const settle = 200 * time.Millisecond
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			n := f.accepted.Load()
			if n == 0 || f.done.Load() >= n && f.inflight.Load() == 0 {
				return
			}
			if f.inflight.Load() == 0 && time.Since(time.Unix(0, f.lastNanos.Load())) >= settle {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

// countingSink forwards to sink and counts the calls for flush.
type countingSink struct {
	sink events.EventSink
	f    *flushingRecorder
}

func (s *countingSink) call(do func() (*eventsv1.Event, error)) (*eventsv1.Event, error) {
	s.f.inflight.Add(1)
	s.f.touch()
	defer func() {
		s.f.touch()
		s.f.done.Add(1)
		s.f.inflight.Add(-1)
	}()
	return do()
}

// Create forwards to the sink.
func (s *countingSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.call(func() (*eventsv1.Event, error) { return s.sink.Create(ctx, e) })
}

// Update forwards to the sink.
func (s *countingSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.call(func() (*eventsv1.Event, error) { return s.sink.Update(ctx, e) })
}

// Patch forwards to the sink.
func (s *countingSink) Patch(ctx context.Context, e *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return s.call(func() (*eventsv1.Event, error) { return s.sink.Patch(ctx, e, data) })
}

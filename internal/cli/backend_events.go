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
	"time"

	"k8s.io/client-go/tools/events"

	"github.com/tether-dev/tether/internal/store/eventsink"
)

// cliComponent is the reportingController of the CLI verbs' Events.
const cliComponent = "tether-cli"

// eventFlushTimeout bounds how long Close waits for Events to be written.
const eventFlushTimeout = 5 * time.Second

// Recorder returns the recorder of the verb's Events, created on first use:
// eventsink's Provider writing to the sink the Backend's site chose
// (client-go's events.k8s.io/v1 sink on a cluster, eventsink's EventsSink
// on the local store). Close writes what was recorded before it returns.
func (b *Backend) Recorder() (events.EventRecorder, error) {
	b.eventsOnce.Do(func() {
		var sink events.EventSink = eventsink.NewEventsSink(b.Client)
		if b.eventSink != nil {
			if sink, b.eventsErr = b.eventSink(); b.eventsErr != nil {
				return
			}
		}
		b.events = eventsink.NewProviderForSink(sink, b.Scheme)
		b.recorder = b.events.GetEventRecorder(cliComponent)
	})
	if b.eventsErr != nil {
		return nil, b.eventsErr
	}
	return b.recorder, nil
}

// flushEvents waits until the recorded Events are written, or the timeout.
func (b *Backend) flushEvents() {
	if b.events == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventFlushTimeout)
	defer cancel()
	b.events.ShutdownWithContext(ctx)
}

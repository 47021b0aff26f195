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

// Package eventsink records Kubernetes Events into any controller-runtime
// client.Client, such as tether's file-backed store, instead of a real API
// server.
//
// The package does not re-implement event correlation. It plugs sinks into
// client-go's own broadcasters, so stored events get exactly the semantics
// they would get on a cluster:
//
//   - Sink implements record.EventSink (k8s.io/client-go/tools/record) for
//     core/v1 Events. Recorder puts a record.NewBroadcaster in front of it, so
//     client-go's EventCorrelator applies: identical events are deduplicated
//     into one Event whose count is raised through a strategic merge patch;
//     from the 10th similar event (same source, object, type and reason,
//     different message) within 10 minutes on, events are combined into one
//     "(combined from similar events): ..." Event; and a token bucket per
//     source, object and event type (burst 25, one refill every 5 minutes)
//     filters spam.
//   - EventsSink implements events.EventSink (k8s.io/client-go/tools/events)
//     for events.k8s.io/v1 Events and stores them as core/v1 Events, the way
//     the API server keeps both API versions in a single resource. Provider
//     puts an events.NewBroadcaster in front of it, so client-go's series
//     logic applies (an isomorphic event turns the first one into a series
//     with a count).
//
// Neither sink needs the store to understand strategic merge patches: a
// patch is applied in memory to the currently stored Event with
// k8s.io/apimachinery/pkg/util/strategicpatch and written back with
// client.Update under the stored resourceVersion, retrying on conflicts.
//
// In controller-runtime v0.25 the recorder.Provider interface, which the
// Manager implements, hands out two kinds of recorder:
// GetEventRecorder(name) returns a recorder.EventRecorder (client-go's
// events.EventRecorder plus events.AnnotatedEventRecorder, writing
// events.k8s.io/v1 Events) and is the preferred method, while the
// deprecated GetEventRecorderFor(name) returns a record.EventRecorder that
// writes core/v1 Events. Both always post to the API server the Manager was
// built for. Provider implements the same interface on top of a
// client.Client, so reconcilers written against recorder.Provider (or
// either recorder interface) can run unchanged in file mode.
package eventsink

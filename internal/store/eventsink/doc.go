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
// EventsSink implements events.EventSink (k8s.io/client-go/tools/events)
// for events.k8s.io/v1 Events and stores them as core/v1 Events, the way
// the API server keeps both API versions in a single resource. Provider
// puts an events.NewBroadcaster in front of it and writes its Events with
// StartRecording, which folds a repeat into a series only when its note is
// the same too, as Kubernetes' core/v1 event correlator keys repeats by
// their message (client-go's series keep the first note for all), and
// writes every occurrence at once. The series are strategic merge patches
// that EventsSink sends on to the client.
//
// In controller-runtime v0.25 the recorder.Provider interface, which the
// Manager implements, hands out recorders through GetEventRecorder(name): a
// recorder.EventRecorder (client-go's events.EventRecorder plus
// events.AnnotatedEventRecorder). Provider implements the same interface on
// top of a client.Client, so reconcilers written against recorder.Provider
// run unchanged in file mode. The deprecated GetEventRecorderFor, which the
// interface still requires, records through the same events.k8s.io/v1
// pipeline; there is no core/v1 recorder pipeline.
package eventsink

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

// Package lazylog keeps a logger's values until something is logged.
//
// controller-runtime derives a logger for every reconcile (the
// controller's, then the object's kind, namespace and name, then the
// reconcile's ID), and zap encodes each WithValues at once into a buffer
// of its own: at 61,000 objects a restart of tether run allocated 164 MB
// so, for reconciles that mostly log nothing. Wrap defers that encoding to
// the calls that log.
package lazylog

import "github.com/go-logr/logr"

// Wrap returns log with its WithValues kept, not passed to its sink,
// until an Info or Error that is enabled: they then go first among that
// call's values, in the order they were given, which is where a sink such
// as zap's writes values given to WithValues.
func Wrap(log logr.Logger) logr.Logger {
	if log.GetSink() == nil {
		return log
	}
	return logr.New(&sink{inner: log.GetSink()})
}

// sink is a logr.LogSink that holds the values of WithValues.
type sink struct {
	inner logr.LogSink
	// values are the WithValues not yet given to inner: never appended to
	// in place once shared (see WithValues).
	values []any
}

var (
	_ logr.LogSink          = (*sink)(nil)
	_ logr.CallDepthLogSink = (*sink)(nil)
)

// Init passes the runtime information on.
func (s *sink) Init(info logr.RuntimeInfo) { s.inner.Init(info) }

// Enabled is the inner sink's.
func (s *sink) Enabled(level int) bool { return s.inner.Enabled(level) }

// Info logs with the kept values first.
func (s *sink) Info(level int, msg string, keysAndValues ...any) {
	s.inner.Info(level, msg, s.with(keysAndValues)...)
}

// Error logs with the kept values first.
func (s *sink) Error(err error, msg string, keysAndValues ...any) {
	s.inner.Error(err, msg, s.with(keysAndValues)...)
}

func (s *sink) with(keysAndValues []any) []any {
	if len(s.values) == 0 {
		return keysAndValues
	}
	all := make([]any, 0, len(s.values)+len(keysAndValues))
	return append(append(all, s.values...), keysAndValues...)
}

// WithValues keeps keysAndValues after the values kept so far.
func (s *sink) WithValues(keysAndValues ...any) logr.LogSink {
	// A new array each time: sinks derived from one never share a tail.
	values := make([]any, 0, len(s.values)+len(keysAndValues))
	values = append(append(values, s.values...), keysAndValues...)
	return &sink{inner: s.inner, values: values}
}

// WithName is the inner sink's, with the same values kept.
func (s *sink) WithName(name string) logr.LogSink {
	return &sink{inner: s.inner.WithName(name), values: s.values}
}

// WithCallDepth passes the depth on to an inner sink that takes it.
func (s *sink) WithCallDepth(depth int) logr.LogSink {
	inner := s.inner
	if cd, ok := inner.(logr.CallDepthLogSink); ok {
		inner = cd.WithCallDepth(depth)
	}
	return &sink{inner: inner, values: s.values}
}

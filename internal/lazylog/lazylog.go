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

// Package lazylog wraps a logr.Logger so that WithValues costs nothing
// until a line is written. controller-runtime adds the controller, the
// object and a reconcile ID to a logger at every reconcile, and zap
// encodes such values as soon as they are added: at a start-up wave of
// 10,000 Hooks that was about 5% of `tether run`'s CPU, for log lines that
// are almost never written (they are V(1)). The wrapper keeps the values
// and hands them to the wrapped sink with each line it writes, before the
// line's own, which is the order the sink writes values added with
// WithValues in: the output is the same.
package lazylog

import "github.com/go-logr/logr"

// Wrap returns log with WithValues deferred to the lines written.
func Wrap(log logr.Logger) logr.Logger {
	s := log.GetSink()
	if s == nil {
		return log
	}
	// The sink was initialised for the logger's own frame; the wrapper's
	// methods are one more between the caller and it.
	if cd, ok := s.(logr.CallDepthLogSink); ok {
		s = cd.WithCallDepth(1)
	}
	return logr.New(&sink{base: s})
}

// sink defers WithValues of base: values holds what was added since, in
// order; it is never appended to in place, as sinks derived from one
// share it.
type sink struct {
	base   logr.LogSink
	values []any
}

// Init does nothing: base was initialised when its logger was made.
func (s *sink) Init(logr.RuntimeInfo) {}

// Enabled is base's.
func (s *sink) Enabled(level int) bool { return s.base.Enabled(level) }

// Info writes with the deferred values first.
func (s *sink) Info(level int, msg string, keysAndValues ...any) {
	if !pairs(keysAndValues) {
		// The base reports malformed values of a line with the values
		// added before; they must be added first, not written with them.
		s.applied().Info(level, msg, keysAndValues...)
		return
	}
	s.base.Info(level, msg, s.with(keysAndValues)...)
}

// Error writes with the deferred values first.
func (s *sink) Error(err error, msg string, keysAndValues ...any) {
	if !pairs(keysAndValues) {
		s.applied().Error(err, msg, keysAndValues...)
		return
	}
	s.base.Error(err, msg, s.with(keysAndValues)...)
}

// applied is base with the deferred values added to it.
func (s *sink) applied() logr.LogSink {
	if len(s.values) == 0 {
		return s.base
	}
	return s.base.WithValues(s.values...)
}

func (s *sink) with(keysAndValues []any) []any {
	if len(s.values) == 0 {
		return keysAndValues
	}
	return append(s.values[:len(s.values):len(s.values)], keysAndValues...)
}

// WithValues defers well-formed pairs. Anything else (an odd count, a key
// that is not a string) is added to base at once, as before, so that the
// base reports it as it would have and it pairs with nothing of a line.
func (s *sink) WithValues(keysAndValues ...any) logr.LogSink {
	if !pairs(keysAndValues) {
		return &sink{base: s.applied().WithValues(keysAndValues...)}
	}
	return &sink{base: s.base, values: append(s.values[:len(s.values):len(s.values)], keysAndValues...)}
}

// WithName is base's, applied at once: a name is cheap, and it does not
// depend on the values' order.
func (s *sink) WithName(name string) logr.LogSink {
	return &sink{base: s.base.WithName(name), values: s.values}
}

// WithCallDepth passes the depth to base when it takes one.
func (s *sink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.base.(logr.CallDepthLogSink); ok {
		return &sink{base: cd.WithCallDepth(depth), values: s.values}
	}
	return s
}

func pairs(keysAndValues []any) bool {
	if len(keysAndValues)%2 != 0 {
		return false
	}
	for i := 0; i < len(keysAndValues); i += 2 {
		if _, ok := keysAndValues[i].(string); !ok {
			return false
		}
	}
	return true
}

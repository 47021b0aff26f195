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

package lazylog_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tether-dev/tether/internal/lazylog"
)

// newZap is a zapr logger writing JSON lines without timestamps into buf,
// with the caller, and a stack trace from Error, at verbosity 1.
func newZap(buf *bytes.Buffer) logr.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = ""
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(buf), zapcore.Level(-1))
	return zapr.NewLogger(zap.New(core, zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel)))
}

// TestWrapWritesWhatTheLoggerWrites checks that every sequence of logr
// calls writes, through the wrapper, the very bytes it writes without it:
// values, names, levels, errors, malformed values, the caller and the
// stack trace.
func TestWrapWritesWhatTheLoggerWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  func(l logr.Logger)
	}{
		{"no values", func(l logr.Logger) { l.Info("plain", "k", 1) }},
		{"values then a line", func(l logr.Logger) { l.WithValues("a", 1, "b", "two").Info("line", "c", 3.5) }},
		{"nested values and names", func(l logr.Logger) {
			l = l.WithName("ctrl").WithValues("controller", "hook")
			l = l.WithValues("Hook", map[string]string{"name": "x"}).WithName("sub")
			l.WithValues("reconcileID", "abc").Info("reconciled", "requeue", true)
		}},
		{"siblings share no values", func(l logr.Logger) {
			base := l.WithValues("a", 1)
			one, two := base.WithValues("b", 2), base.WithValues("c", 3)
			one.Info("one")
			two.Info("two")
			base.Info("base")
		}},
		{"levels", func(l logr.Logger) {
			l = l.WithValues("a", 1)
			l.V(1).Info("debug", "d", 1)
			l.V(2).Info("hidden", "d", 2)
		}},
		{"error with a stack trace", func(l logr.Logger) {
			l.WithValues("a", 1).Error(errors.New("boom"), "failed", "b", 2)
		}},
		{"odd values", func(l logr.Logger) { l.WithValues("dangling").Info("line", "k", "v") }},
		{"a key that is not a string", func(l logr.Logger) { l.WithValues(7, "seven").Info("line", "k", "v") }},
		{"odd values on a line", func(l logr.Logger) { l.WithValues("a", 1).Info("line", "dangling") }},
		{"call depth", func(l logr.Logger) { l.WithCallDepth(1).WithValues("a", 1).Info("from the caller's caller") }},
		{"duplicate keys", func(l logr.Logger) { l.WithValues("a", 1).WithValues("a", 2).Info("line", "a", 3) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eager, lazy bytes.Buffer
			for _, l := range []logr.Logger{newZap(&eager), lazylog.Wrap(newZap(&lazy))} {
				emit(l, tc.log)
			}
			if eager.String() != lazy.String() {
				t.Errorf("through the wrapper:\n%s\nwithout:\n%s", lazy.String(), eager.String())
			}
			if eager.Len() == 0 {
				t.Error("nothing was written")
			}
		})
	}
}

// emit runs log on l from one call site, so that both loggers see the
// same caller.
func emit(l logr.Logger, log func(logr.Logger)) { log(l) }

// BenchmarkReconcileLogger is what controller-runtime does to the logger
// at each reconcile (the object's values, then the reconcile ID), and a
// V(1) line that is not written.
func BenchmarkReconcileLogger(b *testing.B) {
	for _, bc := range []struct {
		name string
		wrap func(logr.Logger) logr.Logger
	}{
		{"zapr", func(l logr.Logger) logr.Logger { return l }},
		{"lazylog", lazylog.Wrap},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var buf bytes.Buffer
			enc := zap.NewProductionEncoderConfig()
			core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(&buf), zapcore.InfoLevel)
			l := bc.wrap(zapr.NewLogger(zap.New(core))).WithValues("controller", "hook", "controllerGroup", "agents.tether.dev", "controllerKind", "Hook")
			b.ReportAllocs()
			for b.Loop() {
				r := l.WithValues("Hook", map[string]string{"name": "hook-00001", "namespace": "default"}, "namespace", "default", "name", "hook-00001")
				r = r.WithValues("reconcileID", "4b8f7c1e-3c1a-4c8e-9d0e-1f2a3b4c5d6e")
				r.V(1).Info("heartbeat check scheduled")
			}
		})
	}
}

// countingSink counts the WithValues calls it gets.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (s countingSink) WithValues(kv ...any) logr.LogSink {
	*s.withValues++
	return countingSink{s.LogSink.WithValues(kv...), s.withValues}
}

// TestWrapDefersValues checks that values reach the wrapped sink only when
// a line is written, or when they are malformed.
func TestWrapDefersValues(t *testing.T) {
	var buf bytes.Buffer
	n := 0
	l := lazylog.Wrap(logr.New(countingSink{newZap(&buf).GetSink(), &n}))
	r := l.WithValues("Hook", "default/x").WithValues("reconcileID", "1")
	r.V(2).Info("not written")
	if n != 0 || buf.Len() != 0 {
		t.Errorf("%d WithValues reached the sink, %d bytes written, before any line; want none", n, buf.Len())
	}
	r.Info("written")
	if n != 0 || !bytes.Contains(buf.Bytes(), []byte(`"Hook":"default/x","reconcileID":"1"`)) {
		t.Errorf("%d WithValues reached the sink; wrote %s", n, buf.String())
	}
	r.WithValues("odd")
	if n != 2 {
		t.Errorf("malformed values: %d WithValues reached the sink, want the deferred ones and them", n)
	}
}

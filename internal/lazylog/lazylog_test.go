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

package lazylog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newZap is tether run's logger writing to buf, without the time; with
// the caller too for "json+caller".
func newZap(buf *bytes.Buffer, encoder string) logr.Logger {
	cfg := zapcore.EncoderConfig{MessageKey: "msg", LevelKey: "level", NameKey: "logger", CallerKey: "caller",
		EncodeLevel: zapcore.LowercaseLevelEncoder, EncodeCaller: zapcore.ShortCallerEncoder}
	enc := zapcore.NewJSONEncoder(cfg)
	if encoder == "console" {
		enc = zapcore.NewConsoleEncoder(cfg)
	}
	opts := []zap.Opts{zap.WriteTo(buf), zap.Encoder(enc), zap.Level(zapcore.Level(-2))}
	if encoder == "json+caller" {
		opts = append(opts, zap.RawZapOpts(uberzap.AddCaller()))
	}
	return zap.New(opts...)
}

// TestWrapLogsWhatTheSinkLogs checks that a wrapped logger writes, byte
// for byte, what the logger it wraps writes, for every order of values,
// names, levels and errors the reconcilers' loggers see.
func TestWrapLogsWhatTheSinkLogs(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  func(logr.Logger)
	}{
		{"plain", func(l logr.Logger) { l.Info("hello", "a", 1) }},
		{"values then info", func(l logr.Logger) { l.WithValues("controller", "hook").Info("reconciled", "took", "1s") }},
		{"reconcile's three", func(l logr.Logger) {
			l.WithValues("controller", "hook", "controllerKind", "Hook").
				WithValues("Hook", map[string]string{"name": "a"}, "namespace", "default", "name", "a").
				WithValues("reconcileID", "1234").Info("status written")
		}},
		{"name between values", func(l logr.Logger) {
			l.WithValues("a", 1).WithName("hook").WithValues("b", 2).WithName("inner").Info("m", "c", 3)
		}},
		{"error", func(l logr.Logger) { l.WithValues("a", 1).Error(errors.New("boom"), "failed", "b", 2) }},
		{"levels", func(l logr.Logger) {
			v := l.WithValues("a", 1)
			v.V(1).Info("debug")
			v.V(3).Info("too verbose: not written")
		}},
		{"siblings share no tail", func(l logr.Logger) {
			base := l.WithValues("a", 1)
			x, y := base.WithValues("x", 1), base.WithValues("y", 2)
			x.Info("x")
			y.Info("y")
			base.Info("base")
		}},
		{"duplicate keys", func(l logr.Logger) { l.WithValues("k", 1).WithValues("k", 2).Info("m", "k", 3) }},
	} {
		for _, encoder := range []string{"json", "console", "json+caller"} {
			t.Run(tc.name+"/"+encoder, func(t *testing.T) {
				var direct, wrapped bytes.Buffer
				tc.log(newZap(&direct, encoder))
				tc.log(Wrap(newZap(&wrapped, encoder)))
				if direct.String() != wrapped.String() {
					t.Fatalf("wrapped logger wrote\n%s\nthe logger it wraps\n%s", wrapped.String(), direct.String())
				}
				if direct.Len() == 0 {
					t.Fatal("nothing written")
				}
			})
		}
	}
}

// BenchmarkReconcileLogger derives a logger as controller-runtime does for
// each reconcile and logs nothing with it, as most reconciles do.
func BenchmarkReconcileLogger(b *testing.B) {
	for _, wrap := range []bool{false, true} {
		name := "zap"
		if wrap {
			name = "lazylog"
		}
		b.Run(name, func(b *testing.B) {
			var buf bytes.Buffer
			l := newZap(&buf, "json")
			if wrap {
				l = Wrap(l)
			}
			ctl := l.WithValues("controller", "hook", "controllerGroup", "agents.tether.dev", "controllerKind", "Hook")
			b.ReportAllocs()
			for b.Loop() {
				r := ctl.WithValues("Hook", "default/a", "namespace", "default", "name", "a").WithValues("reconcileID", "0b5e")
				r.V(1).Info("not written")
			}
		})
	}
}

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

package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
)

func TestLoad(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	cases := []struct {
		name    string
		file    string // content of $TETHER_HOME/config.yaml; "-" for none
		check   func(*config.Config) bool
		wantErr string
	}{
		{
			name: "no file gives the defaults", file: "-",
			check: func(c *config.Config) bool {
				return c.StaleAfter.Duration == 5*time.Minute && c.Retention.Completed.Duration == 30*24*time.Hour &&
					c.Retention.Abandoned.Duration == 7*24*time.Hour && c.MaxCheckpoints == 50 &&
					c.KeyDir == filepath.Join(home, "keys") && c.RecoveryDir == ""
			},
		},
		{
			name: "set fields override, unset keep defaults",
			file: "staleAfter: 90s\nretention:\n  abandoned: 1h\nkeyDir: k\nrecoveryDir: /abs/rec\n",
			check: func(c *config.Config) bool {
				return c.StaleAfter.Duration == 90*time.Second && c.Retention.Abandoned.Duration == time.Hour &&
					c.Retention.Failed.Duration == 30*24*time.Hour && c.KeyDir == filepath.Join(home, "k") && c.RecoveryDir == "/abs/rec"
			},
		},
		{name: "unknown field", file: "staleAfter: 1m\nstaleafter2: 1m\n", wantErr: "staleafter2"},
		{name: "negative duration", file: "retention:\n  failed: -1s\n", wantErr: "retention.failed"},
		{name: "bad duration", file: "checkpointInterval: soon\n", wantErr: "soon"},
		{name: "negative count", file: "maxCheckpoints: -2\n", wantErr: "maxCheckpoints"},
		{name: "bad yaml", file: "staleAfter: [1m\n", wantErr: "config.yaml:1: did not find expected"},
	}
	path := filepath.Join(home, config.FileName)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(path)
			if c.file != "-" {
				if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := config.Load("")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v; want one naming %q and the file", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(cfg) {
				t.Errorf("config %+v", cfg)
			}
		})
	}
	if _, err := config.Load(filepath.Join(home, "missing.yaml")); err == nil {
		t.Error("an explicitly named missing config file was accepted")
	}
}

func TestEffective(t *testing.T) {
	cfg := config.Default("/home")
	if err := config.Parse([]byte("retention:\n  failed: 1h\n"), "/home", cfg); err != nil {
		t.Fatal(err)
	}
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	spec := &v1.HookSpec{
		StaleAfter:     d(2 * time.Second),
		MaxCheckpoints: 7,
		Retention:      &v1.RetentionPolicy{Completed: d(3 * time.Second)},
	}
	e := cfg.Effective(spec)
	want := config.Effective{
		StaleAfter: 2 * time.Second, CheckpointInterval: 5 * time.Minute, MaxCheckpoints: 7,
		CompletedTTL: 3 * time.Second, FailedTTL: time.Hour, AbandonedTTL: 7 * 24 * time.Hour,
		Sources: config.Sources{
			StaleAfter: config.FromSpec, CheckpointInterval: config.FromBuiltin, MaxCheckpoints: config.FromSpec,
			CompletedTTL: config.FromSpec, FailedTTL: config.FromFile, AbandonedTTL: config.FromBuiltin,
		},
	}
	if e != want {
		t.Errorf("Effective = %+v, want %+v", e, want)
	}
	if got := cfg.Effective(&v1.HookSpec{}); got.StaleAfter != 5*time.Minute || got.FailedTTL != time.Hour {
		t.Errorf("Effective of an empty spec = %+v", got)
	}
	for s, want := range map[v1.HookState]time.Duration{v1.HookCompleted: 3 * time.Second, v1.HookFailed: time.Hour, v1.HookAbandoned: 7 * 24 * time.Hour} {
		if ttl, ok := e.TTL(s); !ok || ttl != want {
			t.Errorf("TTL(%s) = %s, %v; want %s", s, ttl, ok, want)
		}
	}
	if _, ok := e.TTL(v1.HookStepRunning); ok {
		t.Error("step_running has a TTL")
	}
}

func TestSources(t *testing.T) {
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	cases := []struct {
		name string
		file string // config file content; "" for none
		spec v1.HookSpec
		want config.Sources
	}{
		{
			name: "no file, empty spec: built in",
			want: config.Sources{StaleAfter: config.FromBuiltin, CheckpointInterval: config.FromBuiltin, MaxCheckpoints: config.FromBuiltin,
				CompletedTTL: config.FromBuiltin, FailedTTL: config.FromBuiltin, AbandonedTTL: config.FromBuiltin},
		},
		{
			name: "the file, even at the built-in value",
			file: "staleAfter: 5m\ncheckpointInterval: 1m\nmaxCheckpoints: 9\nretention:\n  abandoned: 1h\n",
			want: config.Sources{StaleAfter: config.FromFile, CheckpointInterval: config.FromFile, MaxCheckpoints: config.FromFile,
				CompletedTTL: config.FromBuiltin, FailedTTL: config.FromBuiltin, AbandonedTTL: config.FromFile},
		},
		{
			name: "the spec over the file",
			file: "staleAfter: 1m\nmaxCheckpoints: 9\n",
			spec: v1.HookSpec{StaleAfter: d(time.Second), CheckpointInterval: d(time.Second), MaxCheckpoints: 2,
				Retention: &v1.RetentionPolicy{Failed: d(time.Second)}},
			want: config.Sources{StaleAfter: config.FromSpec, CheckpointInterval: config.FromSpec, MaxCheckpoints: config.FromSpec,
				CompletedTTL: config.FromBuiltin, FailedTTL: config.FromSpec, AbandonedTTL: config.FromBuiltin},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv(config.HomeEnv, home)
			path := filepath.Join(home, config.FileName)
			if c.file != "" {
				if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := config.Load("")
			if err != nil {
				t.Fatal(err)
			}
			if wantFile := map[bool]string{true: path, false: ""}[c.file != ""]; cfg.File != wantFile {
				t.Errorf("File = %q, want %q", cfg.File, wantFile)
			}
			if got := cfg.Effective(&c.spec).Sources; got != c.want {
				t.Errorf("Sources = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestAgentLoop(t *testing.T) {
	cases := []struct {
		yaml                 string
		consecutive, perHook int32
		err                  string
	}{
		{yaml: "", consecutive: config.DefaultAgentMaxConsecutive, perHook: config.DefaultAgentMaxPerHook},
		{yaml: "agentLoop:\n  maxConsecutive: 2\n", consecutive: 2, perHook: config.DefaultAgentMaxPerHook},
		{yaml: "agentLoop:\n  maxPerHook: 7\n", consecutive: config.DefaultAgentMaxConsecutive, perHook: 7},
		{yaml: "agentLoop:\n  maxConsecutive: -1\n", err: "agentLoop.maxConsecutive"},
		{yaml: "agentLoop:\n  maxPerHook: -1\n", err: "agentLoop.maxPerHook"},
		{yaml: "agentLoop:\n  maxTurns: 1\n", err: "maxTurns"},
	}
	for _, c := range cases {
		cfg := config.Default("/home")
		err := config.Parse([]byte(c.yaml), "/home", cfg)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want one naming %s", c.yaml, err, c.err)
			}
			continue
		}
		if err != nil || cfg.AgentLoop.MaxConsecutive != c.consecutive || cfg.AgentLoop.MaxPerHook != c.perHook {
			t.Errorf("%q: %+v, %v; want %d, %d", c.yaml, cfg.AgentLoop, err, c.consecutive, c.perHook)
		}
	}
}

// TestSeveralBadDurationsEachWithItsOwnValue breaks two or three durations
// of the file at once and requires each to be named with its own line and
// value, in the order of the file.
func TestSeveralBadDurationsEachWithItsOwnValue(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	path := filepath.Join(home, config.FileName)
	tests := []struct {
		name, file string
		want       string
	}{
		{
			name: "staleAfter and retention.completed",
			file: "staleAfter: 1y\nretention:\n  completed: 99999999999999999999h\n",
			want: fmt.Sprintf(`tether config %s:1: staleAfter: time: unknown unit "y" in duration "1y"; line 3: retention.completed: time: invalid duration "99999999999999999999h"`, path),
		},
		{
			name: "three, in the order of the file rather than of the fields",
			file: "retention:\n  abandoned: soon\n  completed: 2562048h\ncheckpointInterval: 300\n",
			want: fmt.Sprintf(`tether config %s:2: retention.abandoned: time: invalid duration "soon"; line 3: retention.completed: time: invalid duration "2562048h"; line 4: checkpointInterval: invalid value: number, expected string`, path),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load("")
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
}

// TestDurationErrorsNameFieldAndLine sets each duration of the file to values
// that are not a duration, are out of range or overflow Go's time.Duration,
// and requires the error to say FILE:LINE: FIELD.
func TestDurationErrorsNameFieldAndLine(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	const file = "# tether defaults\nstaleAfter: 5m\ncheckpointInterval: 5m\nmaxCheckpoints: 10\nretention:\n  completed: 720h\n  failed: 720h\n  abandoned: 168h\n"
	fields := []struct {
		old, key, field string
		line            int
	}{
		{"staleAfter: 5m", "staleAfter", "staleAfter", 2},
		{"checkpointInterval: 5m", "checkpointInterval", "checkpointInterval", 3},
		{"completed: 720h", "completed", "retention.completed", 6},
		{"failed: 720h", "failed", "retention.failed", 7},
		{"abandoned: 168h", "abandoned", "retention.abandoned", 8},
	}
	values := []struct{ value, want string }{
		{"2562048h", `invalid duration "2562048h"`},
		{"99999999999999999999h", "invalid duration"},
		{"soon", `invalid duration "soon"`},
		{"8761h", "is longer than 8760h0m0s"},
		{"-1s", "is negative"},
		{"[5m]", "invalid value: array"},
		{"300", "invalid value: number"},
	}
	path := filepath.Join(home, config.FileName)
	for _, f := range fields {
		for _, v := range values {
			t.Run(f.field+"="+v.value, func(t *testing.T) {
				data := strings.Replace(file, f.old, f.key+": "+v.value, 1)
				if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
				_, err := config.Load("")
				prefix := fmt.Sprintf("tether config %s:%d: %s: ", path, f.line, f.field)
				if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), v.want) {
					t.Fatalf("error %v; want %q followed by %q", err, prefix, v.want)
				}
			})
		}
	}
}

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
					c.KeyDir == filepath.Join(home, "keys") && c.RecoveryDir == filepath.Join(home, "recovery")
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
		{name: "bad yaml", file: "staleAfter: [1m\n", wantErr: "line"},
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
	cfg.Retention.Failed = metav1.Duration{Duration: time.Hour}
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

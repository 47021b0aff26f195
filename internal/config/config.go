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

// Package config reads the tether configuration file: the defaults that a
// Hook's spec fields override (staleAfter, checkpointInterval,
// maxCheckpoints, retention) and where tether keeps its keys and recovery
// files.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/fieldpath"
)

// HomeEnv names the environment variable of tether's home directory, which
// holds the configuration file, the keys and, in cluster mode, the recovery
// files. It defaults to ~/.config/tether.
const HomeEnv = "TETHER_HOME"

// The environment a Worker gives the agent it launches, and that the agent
// side (tether agent hook, the step verbs) reads to find its task.
const (
	// HookEnv names the Hook the agent works on.
	HookEnv = "TETHER_HOOK"
	// WorkerEnv names the Worker that launched the agent.
	WorkerEnv = "TETHER_WORKER"
	// NamespaceEnv is the namespace of that Worker and its Hook.
	NamespaceEnv = "TETHER_NAMESPACE"
	// ActorEnv names who the agent verbs act for in status.history; a
	// Worker sets it to worker/NAME for the agent it launches.
	ActorEnv = "TETHER_ACTOR"
	// StoreEnv names the local store directory: every verb reads it (see
	// --store), and a Worker launched by `tether run` on the local store
	// gets it. In cluster mode a Worker's agent uses its kubeconfig instead.
	StoreEnv = "TETHER_STORE"
	// ClusterEnv, set to true, makes every verb talk to the cluster, as
	// --cluster does; a Worker's Pod gets it, with a ServiceAccount for
	// the in-cluster credentials.
	ClusterEnv = "TETHER_CLUSTER"
)

// FileName is the name of the configuration file in tether's home directory.
const FileName = "config.yaml"

// The built-in defaults, used when neither the spec nor the file sets a value.
const (
	DefaultStaleAfter         = 5 * time.Minute
	DefaultCheckpointInterval = 5 * time.Minute
	DefaultMaxCheckpoints     = 50
	DefaultCompletedTTL       = 30 * 24 * time.Hour
	DefaultFailedTTL          = 30 * 24 * time.Hour
	DefaultAbandonedTTL       = 7 * 24 * time.Hour
	// MaxDuration bounds every duration of the file, as the CRDs bound
	// every duration of a spec (see docs/api.md).
	MaxDuration = 8760 * time.Hour
	// DefaultAgentMaxConsecutive is agentLoop.maxConsecutive: how many Stop
	// continuations in a row one agent session gets. The client has no cap
	// of its own on Stop blocks: this one, the per-Hook cap and the
	// no-progress rule bound the loop.
	DefaultAgentMaxConsecutive = 6
	// DefaultAgentMaxPerHook is agentLoop.maxPerHook: how many Stop
	// continuations one Hook gets over its life, across sessions.
	DefaultAgentMaxPerHook = 100
)

// Config is the content of the configuration file. Durations are Go
// durations such as "90s", "5m" or "720h".
type Config struct {
	// StaleAfter is the default for spec.staleAfter.
	StaleAfter metav1.Duration `json:"staleAfter,omitempty"`
	// CheckpointInterval is the default for spec.checkpointInterval.
	CheckpointInterval metav1.Duration `json:"checkpointInterval,omitempty"`
	// MaxCheckpoints is the default for spec.maxCheckpoints.
	MaxCheckpoints int32 `json:"maxCheckpoints,omitempty"`
	// Retention holds the default time-to-live of terminal Hooks per state.
	Retention Retention `json:"retention,omitempty"`
	// KeyDir is the directory of the receipt signing keys; relative paths
	// are relative to the configuration file's directory.
	KeyDir string `json:"keyDir,omitempty"`
	// RecoveryDir, when set, is where `tether run --cluster` also writes
	// recovery files; unset, the operator writes none (tether recover
	// renders them from the Hook). On the local store they live in the
	// store's recovery/ directory.
	RecoveryDir string `json:"recoveryDir,omitempty"`
	// AgentLoop holds the caps of the Stop continuation loop that
	// `tether agent hook` keeps going.
	AgentLoop AgentLoop `json:"agentLoop,omitempty"`
	// Notify lists the commands `tether run` runs when something a person
	// should hear of happens (see notify.go).
	Notify []Notifier `json:"notify,omitempty"`

	// File is the configuration file the values were read from; empty
	// when there was none.
	File string `json:"-"`
	// fromFile records which defaults the file set.
	fromFile fileFields
}

// fileFields records which Hook defaults a configuration file set.
type fileFields struct {
	staleAfter, checkpointInterval, maxCheckpoints, completed, failed, abandoned bool
}

// Source tells where an effective setting came from.
type Source string

// The sources of a setting, from the most specific.
const (
	// FromSpec is a value set in the Hook's spec.
	FromSpec Source = "spec"
	// FromFile is a value from the tether configuration file.
	FromFile Source = "config file"
	// FromBuiltin is tether's built-in default.
	FromBuiltin Source = "built-in default"
)

// Sources tells where each Effective setting came from.
type Sources struct {
	// StaleAfter is the source of Effective.StaleAfter.
	StaleAfter Source
	// CheckpointInterval is the source of Effective.CheckpointInterval.
	CheckpointInterval Source
	// MaxCheckpoints is the source of Effective.MaxCheckpoints.
	MaxCheckpoints Source
	// CompletedTTL, FailedTTL and AbandonedTTL are the sources of the
	// retention settings.
	CompletedTTL, FailedTTL, AbandonedTTL Source
}

// AgentLoop holds the caps of the Stop continuation loop.
type AgentLoop struct {
	// MaxConsecutive is how many continuations in a row one session gets
	// before it may stop (default DefaultAgentMaxConsecutive).
	MaxConsecutive int32 `json:"maxConsecutive,omitempty"`
	// MaxPerHook is how many continuations a Hook gets over its life
	// (default DefaultAgentMaxPerHook).
	MaxPerHook int32 `json:"maxPerHook,omitempty"`
}

// Retention is the default time-to-live of terminal Hooks per state.
type Retention struct {
	// Completed is how long a completed Hook is kept.
	Completed metav1.Duration `json:"completed,omitempty"`
	// Failed is how long a failed Hook is kept.
	Failed metav1.Duration `json:"failed,omitempty"`
	// Abandoned is how long an abandoned Hook is kept.
	Abandoned metav1.Duration `json:"abandoned,omitempty"`
}

// Home is $TETHER_HOME, else ~/.config/tether.
func Home() (string, error) {
	if h := os.Getenv(HomeEnv); h != "" {
		return filepath.Abs(h)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding tether's home directory (set $%s): %w", HomeEnv, err)
	}
	return filepath.Join(dir, "tether"), nil
}

// Default is the configuration with every built-in default, its key and
// recovery directories under home.
func Default(home string) *Config {
	return &Config{
		StaleAfter:         metav1.Duration{Duration: DefaultStaleAfter},
		CheckpointInterval: metav1.Duration{Duration: DefaultCheckpointInterval},
		MaxCheckpoints:     DefaultMaxCheckpoints,
		Retention: Retention{
			Completed: metav1.Duration{Duration: DefaultCompletedTTL},
			Failed:    metav1.Duration{Duration: DefaultFailedTTL},
			Abandoned: metav1.Duration{Duration: DefaultAbandonedTTL},
		},
		AgentLoop: AgentLoop{MaxConsecutive: DefaultAgentMaxConsecutive, MaxPerHook: DefaultAgentMaxPerHook},
		KeyDir:    filepath.Join(home, "keys"),
	}
}

// Load reads the configuration file at path, or, when path is empty,
// $TETHER_HOME/config.yaml if it exists. Unset fields keep their defaults.
// A file named explicitly must exist; an unknown field, a negative duration
// or malformed YAML is an error naming the file and the field or line.
func Load(path string) (*Config, error) {
	home, err := Home()
	if err != nil {
		return nil, err
	}
	explicit := path != ""
	if !explicit {
		path = filepath.Join(home, FileName)
	}
	cfg := Default(home)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return cfg, nil
	case err != nil:
		return nil, fmt.Errorf("reading tether config: %w", err)
	}
	if err := Parse(data, filepath.Dir(path), cfg); err != nil {
		var ferr *fieldpath.Error
		if errors.As(err, &ferr) && ferr.Line > 0 {
			return nil, fmt.Errorf("tether config %s:%d: %w", path, ferr.Line, &fieldpath.Error{Field: ferr.Field, Err: ferr.Err, Also: ferr.Also})
		}
		return nil, fmt.Errorf("tether config %s: %w", path, err)
	}
	cfg.File = path
	return cfg, nil
}

// Parse decodes data strictly onto cfg, whose values are the defaults;
// relative directories are resolved against base.
func Parse(data []byte, base string, cfg *Config) error {
	var file Config
	root, err := fieldpath.DecodeYAML(data, &file)
	if err != nil {
		return err
	}
	invalid := func(field, format string, args ...any) error { return fieldError(root, field, format, args...) }
	if err := settleNotifiers(root, file.Notify); err != nil {
		return err
	}
	durations := []struct {
		field string
		from  metav1.Duration
		to    *metav1.Duration
		set   *bool
	}{
		{"staleAfter", file.StaleAfter, &cfg.StaleAfter, &cfg.fromFile.staleAfter},
		{"checkpointInterval", file.CheckpointInterval, &cfg.CheckpointInterval, &cfg.fromFile.checkpointInterval},
		{"retention.completed", file.Retention.Completed, &cfg.Retention.Completed, &cfg.fromFile.completed},
		{"retention.failed", file.Retention.Failed, &cfg.Retention.Failed, &cfg.fromFile.failed},
		{"retention.abandoned", file.Retention.Abandoned, &cfg.Retention.Abandoned, &cfg.fromFile.abandoned},
	}
	for _, d := range durations {
		if d.from.Duration < 0 {
			return invalid(d.field, "%s is negative", d.from.Duration)
		}
		if d.from.Duration > MaxDuration {
			return invalid(d.field, "%s is longer than %s", d.from.Duration, MaxDuration)
		}
	}
	if file.MaxCheckpoints < 0 {
		return invalid("maxCheckpoints", "%d is negative", file.MaxCheckpoints)
	}
	for _, d := range durations {
		if d.from.Duration > 0 {
			*d.to, *d.set = d.from, true
		}
	}
	if file.AgentLoop.MaxConsecutive < 0 {
		return invalid("agentLoop.maxConsecutive", "%d is negative", file.AgentLoop.MaxConsecutive)
	}
	if file.AgentLoop.MaxPerHook < 0 {
		return invalid("agentLoop.maxPerHook", "%d is negative", file.AgentLoop.MaxPerHook)
	}
	if file.AgentLoop.MaxConsecutive > 0 {
		cfg.AgentLoop.MaxConsecutive = file.AgentLoop.MaxConsecutive
	}
	if file.AgentLoop.MaxPerHook > 0 {
		cfg.AgentLoop.MaxPerHook = file.AgentLoop.MaxPerHook
	}
	if file.MaxCheckpoints > 0 {
		cfg.MaxCheckpoints, cfg.fromFile.maxCheckpoints = file.MaxCheckpoints, true
	}
	cfg.Notify = file.Notify
	for _, d := range []struct{ from, to *string }{{&file.KeyDir, &cfg.KeyDir}, {&file.RecoveryDir, &cfg.RecoveryDir}} {
		if *d.from == "" {
			continue
		}
		if filepath.IsAbs(*d.from) {
			*d.to = filepath.Clean(*d.from)
		} else {
			*d.to = filepath.Join(base, *d.from)
		}
	}
	return nil
}

// Effective is what applies to one Hook: its spec's values where set, else
// the configuration's.
type Effective struct {
	// StaleAfter is how long a working Hook may go without a heartbeat.
	StaleAfter time.Duration
	// CheckpointInterval is how often an interval checkpoint is taken.
	CheckpointInterval time.Duration
	// MaxCheckpoints is how many checkpoints are kept.
	MaxCheckpoints int32
	// CompletedTTL, FailedTTL and AbandonedTTL are how long a Hook in that
	// terminal state is kept.
	CompletedTTL, FailedTTL, AbandonedTTL time.Duration
	// Sources tells where each of the values above came from.
	Sources Sources
}

// Effective merges spec over the configuration.
func (c *Config) Effective(spec *v1.HookSpec) Effective {
	e := Effective{
		StaleAfter:         pick(spec.StaleAfter, c.StaleAfter),
		CheckpointInterval: pick(spec.CheckpointInterval, c.CheckpointInterval),
		MaxCheckpoints:     c.MaxCheckpoints,
		CompletedTTL:       c.Retention.Completed.Duration,
		FailedTTL:          c.Retention.Failed.Duration,
		AbandonedTTL:       c.Retention.Abandoned.Duration,
	}
	if spec.MaxCheckpoints > 0 {
		e.MaxCheckpoints = spec.MaxCheckpoints
	}
	var completed, failed, abandoned *metav1.Duration
	if r := spec.Retention; r != nil {
		completed, failed, abandoned = r.Completed, r.Failed, r.Abandoned
		e.CompletedTTL = pick(r.Completed, c.Retention.Completed)
		e.FailedTTL = pick(r.Failed, c.Retention.Failed)
		e.AbandonedTTL = pick(r.Abandoned, c.Retention.Abandoned)
	}
	e.Sources = Sources{
		StaleAfter:         source(spec.StaleAfter != nil && spec.StaleAfter.Duration > 0, c.fromFile.staleAfter),
		CheckpointInterval: source(spec.CheckpointInterval != nil && spec.CheckpointInterval.Duration > 0, c.fromFile.checkpointInterval),
		MaxCheckpoints:     source(spec.MaxCheckpoints > 0, c.fromFile.maxCheckpoints),
		CompletedTTL:       source(completed != nil && completed.Duration > 0, c.fromFile.completed),
		FailedTTL:          source(failed != nil && failed.Duration > 0, c.fromFile.failed),
		AbandonedTTL:       source(abandoned != nil && abandoned.Duration > 0, c.fromFile.abandoned),
	}
	return e
}

func source(inSpec, inFile bool) Source {
	switch {
	case inSpec:
		return FromSpec
	case inFile:
		return FromFile
	}
	return FromBuiltin
}

// TTL is how long a Hook in terminal state s is kept; false for a state
// that is not terminal.
func (e Effective) TTL(s v1.HookState) (time.Duration, bool) {
	switch s {
	case v1.HookCompleted:
		return e.CompletedTTL, true
	case v1.HookFailed:
		return e.FailedTTL, true
	case v1.HookAbandoned:
		return e.AbandonedTTL, true
	}
	return 0, false
}

func pick(spec *metav1.Duration, def metav1.Duration) time.Duration {
	if spec != nil && spec.Duration > 0 {
		return spec.Duration
	}
	return def.Duration
}

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

// Package retention decides when a terminal Hook is garbage-collected: once
// its per-state time-to-live, counted from status.terminalAt, has passed.
// The retention reconciler and `tether gc` share it.
package retention

import (
	"fmt"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
)

// Decision is when a terminal Hook is due for deletion, and why.
type Decision struct {
	// State is the Hook's terminal state.
	State v1.HookState
	// Since is when the Hook became terminal.
	Since time.Time
	// TTL is how long a Hook in State is kept.
	TTL time.Duration
	// DueAt is Since plus TTL.
	DueAt time.Time
}

// Due reports whether the Hook is due for deletion at now.
func (d Decision) Due(now time.Time) bool { return !now.Before(d.DueAt) }

// Reason says why the Hook is or will be deleted, as in
// "completed at 2026-11-20T10:00:00Z, kept 720h0m0s (spec.retention or config)".
func (d Decision) Reason() string {
	return fmt.Sprintf("%s at %s, kept for %s", d.State, d.Since.UTC().Format(time.RFC3339), d.TTL)
}

// Decide returns the retention decision for hook under cfg, and false when
// hook is not in a terminal state. A terminal Hook without
// status.terminalAt counts from its newest history entry, else from its
// creation.
func Decide(hook *v1.Hook, cfg *config.Config) (Decision, bool) {
	ttl, terminal := cfg.Effective(&hook.Spec).TTL(hook.Status.State)
	if !terminal {
		return Decision{}, false
	}
	since := hook.CreationTimestamp.Time
	switch st := &hook.Status; {
	case st.TerminalAt != nil:
		since = st.TerminalAt.Time
	case len(st.History) > 0:
		since = st.History[len(st.History)-1].Time.Time
	}
	return Decision{State: hook.Status.State, Since: since, TTL: ttl, DueAt: since.Add(ttl)}, true
}

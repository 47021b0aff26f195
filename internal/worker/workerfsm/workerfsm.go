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

// Package workerfsm is the Worker phase machine: the phases a Worker's
// process goes through, the events that move it, the restart policy that
// decides what a crash leads to, and the heartbeat rules of Workers judged
// by heartbeat. Like hookfsm it is pure: nothing here does I/O or reads the
// clock.
//
// The table below is the one encoding of the phase transitions; the
// reconciler and the Worker verbs ask Next rather than assign phases.
package workerfsm

import (
	"fmt"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// Event is something that happens to a Worker's process.
type Event string

// The events.
const (
	// Started: a process was launched or adopted.
	Started Event = "started"
	// StartFailed: the process could not be launched or adopted.
	StartFailed Event = "start_failed"
	// Alive: the recorded process was found running.
	Alive Event = "alive"
	// Exited: the process exited with status 0, unasked.
	Exited Event = "exited"
	// Stopped: the process ended because tether stopped it, and no
	// restart is pending.
	Stopped Event = "stopped"
	// CrashRestarted: the process crashed and was restarted (ActionRestart).
	CrashRestarted Event = "crash_restarted"
	// CrashLooped: the process crashed and the crash budget is used up
	// (ActionNotifyOnly).
	CrashLooped Event = "crash_looped"
	// Crashed: the process crashed and is not restarted automatically
	// (ActionNone, or the restart failed).
	Crashed Event = "crashed"
	// RestartRequested: a person asked for a restart (`tether worker restart`).
	RestartRequested Event = "restart_requested"
	// Heartbeat: a Worker judged by heartbeat reported that it is alive.
	Heartbeat Event = "heartbeat"
	// HeartbeatExpired: no heartbeat arrived within spec.heartbeatTimeout.
	HeartbeatExpired Event = "heartbeat_expired"
	// AwaitingHeartbeat: a Worker judged by heartbeat has not sent one yet.
	AwaitingHeartbeat Event = "awaiting_heartbeat"
	// Unsupported: the Worker asks for something this tether cannot run
	// (a Pod template outside a cluster).
	Unsupported Event = "unsupported"
	// PodCreated: a Pod was created for a Worker with a Pod template; it
	// has not started yet.
	PodCreated Event = "pod_created"
)

// Events returns every event, in the order of the table.
func Events() []Event {
	return []Event{Started, StartFailed, Alive, Exited, Stopped, CrashRestarted, CrashLooped, Crashed,
		RestartRequested, Heartbeat, HeartbeatExpired, AwaitingHeartbeat, Unsupported, PodCreated}
}

// Phases returns the Worker phases; "" is a new Worker's, before any.
func Phases() []v1.WorkerPhase {
	return []v1.WorkerPhase{"", v1.WorkerPending, v1.WorkerRunning, v1.WorkerRestarting,
		v1.WorkerCrashed, v1.WorkerCrashLoop, v1.WorkerStopped, v1.WorkerLost}
}

// same marks a cell where the event leaves the phase as it is.
const same v1.WorkerPhase = "="

const (
	none    = v1.WorkerPhase("")
	pending = v1.WorkerPending
	running = v1.WorkerRunning
	restart = v1.WorkerRestarting
	crashed = v1.WorkerCrashed
	loop    = v1.WorkerCrashLoop
	stopped = v1.WorkerStopped
	lost    = v1.WorkerLost
)

// table is the phase an event leads to, per phase; a missing cell is an
// invalid pair. A process is launched or adopted only from "", Pending,
// Restarting and Running; its exit is observed only while one is recorded,
// which Crashed, CrashLoop and Stopped never have.
var table = map[v1.WorkerPhase]map[Event]v1.WorkerPhase{
	none: {
		Started: running, StartFailed: crashed, Alive: running, Stopped: stopped,
		RestartRequested: restart, Heartbeat: running, HeartbeatExpired: lost, AwaitingHeartbeat: pending, Unsupported: pending,
		PodCreated: pending,
	},
	pending: {
		Started: running, StartFailed: crashed, Alive: running, Exited: stopped, Stopped: stopped,
		CrashRestarted: running, CrashLooped: loop, Crashed: crashed,
		RestartRequested: restart, Heartbeat: running, HeartbeatExpired: lost, AwaitingHeartbeat: same, Unsupported: same,
		PodCreated: same,
	},
	running: {
		Started: same, StartFailed: crashed, Alive: same, Exited: stopped, Stopped: stopped,
		CrashRestarted: same, CrashLooped: loop, Crashed: crashed,
		RestartRequested: restart, Heartbeat: same, HeartbeatExpired: lost, AwaitingHeartbeat: same, Unsupported: pending,
		PodCreated: pending,
	},
	restart: {
		// A restart request is carried out by stopping the process; its
		// exit starts the new one (Started). Until then the phase stays.
		Started: running, StartFailed: crashed, Alive: same, Exited: stopped, Stopped: stopped,
		CrashRestarted: running, CrashLooped: loop, Crashed: crashed,
		RestartRequested: same, Heartbeat: same, HeartbeatExpired: lost, AwaitingHeartbeat: same, Unsupported: pending,
		PodCreated: pending,
	},
	crashed: {
		Alive: running, Stopped: stopped,
		RestartRequested: restart, Heartbeat: same, HeartbeatExpired: lost, AwaitingHeartbeat: same, Unsupported: pending,
	},
	loop: {
		Alive: running, Stopped: stopped,
		RestartRequested: restart, Heartbeat: same, HeartbeatExpired: lost, AwaitingHeartbeat: same, Unsupported: pending,
	},
	stopped: {
		Alive: running, Stopped: same,
		RestartRequested: restart, Heartbeat: same, HeartbeatExpired: lost, AwaitingHeartbeat: same, Unsupported: pending,
	},
	lost: {
		Alive: running, Exited: stopped, Stopped: stopped,
		CrashRestarted: running, CrashLooped: loop, Crashed: crashed,
		RestartRequested: restart, Heartbeat: running, HeartbeatExpired: same, AwaitingHeartbeat: same, Unsupported: pending,
		PodCreated: pending,
	},
}

// TransitionError says that an event is not valid in a Worker's phase.
type TransitionError struct {
	// Phase is the Worker's phase.
	Phase v1.WorkerPhase
	// Event is the rejected event.
	Event Event
}

// Error names the event and the phase.
func (e *TransitionError) Error() string {
	p := e.Phase
	if p == "" {
		p = "(none)"
	}
	return fmt.Sprintf("worker event %s is not valid in phase %s", e.Event, p)
}

// Next returns the phase event e leads to from phase p, or a
// *TransitionError when the table has no such transition.
func Next(p v1.WorkerPhase, e Event) (v1.WorkerPhase, error) {
	to, ok := table[p][e]
	if !ok {
		return p, &TransitionError{Phase: p, Event: e}
	}
	if to == same {
		return p, nil
	}
	return to, nil
}

// Allowed reports whether the table has a transition for e in phase p.
func Allowed(p v1.WorkerPhase, e Event) bool {
	_, ok := table[p][e]
	return ok
}

// Apply sets st.Phase to the phase e leads to and returns the error of an
// invalid pair, leaving st unchanged.
func Apply(st *v1.WorkerStatus, e Event) error {
	to, err := Next(st.Phase, e)
	if err != nil {
		return err
	}
	st.Phase = to
	return nil
}

// Defaults of the Worker spec, matching the CRD defaults, for objects that
// reach the reconciler without them.
const (
	// DefaultMaxCrashes is spec.restart.maxCrashes's default.
	DefaultMaxCrashes = 3
	// DefaultCrashWindow is spec.restart.window's default.
	DefaultCrashWindow = 10 * time.Minute
	// DefaultHeartbeatTimeout is spec.heartbeatTimeout's default.
	DefaultHeartbeatTimeout = 2 * time.Minute
)

// Action is what the reconciler does after a crash.
type Action string

// The actions after a crash.
const (
	// ActionRestart starts the process again.
	ActionRestart Action = "Restart"
	// ActionNotifyOnly records the crash and leaves the Worker in CrashLoop.
	ActionNotifyOnly Action = "NotifyOnly"
	// ActionNone records the crash of a Worker without automatic restarts.
	ActionNone Action = "None"
)

// CrashEvent is the event of a crash followed by action a.
func CrashEvent(a Action) Event {
	switch a {
	case ActionRestart:
		return CrashRestarted
	case ActionNotifyOnly:
		return CrashLooped
	default:
		return Crashed
	}
}

// MaxCrashes is spec.restart.maxCrashes, or DefaultMaxCrashes when unset.
func MaxCrashes(spec *v1.WorkerSpec) int {
	if spec.Restart.MaxCrashes > 0 {
		return int(spec.Restart.MaxCrashes)
	}
	return DefaultMaxCrashes
}

// CrashWindow is spec.restart.window, or DefaultCrashWindow when unset.
func CrashWindow(spec *v1.WorkerSpec) time.Duration {
	if spec.Restart.Window != nil && spec.Restart.Window.Duration > 0 {
		return spec.Restart.Window.Duration
	}
	return DefaultCrashWindow
}

// HeartbeatTimeout is spec.heartbeatTimeout, or DefaultHeartbeatTimeout.
func HeartbeatTimeout(spec *v1.WorkerSpec) time.Duration {
	if spec.HeartbeatTimeout != nil && spec.HeartbeatTimeout.Duration > 0 {
		return spec.HeartbeatTimeout.Duration
	}
	return DefaultHeartbeatTimeout
}

// CrashesInWindow counts the crash records in st that fall inside the
// restart window ending at now and that no manual restart forgave. A
// manual restart marks the records it forgives: times in status have a
// resolution of one second, and a crash loop can spend its whole budget
// within the second of the restart. status.windowStart still forgives the
// records from before it, which releases written before the marks existed
// left unmarked.
func CrashesInWindow(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) int {
	since := now.Add(-CrashWindow(spec))
	n := 0
	for _, c := range st.Crashes {
		if c.Forgiven || since.After(c.Time.Time) {
			continue
		}
		if st.WindowStart != nil && c.Time.Before(st.WindowStart) {
			continue
		}
		n++
	}
	return n
}

// Decide returns the action for a crash at now, given the crashes already
// recorded in st (not yet the new one). With restart.auto set, the crash
// is restarted while it is not the maxCrashes-th within the window: with
// maxCrashes 3, crashes 1 and 2 are restarted and crash 3 is not.
func Decide(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) Action {
	switch {
	case !spec.Restart.Auto || len(spec.Command) == 0 && spec.Template == nil:
		return ActionNone
	case CrashesInWindow(spec, st, now)+1 < MaxCrashes(spec):
		return ActionRestart
	default:
		return ActionNotifyOnly
	}
}

// Budget describes the crashes within the window, after they are recorded,
// for the CrashLoop condition and Events: "2 of 3 crashes in 10m0s" while
// within the budget, "3 crashes in 10m0s" once it is used up.
func Budget(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) string {
	n, limit := CrashesInWindow(spec, st, now), MaxCrashes(spec)
	if n >= limit {
		return fmt.Sprintf("%d crashes in %s", n, CrashWindow(spec))
	}
	return fmt.Sprintf("%d of %d crashes in %s", n, limit, CrashWindow(spec))
}

// AppendCrash appends c to the bounded crash records of st.
func AppendCrash(st *v1.WorkerStatus, c v1.CrashRecord) {
	st.Crashes = append(st.Crashes, c)
	if extra := len(st.Crashes) - v1.WorkerCrashLimit; extra > 0 {
		st.Crashes = append([]v1.CrashRecord(nil), st.Crashes[extra:]...)
	}
}

// HeartbeatSlack is added to spec.heartbeatTimeout: status times have a
// resolution of one second and are truncated, so a heartbeat may be up to
// a second younger than recorded.
const HeartbeatSlack = time.Second

// HeartbeatDue is when the Worker's heartbeat expires; zero when it has
// never sent one.
func HeartbeatDue(spec *v1.WorkerSpec, st *v1.WorkerStatus) time.Time {
	if st.LastHeartbeat == nil {
		return time.Time{}
	}
	return st.LastHeartbeat.Add(HeartbeatTimeout(spec) + HeartbeatSlack)
}

// HeartbeatEvent is the event a heartbeat check at now makes of st: no
// heartbeat yet, a fresh one, or an expired one.
func HeartbeatEvent(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) Event {
	due := HeartbeatDue(spec, st)
	switch {
	case due.IsZero():
		return AwaitingHeartbeat
	case now.Before(due):
		return Heartbeat
	default:
		return HeartbeatExpired
	}
}

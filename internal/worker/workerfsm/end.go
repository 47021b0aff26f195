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

package workerfsm

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// End is how a Worker's agent ended, a process or a Pod, as the reconciler
// observed it.
type End struct {
	// Record is the end's crash record: time, PID (none for a Pod), reason,
	// exit code or signal, and the Hooks held. Exit sets its Restarted.
	Record v1.CrashRecord
	// Clean is an exit with status 0 that nobody else caused: no crash.
	Clean bool
	// Requested is an end tether asked for (`tether worker restart`, a
	// deletion): no crash either.
	Requested bool
}

// Successor is the agent started in place of one that crashed: a process
// or a Pod.
type Successor struct {
	// Process is the new process; nil for a Pod.
	Process *Process
	// Pod names the new Pod, created and not yet running; empty for a process.
	Pod string
}

// Process is what a Worker's status records of its process.
type Process struct {
	// PID, StartTicks and BootID identify the process.
	PID        int32
	StartTicks int64
	BootID     string
	// Host is the machine it runs on.
	Host string
	// LogFile receives its output; TmuxSession is its tmux session, if any.
	LogFile, TmuxSession string
	// StartedAt is when it was started or found.
	StartedAt metav1.Time
}

// Record writes p into st.
func (p *Process) Record(st *v1.WorkerStatus) {
	st.PID, st.ProcessStartTicks, st.BootID, st.Host = p.PID, p.StartTicks, p.BootID, p.Host
	st.LogFile, st.TmuxSession = p.LogFile, p.TmuxSession
	t := p.StartedAt
	st.StartedAt = &t
}

// ClearProcess drops the process or Pod st records, keeping its host, log
// file and tmux session, which `tether logs` still reads.
func ClearProcess(st *v1.WorkerStatus) {
	st.PID, st.ProcessStartTicks, st.BootID, st.StartedAt = 0, 0, "", nil
	st.PodName, st.NodeName = "", ""
}

// Outcome is a Worker's status after its agent ended.
type Outcome struct {
	// Status is the new status.
	Status *v1.WorkerStatus
	// Action is what was done: ActionRestart when a successor runs,
	// ActionNotifyOnly when the crash budget is used up, ActionNone
	// otherwise (a clean or requested end, no automatic restart, or a
	// restart that could not be started).
	Action Action
	// Record is the end's record as Exit completed it; Status holds it
	// when the end was a crash.
	Record v1.CrashRecord
}

// endEvent is the event of end from st at now, given whether a successor
// runs, and the action it stands for. A requested end of a Worker that is
// Restarting has no event: the successor's start moves the phase.
func endEvent(spec *v1.WorkerSpec, st *v1.WorkerStatus, end End, restarted bool, now time.Time) (Event, Action) {
	switch {
	case end.Requested && st.Phase == v1.WorkerRestarting:
		return "", ActionNone
	case end.Requested:
		return Stopped, ActionNone
	case end.Clean:
		return Exited, ActionNone
	case restarted:
		return CrashRestarted, ActionRestart
	}
	if a := Decide(spec, st, now); a == ActionNotifyOnly {
		return CrashLooped, a
	}
	return Crashed, ActionNone
}

// Plan is what the restart policy does after end at now, decided on st
// before anything is started: ActionRestart asks the caller to start a
// successor and pass it to Exit. It returns a *TransitionError, and
// ActionNone, when st's phase admits no such end (only a hand edit of
// status.phase brings one): nothing is to be started then.
func Plan(spec *v1.WorkerSpec, st *v1.WorkerStatus, end End, now time.Time) (Action, error) {
	action := ActionNone
	if !end.Requested && !end.Clean {
		action = Decide(spec, st, now)
	}
	e, _ := endEvent(spec, st, end, action == ActionRestart, now)
	if e != "" && !Allowed(st.Phase, e) {
		return ActionNone, &TransitionError{Phase: st.Phase, Event: e}
	}
	return action, nil
}

// Exit returns the status that follows st when its agent ended as end, at
// now, with next started in its place (nil when none runs): the process or
// Pod cleared, a crash recorded (unless the end is clean or requested),
// next recorded and counted in status.restarts, and the phase the table
// gives. st is not changed.
//
// A requested end of a Restarting Worker keeps the phase: the caller
// starts the successor, whose start moves it. When the table has no
// transition for the end in st's phase, Exit returns a *TransitionError
// and a status that records only what happened: the process cleared, the
// crash recorded as not restarted, the phase kept; next is then not
// recorded, and the caller stops it.
func Exit(spec *v1.WorkerSpec, st *v1.WorkerStatus, end End, next *Successor, now time.Time) (Outcome, error) {
	out := Outcome{Status: st.DeepCopy(), Record: end.Record}
	crash := !end.Clean && !end.Requested
	restarted := crash && next != nil
	e, action := endEvent(spec, st, end, restarted, now)
	ClearProcess(out.Status)
	to, err := st.Phase, error(nil)
	if e != "" {
		to, err = Next(st.Phase, e)
	}
	if err != nil {
		restarted, action = false, ActionNone
	}
	out.Record.Restarted = restarted
	if crash {
		AppendCrash(out.Status, out.Record)
	}
	out.Status.Phase, out.Action = to, action
	if !restarted {
		return out, err
	}
	out.Status.Restarts++
	if next.Process != nil {
		next.Process.Record(out.Status)
		return out, nil
	}
	// The new Pod has not started yet: Running comes when it runs.
	out.Status.PodName = next.Pod
	out.Status.Phase, err = Next(to, PodCreated)
	return out, err
}

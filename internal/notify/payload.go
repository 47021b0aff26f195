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

package notify

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// Payload is the JSON document a notifier reads on stdin.
type Payload struct {
	// Notifier is the name of the notifier run.
	Notifier string `json:"notifier"`
	// Reason is the notify reason, such as WorkerCrashed.
	Reason config.NotifyReason `json:"reason"`
	// EventReason is the reason of the Event reported, which for some
	// notify reasons differs (HookStale is the Event HeartbeatExpired).
	EventReason string `json:"eventReason"`
	// Type is the Event's type: Normal or Warning.
	Type string `json:"type"`
	// Kind, Namespace and Name name the object the Event is about.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Message is the Event's text.
	Message string `json:"message"`
	// Time is when it happened (the Event's last observation).
	Time time.Time `json:"time"`
	// Count is how many times the Event has been observed; a notifier runs
	// again for a higher count.
	Count int32 `json:"count"`
	// Event is the name of the Event object, for `tether events`.
	Event string `json:"event"`
	// Worker describes the Worker, for an Event about one that still exists.
	Worker *Worker `json:"worker,omitempty"`
	// Hook describes the Hook, for an Event about one that still exists.
	Hook *Hook `json:"hook,omitempty"`
}

// Worker is what a Payload tells of a Worker.
type Worker struct {
	// Phase is the Worker's phase when the notifier was run.
	Phase v1.WorkerPhase `json:"phase,omitempty"`
	// Restarts counts the restarts so far.
	Restarts int32 `json:"restarts"`
	// PID is the process now running, if any.
	PID int32 `json:"pid,omitempty"`
	// Host is the machine the Worker runs on.
	Host string `json:"host,omitempty"`
	// LogFile is where the process's output goes.
	LogFile string `json:"logFile,omitempty"`
	// Crash is the crash record the Event reports: time, pid, reason
	// (Exited, Signaled, ...), exitCode or signal, the Hooks held.
	Crash *v1.CrashRecord `json:"crash,omitempty"`
	// Hooks names the Hooks the Worker held when it crashed.
	Hooks []string `json:"hooks,omitempty"`
}

// Hook is what a Payload tells of a Hook.
type Hook struct {
	// State is the Hook's state when the notifier was run.
	State v1.HookState `json:"state"`
	// Goal is the task's goal.
	Goal string `json:"goal,omitempty"`
	// Workspace is the task's working tree.
	Workspace string `json:"workspace,omitempty"`
	// Assignee is the Worker that holds it, if any.
	Assignee string `json:"assignee,omitempty"`
	// Step is the current step, if any.
	Step *Step `json:"step,omitempty"`
	// Recovery is the Hook's recovery data, when it is recovering.
	Recovery *v1.RecoveryStatus `json:"recovery,omitempty"`
	// RecoveryFile is the path of its recovery file.
	RecoveryFile string `json:"recoveryFile,omitempty"`
}

// Step is a Hook's current step, numbered from 1 as people read it.
type Step struct {
	// Number is the step's position, from 1.
	Number int32 `json:"number"`
	// Of is the number of steps.
	Of int32 `json:"of"`
	// Name is the step's name.
	Name string `json:"name"`
	// Attempt is the attempt number, from 1.
	Attempt int32 `json:"attempt"`
	// WorkingOn is what the agent said it works on.
	WorkingOn string `json:"workingOn,omitempty"`
}

// Observation is one occurrence of an Event: its time and its count.
type Observation struct {
	// Time is when the Event was last observed.
	Time time.Time
	// Count is how many times it was observed.
	Count int32
}

// Observed is the latest occurrence of ev, from its series if it has one,
// else from whichever of its timestamps is set.
func Observed(ev *corev1.Event) Observation {
	if s := ev.Series; s != nil && !s.LastObservedTime.IsZero() {
		return Observation{Time: s.LastObservedTime.Time, Count: max(s.Count, 1)}
	}
	o := Observation{Count: max(ev.Count, 1)}
	switch {
	case !ev.EventTime.IsZero():
		o.Time = ev.EventTime.Time
	case !ev.LastTimestamp.IsZero():
		o.Time = ev.LastTimestamp.Time
	case !ev.FirstTimestamp.IsZero():
		o.Time = ev.FirstTimestamp.Time
	default:
		o.Time = ev.CreationTimestamp.Time
	}
	return o
}

// Describe is the Payload of an Event about an object of kind, with
// reason; w or h, when not nil, is the object it is about.
func Describe(ev *corev1.Event, reason config.NotifyReason, w *v1.Worker, h *v1.Hook) Payload {
	o := Observed(ev)
	p := Payload{
		Reason: reason, EventReason: ev.Reason, Type: ev.Type,
		Kind: ev.InvolvedObject.Kind, Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name,
		Message: ev.Message, Time: o.Time.UTC(), Count: o.Count, Event: ev.Name,
	}
	if p.Namespace == "" {
		p.Namespace = ev.Namespace
	}
	if w != nil {
		p.Worker = describeWorker(w, ev.Message, o.Time)
	}
	if h != nil {
		p.Hook = describeHook(h)
	}
	return p
}

// describeWorker tells of w, with the crash record that the Event, of
// message and time at, reports, even when later crashes followed: the
// newest record of the process the message begins with (the Worker
// reconciler's Events of a process's end do), else the newest from no
// later than at. Crash records keep whole seconds, so several crashes in
// one second are told apart only by their process.
func describeWorker(w *v1.Worker, message string, at time.Time) *Worker {
	out := &Worker{Phase: w.Status.Phase, Restarts: w.Status.Restarts, PID: w.Status.PID, Host: w.Status.Host, LogFile: w.Status.LogFile}
	// The Event that reports a crash is recorded after it.
	limit := at.Truncate(time.Second)
	id, byProcess := supervise.ParseIdentityPrefix(message)
	if byProcess && !slices.ContainsFunc(w.Status.Crashes, func(c v1.CrashRecord) bool { return int(c.PID) == id.PID }) {
		byProcess = false
	}
	for i := len(w.Status.Crashes) - 1; i >= 0; i-- {
		c := w.Status.Crashes[i]
		if byProcess && int(c.PID) != id.PID || !byProcess && c.Time.After(limit) {
			continue
		}
		out.Crash = c.DeepCopy()
		for _, held := range c.Held {
			out.Hooks = append(out.Hooks, held.Name)
		}
		if len(out.Hooks) == 0 && c.Hook != "" {
			out.Hooks = strings.Split(c.Hook, ",")
		}
		break
	}
	return out
}

func describeHook(h *v1.Hook) *Hook {
	out := &Hook{
		State: h.Status.State, Goal: h.Spec.Goal, Workspace: h.Spec.Workspace, Assignee: h.Spec.Assignee,
		RecoveryFile: h.Status.RecoveryFile,
	}
	if out.State == "" {
		out.State = v1.HookInitializing
	}
	if cs := h.Status.CurrentStep; cs != nil {
		out.Step = &Step{Number: cs.Index + 1, Of: int32(len(h.Spec.Steps)), Name: cs.Name, Attempt: cs.Attempt, WorkingOn: cs.WorkingOn}
	}
	if h.Status.State == v1.HookRecovering && h.Status.Recovery != nil {
		out.Recovery = h.Status.Recovery.DeepCopy()
	}
	return out
}

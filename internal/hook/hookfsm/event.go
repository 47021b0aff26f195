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

// Package hookfsm is the Hook state machine: one pure transition function
// shared by the CLI verbs and the reconcilers, the replay of a Hook's
// history, and the texts that tell an agent what to do next.
//
// Nothing here does I/O or reads the clock: the caller passes the time in, so
// the same input always gives the same output.
package hookfsm

import (
	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// Event is something that happens to a Hook: an agent verb, a reconciler's
// finding or a person's decision. Its value is what status.history records.
type Event string

// The events. docs/lifecycle.md tabulates them against the states.
const (
	// Initialize fills in the per-step results and makes the first step pending.
	Initialize Event = "initialize"
	// Begin starts an attempt of the current step.
	Begin Event = "begin"
	// Validate starts the current step's validations.
	Validate Event = "validate"
	// Pass records that the validations passed: the next step, or completion.
	Pass Event = "pass"
	// FailValidation records that the validations failed: another attempt, or failure.
	FailValidation Event = "fail_validation"
	// Await hands the task to a person.
	Await Event = "await"
	// Resume continues after a person answered, or after an interruption.
	Resume Event = "resume"
	// Interrupt records that work was interrupted (a stale heartbeat, a lost
	// Worker) and must be recovered.
	Interrupt Event = "interrupt"
	// Abandon gives the task up.
	Abandon Event = "abandon"
	// Fail ends the task as failed, with a reason.
	Fail Event = "fail"
	// Heartbeat records that the agent is alive; it changes no state.
	Heartbeat Event = "heartbeat"
)

// Events returns every event, in the order docs/lifecycle.md lists them.
func Events() []Event {
	return []Event{Initialize, Begin, Validate, Pass, FailValidation, Await, Resume, Interrupt, Abandon, Fail, Heartbeat}
}

// States returns the nine Hook states, non-terminal ones first.
func States() []v1.HookState {
	return []v1.HookState{
		v1.HookInitializing, v1.HookStepPending, v1.HookStepRunning, v1.HookStepValidating,
		v1.HookAwaitingHuman, v1.HookRecovering, v1.HookCompleted, v1.HookFailed, v1.HookAbandoned,
	}
}

// Verb is the CLI verb that causes e, for messages such as
// `cannot "step done" hook "x"`.
func (e Event) Verb() string {
	switch e {
	case Begin:
		return "step begin"
	case Validate, Pass, FailValidation:
		return "step done"
	default:
		return string(e)
	}
}

var (
	working     = []v1.HookState{v1.HookInitializing, v1.HookStepPending, v1.HookStepRunning, v1.HookStepValidating}
	nonTerminal = append(append([]v1.HookState{}, working...), v1.HookAwaitingHuman, v1.HookRecovering)
)

// accepted lists, per event, the states Apply accepts it in.
var accepted = map[Event][]v1.HookState{
	Initialize:     {v1.HookInitializing},
	Begin:          {v1.HookInitializing, v1.HookStepPending, v1.HookRecovering},
	Validate:       {v1.HookStepRunning},
	Pass:           {v1.HookStepValidating},
	FailValidation: {v1.HookStepValidating},
	Await:          {v1.HookInitializing, v1.HookStepPending, v1.HookStepRunning, v1.HookStepValidating, v1.HookRecovering},
	Resume:         {v1.HookAwaitingHuman, v1.HookRecovering},
	Interrupt:      append(append([]v1.HookState{}, working...), v1.HookRecovering),
	Abandon:        nonTerminal,
	Fail:           nonTerminal,
	Heartbeat:      nonTerminal,
}

// recorded lists, per event, the From states a history entry of that event
// can have. It is narrower than accepted: Begin, Await and Interrupt on an
// initializing Hook are recorded as initialize followed by the event, Begin
// on a recovering Hook as resume (then begin), and a heartbeat or a
// repeated interrupt records nothing.
var recorded = map[Event][]v1.HookState{
	Initialize:     {v1.HookInitializing},
	Begin:          {v1.HookStepPending},
	Validate:       {v1.HookStepRunning},
	Pass:           {v1.HookStepValidating},
	FailValidation: {v1.HookStepValidating},
	Await:          {v1.HookStepPending, v1.HookStepRunning, v1.HookStepValidating, v1.HookRecovering},
	Resume:         {v1.HookAwaitingHuman, v1.HookRecovering},
	Interrupt:      {v1.HookStepPending, v1.HookStepRunning, v1.HookStepValidating},
	Abandon:        nonTerminal,
	Fail:           nonTerminal,
}

// Allowed reports whether Apply accepts event e in state s. Apply may still
// reject the event for its input or for an inconsistent status.
func Allowed(s v1.HookState, e Event) bool {
	return contains(accepted[e], s)
}

func contains(states []v1.HookState, s v1.HookState) bool {
	for _, t := range states {
		if t == s {
			return true
		}
	}
	return false
}

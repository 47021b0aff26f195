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

package agentevent

import "fmt"

// Default caps of the Stop continuation loop.
const (
	// DefaultMaxConsecutive is how many continuations in a row one session
	// gets before tether lets it stop. The client has no cap of its own
	// (Claude Code 2.1.x delivered 30 Stop blocks in one turn), so tether's
	// caps and the no-progress rule are what bound the loop.
	DefaultMaxConsecutive = 6
	// DefaultMaxPerHook is how many continuations one Hook gets over its
	// whole life, across sessions and crashes: room for tens of steps with
	// several attempts each, and a bound on a loop that never finishes.
	DefaultMaxPerHook = 100
)

// Limits are the Stop continuation caps. Zero fields take the defaults.
type Limits struct {
	// MaxConsecutive caps continuations in a row in one session.
	MaxConsecutive int
	// MaxPerHook caps continuations over the Hook's life.
	MaxPerHook int
}

func (l Limits) withDefaults() Limits {
	if l.MaxConsecutive <= 0 {
		l.MaxConsecutive = DefaultMaxConsecutive
	}
	if l.MaxPerHook <= 0 {
		l.MaxPerHook = DefaultMaxPerHook
	}
	return l
}

// StopInput is what Decide needs to know about the Hook and the session.
type StopInput struct {
	// Terminal is true when the Hook is completed, failed or abandoned.
	Terminal bool
	// State is the Hook's state, for the end message.
	State string
	// AwaitingHuman is true in state awaiting_human.
	AwaitingHuman bool
	// Suspended is true when the Hook is paused (spec.suspend).
	Suspended bool
	// HistoryMismatch is true when the Hook's status disagrees with its
	// history (hookfsm.CheckHistory): the status, terminal or not, says
	// nothing to trust, and Next tells the agent to stop and ask a person.
	HistoryMismatch bool
	// Continued is true when the agent says this end of turn follows one of
	// tether's continuations in the same turn (Claude Code's
	// stop_hook_active). When false, a new turn began (a person spoke), and
	// the consecutive count starts again.
	Continued bool
	// Consecutive is how many continuations this session got in a row.
	Consecutive int
	// HookTotal is how many continuations the Hook got in its life.
	HookTotal int
	// LastFingerprint is the state fingerprint recorded with the previous
	// continuation; empty when there was none.
	LastFingerprint string
	// Fingerprint is the Hook's state fingerprint now (state, step, attempt,
	// results: whatever progress changes).
	Fingerprint string
	// Next is the continuation text: the one next action and the verb to run.
	Next string
}

// EndReason says why the continuation loop ends. The values are CamelCase so
// they can serve as a condition reason and an Event reason.
type EndReason string

// Why the loop ends, checked in this order.
const (
	EndHistoryMismatch EndReason = "HistoryMismatch"
	EndTerminal        EndReason = "HookTerminal"
	EndSuspended       EndReason = "HookPaused"
	EndAwaitingHuman   EndReason = "AwaitingHuman"
	EndNoNextAction    EndReason = "NoNextAction"
	EndHookCap         EndReason = "HookContinuationCap"
	EndConsecutiveCap  EndReason = "SessionContinuationCap"
	EndNoProgress      EndReason = "NoProgress"
)

// StopDecision is Decide's answer.
type StopDecision struct {
	// Block is true when the agent is told to continue with Reason.
	Block bool
	// Reason is the continuation text when Block.
	Reason string
	// End says why the loop ends when !Block.
	End EndReason
	// Message explains End to a person (Event message, condition message).
	Message string
	// Consecutive is the session's count of continuations in a row after
	// this decision; store it for the next Stop.
	Consecutive int
	// HookTotal is the Hook's continuation count after this decision.
	HookTotal int
}

// Decide decides whether a Stop continues the loop. The first rule that
// applies wins. A Hook whose status disagrees with its history is
// continued once, with Next telling the agent to stop and ask a person,
// so that it says so; then, or when paused or at a cap, the agent may
// stop. Otherwise: a terminal, paused or awaiting_human Hook, or no next action,
// lets the agent stop; then the per-Hook cap, the per-session consecutive cap
// (counted only while Continued says the turn is still the one tether
// continued), and finally a continuation that would repeat the previous one
// with no state change in between. Otherwise the agent continues with Next.
func Decide(in StopInput, limits Limits) StopDecision {
	limits = limits.withDefaults()
	consecutive := in.Consecutive
	if !in.Continued {
		consecutive = 0
	}
	end := func(r EndReason, format string, args ...any) StopDecision {
		return StopDecision{End: r, Message: fmt.Sprintf(format, args...), HookTotal: in.HookTotal}
	}
	told := in.LastFingerprint != "" && in.LastFingerprint == in.Fingerprint
	if in.HistoryMismatch {
		switch {
		case in.Suspended:
			return end(EndSuspended, "the Hook is paused: the agent may stop until it is unpaused")
		case told, in.Next == "", in.HookTotal >= limits.MaxPerHook, consecutive >= limits.MaxConsecutive:
			return end(EndHistoryMismatch, "the Hook's status disagrees with its history: the agent may stop until a person repairs it (tether repair)")
		}
		return StopDecision{Block: true, Reason: in.Next, Consecutive: consecutive + 1, HookTotal: in.HookTotal + 1}
	}
	switch {
	case in.Terminal:
		return end(EndTerminal, "the Hook is %s: nothing left to continue", terminalState(in.State))
	case in.Suspended:
		return end(EndSuspended, "the Hook is paused: the agent may stop until it is unpaused")
	case in.AwaitingHuman:
		return end(EndAwaitingHuman, "the Hook awaits a person: the agent may stop until it is resumed")
	case in.Next == "":
		return end(EndNoNextAction, "the Hook has no next action to give")
	case in.HookTotal >= limits.MaxPerHook:
		return end(EndHookCap, "the Hook reached its cap of %d continuations", limits.MaxPerHook)
	case consecutive >= limits.MaxConsecutive:
		return end(EndConsecutiveCap, "the session reached its cap of %d consecutive continuations", limits.MaxConsecutive)
	case told:
		return end(EndNoProgress, "no progress since the previous continuation: the Hook's state did not change, so the same instruction would repeat")
	}
	return StopDecision{Block: true, Reason: in.Next, Consecutive: consecutive + 1, HookTotal: in.HookTotal + 1}
}

func terminalState(s string) string {
	if s == "" {
		return "in a terminal state"
	}
	return s + ", a terminal state"
}

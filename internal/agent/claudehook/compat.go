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

package claudehook

import "github.com/tether-dev/tether/internal/agent/agentevent"

// The Stop loop and the git detection are agent-neutral (agentevent); these
// are their names in Claude Code's terms.

// Trigger is agentevent.Trigger.
type Trigger = agentevent.Trigger

// Triggers a shell command can set off.
const (
	TriggerGitCommit = agentevent.TriggerGitCommit
	TriggerGitPush   = agentevent.TriggerGitPush
	TriggerPRCreated = agentevent.TriggerPRCreated
)

// Detection is agentevent.Detection.
type Detection = agentevent.Detection

// DetectShell is agentevent.DetectShell.
func DetectShell(command string) []Trigger { return agentevent.DetectShell(command) }

// PRURL is agentevent.PRURL.
func PRURL(text string) string { return agentevent.PRURL(text) }

// DetectPostToolUse inspects a PostToolUse or PostToolUseFailure event of
// the Bash tool for git commits, pushes and pull requests: a command that
// fails after its commit (git commit -m x && make test) still committed.
// Other tools detect nothing.
func DetectPostToolUse(ev Event) Detection {
	n := Neutral(ev)
	if n.Shell == "" {
		return Detection{}
	}
	return agentevent.Detect(n.Shell, n.ShellOutput)
}

// Limits is agentevent.Limits.
type Limits = agentevent.Limits

// Default caps of the Stop continuation loop.
const (
	DefaultMaxConsecutive = agentevent.DefaultMaxConsecutive
	DefaultMaxPerHook     = agentevent.DefaultMaxPerHook
)

// EndReason is agentevent.EndReason.
type EndReason = agentevent.EndReason

// Why the loop ends.
const (
	EndHistoryMismatch = agentevent.EndHistoryMismatch
	EndTerminal        = agentevent.EndTerminal
	EndSuspended       = agentevent.EndSuspended
	EndAwaitingHuman   = agentevent.EndAwaitingHuman
	EndNoNextAction    = agentevent.EndNoNextAction
	EndHookCap         = agentevent.EndHookCap
	EndConsecutiveCap  = agentevent.EndConsecutiveCap
	EndNoProgress      = agentevent.EndNoProgress
)

// StopInput is agentevent.StopInput with Claude Code's name of Continued.
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
	// history.
	HistoryMismatch bool
	// StopHookActive is the event's stop_hook_active (agentevent's
	// Continued).
	StopHookActive bool
	// Consecutive is how many continuations this session got in a row.
	Consecutive int
	// HookTotal is how many continuations the Hook got in its life.
	HookTotal int
	// LastFingerprint is the fingerprint recorded with the previous
	// continuation.
	LastFingerprint string
	// Fingerprint is the Hook's state fingerprint now.
	Fingerprint string
	// Next is the continuation text.
	Next string
}

// StopDecision is agentevent.StopDecision, answered in Claude Code's
// protocol.
type StopDecision struct {
	agentevent.StopDecision
}

// Answer encodes the decision in Claude Code's protocol.
func (d StopDecision) Answer() Answer {
	if d.Block {
		return BlockStop(d.Reason)
	}
	return AllowStop()
}

// Decide is agentevent.Decide.
func Decide(in StopInput, limits Limits) StopDecision {
	return StopDecision{agentevent.Decide(agentevent.StopInput{
		Terminal: in.Terminal, State: in.State, AwaitingHuman: in.AwaitingHuman, Suspended: in.Suspended,
		HistoryMismatch: in.HistoryMismatch, Continued: in.StopHookActive, Consecutive: in.Consecutive,
		HookTotal: in.HookTotal, LastFingerprint: in.LastFingerprint, Fingerprint: in.Fingerprint, Next: in.Next,
	}, limits)}
}

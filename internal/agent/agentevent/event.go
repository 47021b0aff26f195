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

// Package agentevent is the agent-neutral language of `tether agent hook`:
// the events a coding agent's hooks report (a session starts, a prompt, a
// finished tool call, a compaction, the end of a turn, the session's end),
// the answers tether gives (context to inject, a continuation, nothing),
// the Stop loop's decision with its caps, and the git activity of a shell
// command. Each agent's adapter (claudehook, ...) translates its own
// protocol to and from these; agentsession acts on them. The package does
// no I/O.
package agentevent

// Kind is what happened, whatever the agent calls it.
type Kind string

// The kinds of events tether acts on.
const (
	// SessionStart is a session starting, resuming, or restarting after a
	// clear or (for agents that report it so) a compaction; Event.Source
	// says which.
	SessionStart Kind = "SessionStart"
	// Prompt is a prompt the user (or a continuation) submitted.
	Prompt Kind = "Prompt"
	// ToolDone is a tool call that finished, successfully or not.
	ToolDone Kind = "ToolDone"
	// PreCompact comes before the agent compacts its context.
	PreCompact Kind = "PreCompact"
	// PostCompact comes after the agent compacted its context, for agents
	// that report it as an event of its own.
	PostCompact Kind = "PostCompact"
	// TurnEnd is the agent about to end its turn: tether may continue it.
	TurnEnd Kind = "TurnEnd"
	// SessionEnd is the session ending.
	SessionEnd Kind = "SessionEnd"
)

// Session sources of SessionStart, as status.agentSession.source records
// them.
const (
	SourceStartup = "startup"
	SourceResume  = "resume"
	SourceClear   = "clear"
	SourceCompact = "compact"
)

// MaxEventSize bounds the event read from stdin. A tool's output can be a
// whole command's; larger input is an error, answered as a no-op.
const MaxEventSize = 32 << 20

// Event is one hook event, translated from the agent's protocol.
type Event struct {
	// Kind is what happened; empty for an event tether does not act on
	// (the Hook is still resolved, so that a missing binding is reported).
	Kind Kind
	// Native is the agent's own name of the event (Claude Code's
	// "PostToolUseFailure"), for the adapter's answer and for messages.
	Native string
	// Agent names the agent (claude, codex, gemini).
	Agent string
	// AgentVersion is the agent's version, when the event or the adapter
	// can tell it.
	AgentVersion string
	// SessionID identifies the agent session.
	SessionID string
	// TranscriptPath is the session's transcript file.
	TranscriptPath string
	// CWD is the agent's working directory when the event fired.
	CWD string
	// Source is SessionStart's cause: SourceStartup, SourceResume,
	// SourceClear, SourceCompact (or another the agent names).
	Source string
	// Prompt is Prompt's text.
	Prompt string
	// Tool is ToolDone's tool, as the agent names it.
	Tool string
	// ToolFailed is true when the tool call failed (a shell command that
	// exited non-zero).
	ToolFailed bool
	// Shell is ToolDone's shell command line when the tool ran one; empty
	// otherwise.
	Shell string
	// ShellOutput is the shell command's standard output, when the agent
	// reports it.
	ShellOutput string
	// Continued is TurnEnd's: this end of turn follows one of tether's
	// continuations in the same turn.
	Continued bool
	// Trigger is PreCompact's (or PostCompact's) cause: manual or auto.
	Trigger string
	// Compacts is PreCompact's when the agent compacts right after it and
	// reports nothing afterwards (Gemini CLI): the compaction is counted
	// then, not at a PostCompact or a SessionStart that never comes.
	Compacts bool
	// Reason is SessionEnd's cause, as the agent reports it.
	Reason string
}

// Answer is tether's answer to an event, for the adapter to render in the
// agent's protocol. The zero Answer says nothing.
type Answer struct {
	// Context is text for the agent's context (at SessionStart, Prompt and
	// PostCompact, and at the kinds of Capabilities.ContextKinds); empty
	// means none.
	Context string
	// Continue is true when the agent must not end its turn (TurnEnd) but
	// go on with Reason as its next instruction.
	Continue bool
	// Reason is the continuation's instruction when Continue.
	Reason string
}

// IsZero reports whether the answer says nothing.
func (a Answer) IsZero() bool { return a.Context == "" && !a.Continue }

// Output is what the hook process prints and how it exits.
type Output struct {
	// Stdout is written to stdout; empty means no output.
	Stdout []byte
	// ExitCode is the process's exit code.
	ExitCode int
}

// Adapter is one agent's hook protocol: it decodes the event the agent
// writes on a hook's stdin and renders tether's answer as the agent reads
// it. Adapters do no I/O.
type Adapter interface {
	// Decode translates the agent's event; getenv reads the hook's
	// environment, which the agent sets (its version, for some). An input
	// that is not one of the agent's events is an error.
	Decode(data []byte, getenv func(string) string) (Event, error)
	// Render is the output of ans to ev in the agent's protocol.
	Render(ev Event, ans Answer) Output
}

// Refiner is an Adapter whose events need more than their JSON to
// translate (Gemini CLI's PreCompress needs the session's transcript to say
// whether a compression follows). Refine runs after Decode, may read files,
// and changes ev; what it cannot read leaves ev as it was.
type Refiner interface {
	Refine(ev *Event, getenv func(string) string)
}

// Capabilities are what an agent's hooks can and cannot do that the
// neutral handler must know. The zero Capabilities are Claude Code's: a
// SessionStart with source compact after every compaction.
type Capabilities struct {
	// NoCompactStart is true for an agent that sends no event after a
	// compaction whose answer the model reads before it goes on (Gemini
	// CLI): the compaction's anchor is recorded as pending at the PreCompact
	// that Compacts, and given at the session's next event of one of
	// ContextKinds.
	NoCompactStart bool
	// ContextKinds are the kinds of events whose answer's Context the agent
	// adds to the model's context.
	ContextKinds []Kind
}

// CarriesContext reports whether an answer to an event of kind k reaches
// the model.
func (c Capabilities) CarriesContext(k Kind) bool {
	for _, ck := range c.ContextKinds {
		if ck == k {
			return true
		}
	}
	return false
}

// Capable is an Adapter that declares its Capabilities.
type Capable interface {
	Capabilities() Capabilities
}

// CapabilitiesOf are a's Capabilities: the zero ones unless it is Capable.
func CapabilitiesOf(a Adapter) Capabilities {
	if c, ok := a.(Capable); ok {
		return c.Capabilities()
	}
	return Capabilities{}
}

// DisableEnv is the environment variable that turns every hook answer into a
// no-op (exit 0, no output) when set to "1", "true" or "yes": the escape
// hatch for a person who wants the agent back.
const DisableEnv = "TETHER_DISABLE"

// Disabled reports whether getenv (os.Getenv in production) sets DisableEnv.
func Disabled(getenv func(string) string) bool {
	switch getenv(DisableEnv) {
	case "1", "true", "TRUE", "True", "yes":
		return true
	}
	return false
}

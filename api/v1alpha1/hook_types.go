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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HookState is one of the nine states of a Hook's state machine.
// +kubebuilder:validation:Enum=initializing;step_pending;step_running;step_validating;awaiting_human;recovering;completed;failed;abandoned
type HookState string

// The nine Hook states. Completed, Failed and Abandoned are terminal.
const (
	// HookInitializing is the state of a Hook that has not been reconciled yet.
	HookInitializing HookState = "initializing"
	// HookStepPending means the current step is ready to be begun.
	HookStepPending HookState = "step_pending"
	// HookStepRunning means an agent is working on the current step.
	HookStepRunning HookState = "step_running"
	// HookStepValidating means the current step's validations are running.
	HookStepValidating HookState = "step_validating"
	// HookAwaitingHuman means the agent is waiting for a person's input.
	HookAwaitingHuman HookState = "awaiting_human"
	// HookRecovering means work was interrupted and must be resumed from the recovery file.
	HookRecovering HookState = "recovering"
	// HookCompleted means every step passed its validations. Terminal.
	HookCompleted HookState = "completed"
	// HookFailed means a step exhausted its attempts or the task was failed. Terminal.
	HookFailed HookState = "failed"
	// HookAbandoned means the task was given up. Terminal.
	HookAbandoned HookState = "abandoned"
)

// IsTerminal reports whether s is completed, failed or abandoned: states no
// event leaves.
func (s HookState) IsTerminal() bool {
	return s == HookCompleted || s == HookFailed || s == HookAbandoned
}

// OrInitializing is s as people and the state machine read it:
// initializing before the Hook reconciler has set a state.
func (s HookState) OrInitializing() HookState {
	if s == "" {
		return HookInitializing
	}
	return s
}

// PauseReasonAnnotation holds why a person paused a Hook (spec.suspend set by
// tether pause --reason), so the agent and describe can say why.
const PauseReasonAnnotation = "agents.tether.dev/pause-reason"

// UnpausedAtAnnotation holds when tether unpause last cleared spec.suspend
// (RFC 3339). The stale clock counts from the later of it and
// status.lastHeartbeat: an agent cannot heartbeat while paused, so a pause
// longer than staleAfter must not make the Hook stale the moment it ends.
const UnpausedAtAnnotation = "agents.tether.dev/unpaused-at"

// HookHistoryLimit is how many entries status.history keeps; it must equal the
// MaxItems marker on HookStatus.History.
const HookHistoryLimit = 100

// HookSpec is the desired state of a Hook: the task, its steps and its policies.
// +kubebuilder:validation:XValidation:rule="self.steps.all(s, self.steps.exists_one(t, t.name == s.name))",message="step names must be unique"
type HookSpec struct {
	// Goal states, in one or two sentences, what the task must achieve.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Goal string `json:"goal"`

	// Workspace is the path of the git working tree the task works in.
	// Validations run there and checkpoints snapshot it.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Workspace string `json:"workspace,omitempty"`

	// Steps are the ordered steps of the task. They run one after another.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Steps []Step `json:"steps"`

	// Assignee is the name of the Worker in the same namespace that holds the
	// task. Empty means the task is free to be claimed.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	Assignee string `json:"assignee,omitempty"`

	// Suspend pauses the task: while true, no stale detection or other
	// time-based transition happens.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// MaxAttempts is how many times a step may be attempted before the task fails.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxAttempts int32 `json:"maxAttempts,omitempty"`

	// StaleAfter is how long a working task may go without a heartbeat before
	// it is considered stale and moved to recovering. Unset, the tether
	// configuration file's staleAfter applies (built in: 5m).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	StaleAfter *metav1.Duration `json:"staleAfter,omitempty"`

	// CheckpointInterval is how often an interval checkpoint is taken while a
	// step is running. Unset, the tether configuration file's
	// checkpointInterval applies (built in: 5m).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	CheckpointInterval *metav1.Duration `json:"checkpointInterval,omitempty"`

	// MaxCheckpoints is how many checkpoints are kept; older ones are pruned.
	// Unset, the tether configuration file's maxCheckpoints applies (built in: 50).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxCheckpoints int32 `json:"maxCheckpoints,omitempty"`

	// Retention sets how long a Hook in a terminal state is kept before it is
	// garbage-collected. Unset fields fall back to the tether configuration
	// (completed 30d, failed 30d, abandoned 7d).
	// +optional
	Retention *RetentionPolicy `json:"retention,omitempty"`
}

// Step is one step of a Hook.
type Step struct {
	// Name identifies the step. It is a DNS-1123 label, unique within the Hook.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Description tells the agent what the step is about.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Description string `json:"description,omitempty"`

	// Validate lists the commands that must all exit 0 for the step to pass.
	// Each run produces a signed receipt.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Validate []ValidationCommand `json:"validate,omitempty"`
}

// ValidationCommand is one command that validates a step.
type ValidationCommand struct {
	// Command is the argv of the command, run without a shell in the workspace.
	// Its first element, the program, may not be empty.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self[0] != ''",message="the program (the first element) may not be empty"
	Command []string `json:"command"`

	// Timeout bounds the command's run time; on expiry its process group is killed.
	// +kubebuilder:default="10m0s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// RetentionPolicy sets per-state time-to-live for terminal Hooks.
type RetentionPolicy struct {
	// Completed is how long a completed Hook is kept.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	Completed *metav1.Duration `json:"completed,omitempty"`
	// Failed is how long a failed Hook is kept.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	Failed *metav1.Duration `json:"failed,omitempty"`
	// Abandoned is how long an abandoned Hook is kept.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	Abandoned *metav1.Duration `json:"abandoned,omitempty"`
}

// HookStatus is the observed state of a Hook.
type HookStatus struct {
	// ObservedGeneration is the generation of the spec that the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// State is the current state of the task's state machine.
	// +optional
	State HookState `json:"state,omitempty"`

	// CurrentStep describes the step being worked on.
	// +optional
	CurrentStep *CurrentStep `json:"currentStep,omitempty"`

	// Steps holds one result per spec step, in spec order, with its receipts.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Steps []StepResult `json:"steps,omitempty"`

	// LastHeartbeat is when the agent last reported that it is alive, to the
	// microsecond (as a Lease's renewTime), so that stale detection is exact.
	// +optional
	LastHeartbeat *metav1.MicroTime `json:"lastHeartbeat,omitempty"`

	// TerminalAt is when the Hook entered a terminal state; retention counts from it.
	// +optional
	TerminalAt *metav1.Time `json:"terminalAt,omitempty"`

	// Recovery describes the interruption being recovered from, if any.
	// +optional
	Recovery *RecoveryStatus `json:"recovery,omitempty"`

	// History is the append-only record of transitions, oldest first. It keeps
	// the newest 100 entries; HistoryDropped counts the entries dropped before them.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	History []HistoryEntry `json:"history,omitempty"`

	// HistoryDropped counts the oldest history entries dropped to keep History bounded.
	// +optional
	HistoryDropped int64 `json:"historyDropped,omitempty"`

	// LastCheckpoint is the newest Checkpoint taken of the Hook.
	// +optional
	LastCheckpoint *LastCheckpoint `json:"lastCheckpoint,omitempty"`

	// CheckpointSeq is the last checkpoint sequence number handed out. A
	// checkpoint allocates the next one with a compare-and-swap update of
	// the status (resourceVersion), so no two checkpoints share a number.
	// +kubebuilder:validation:Minimum=0
	// +optional
	CheckpointSeq int64 `json:"checkpointSeq,omitempty"`

	// IntervalCheckedAt is when the interval checkpoint last looked at the
	// workspace and took nothing (no change since LastCheckpoint, or the
	// capture failed); the next look is checkpointInterval later.
	// +optional
	IntervalCheckedAt *metav1.Time `json:"intervalCheckedAt,omitempty"`

	// RecoveryFile is the path of the rendered Markdown recovery file; on
	// the local store, relative to the store's directory.
	// +optional
	RecoveryFile string `json:"recoveryFile,omitempty"`

	// AgentSession is the coding-agent session that holds the task, as
	// `tether agent hook` last saw it, and the counters of its Stop
	// continuation loop.
	// +optional
	AgentSession *AgentSession `json:"agentSession,omitempty"`

	// Conditions are the Ready, Stale and Recovering conditions.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AgentSessionSource is what started a coding-agent session.
// +kubebuilder:validation:Enum=startup;resume;clear;compact
type AgentSessionSource string

// The sources of a session, as Claude Code's SessionStart reports them.
const (
	// SessionStartup is a new session.
	SessionStartup AgentSessionSource = "startup"
	// SessionResume is a session resumed with --resume or --continue.
	SessionResume AgentSessionSource = "resume"
	// SessionClear is a session started again by /clear.
	SessionClear AgentSessionSource = "clear"
	// SessionCompact is a session continuing after its context was compacted.
	SessionCompact AgentSessionSource = "compact"
)

// AgentSession is the coding-agent session working on a Hook, written by
// `tether agent hook` from the agent's hook events.
type AgentSession struct {
	// SessionID is the agent's session identifier.
	// +kubebuilder:validation:MaxLength=256
	SessionID string `json:"sessionID"`
	// TranscriptPath is the session's transcript file, on the agent's machine.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	TranscriptPath string `json:"transcriptPath,omitempty"`
	// Agent is the coding agent the session runs: claude (Claude Code),
	// codex (OpenAI Codex CLI), gemini (Gemini CLI), as `tether agent hook
	// --agent` names it. Empty for a session recorded before tether knew
	// more than one agent.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]*$`
	// +optional
	Agent string `json:"agent,omitempty"`
	// AgentVersion is the agent's version, when the agent reports it to its
	// hooks or the adapter can tell it; empty otherwise.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	AgentVersion string `json:"agentVersion,omitempty"`
	// Source is what started the session: startup, resume, clear or compact.
	// Empty when the session was first seen by an event other than
	// SessionStart.
	// +optional
	Source AgentSessionSource `json:"source,omitempty"`
	// ResumedFrom is the session that held the Hook before this one, when
	// this session took over from another (after a crash, an exit or a
	// /clear).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ResumedFrom string `json:"resumedFrom,omitempty"`
	// StartedAt is when tether first saw the session.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// LastSeen is the session's latest event, to the microsecond.
	// +optional
	LastSeen *metav1.MicroTime `json:"lastSeen,omitempty"`
	// EndedAt is when the session ended (SessionEnd); unset while it runs,
	// and after a crash that sent no SessionEnd.
	// +optional
	EndedAt *metav1.Time `json:"endedAt,omitempty"`
	// EndReason is why the session ended, as the agent reported it:
	// clear, logout, prompt_input_exit, other.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	EndReason string `json:"endReason,omitempty"`
	// EndedInState is the Hook's state when the session ended; with
	// EndedInStep it tells whether the session left a step unfinished.
	// +optional
	EndedInState HookState `json:"endedInState,omitempty"`
	// EndedInStep is the step being worked on when the session ended.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	EndedInStep string `json:"endedInStep,omitempty"`
	// Compactions counts the context compactions of this session.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Compactions int32 `json:"compactions,omitempty"`
	// LastCompactedAt is when the session's context was last compacted.
	// +optional
	LastCompactedAt *metav1.Time `json:"lastCompactedAt,omitempty"`
	// AnchorPending is the number (as counted in compactions) of the
	// compaction whose anchor the agent has not been given yet: set for an
	// agent that sends no event after a compaction (Gemini CLI), cleared by
	// the next event of the session whose answer carries the anchor, or by
	// a session start, which answers the whole recovery file. Zero when
	// none is pending.
	// +kubebuilder:validation:Minimum=0
	// +optional
	AnchorPending int32 `json:"anchorPending,omitempty"`
	// Continuations counts the Stop continuations this session got in a row
	// (reset when a person speaks, and for a new session); the per-session
	// cap applies to it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Continuations int32 `json:"continuations,omitempty"`
	// HookContinuations counts the Stop continuations the Hook got over its
	// whole life, across sessions; the per-Hook cap applies to it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	HookContinuations int32 `json:"hookContinuations,omitempty"`
	// LastFingerprint is the Hook's state fingerprint when the previous
	// continuation was given; a continuation that would follow no change
	// of it ends the loop.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	LastFingerprint string `json:"lastFingerprint,omitempty"`
}

// LastCheckpoint identifies a Hook's newest Checkpoint.
type LastCheckpoint struct {
	// Name is the Checkpoint's name.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Seq is the Checkpoint's sequence number.
	// +kubebuilder:validation:Minimum=0
	Seq int64 `json:"seq"`
	// Time is when the checkpoint was taken.
	Time metav1.Time `json:"time"`
	// Trigger is what caused it.
	Trigger CheckpointTrigger `json:"trigger"`
	// Step is the step being worked on when it was taken.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Step string `json:"step,omitempty"`
	// SnapshotCommit is the commit of the workspace it stored.
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{40}|[0-9a-f]{64})?$`
	// +optional
	SnapshotCommit string `json:"snapshotCommit,omitempty"`
	// SnapshotTree is that commit's tree; an interval checkpoint is skipped
	// while the workspace's tree still equals it.
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{40}|[0-9a-f]{64})?$`
	// +optional
	SnapshotTree string `json:"snapshotTree,omitempty"`
}

// CurrentStep describes the step the task is on.
type CurrentStep struct {
	// Index is the zero-based position of the step in spec.steps.
	// +kubebuilder:validation:Minimum=0
	Index int32 `json:"index"`
	// Name is the step's name.
	Name string `json:"name"`
	// Attempt is the one-based attempt number of the step.
	// +kubebuilder:validation:Minimum=1
	Attempt int32 `json:"attempt"`
	// WorkingOn is the agent's own short description of what it is doing.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	WorkingOn string `json:"workingOn,omitempty"`
	// FilesTouched lists the workspace-relative paths the step has changed
	// since BaseTree, as of its last begin (or as the agent declared them).
	// +kubebuilder:validation:MaxItems=256
	// +optional
	FilesTouched []string `json:"filesTouched,omitempty"`
	// BaseTree is the git tree (or snapshot commit) the step's changes are
	// counted from, set at its first begin: the snapshot tree of the Hook's last checkpoint (the
	// one the previous step's pass took), or, before any checkpoint, the
	// workspace as it was then, so that files dirty before the task began
	// are not the step's. At the pass, the files that differ from it become
	// the step's filesTouched.
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{40}|[0-9a-f]{64})?$`
	// +optional
	BaseTree string `json:"baseTree,omitempty"`
	// StartedAt is when the current attempt began.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
}

// StepPhase is the outcome so far of one step.
// +kubebuilder:validation:Enum=Pending;Running;Validating;Passed;Failed
type StepPhase string

// The phases of a step.
const (
	// StepPending means the step has not begun.
	StepPending StepPhase = "Pending"
	// StepRunning means an attempt of the step is under way.
	StepRunning StepPhase = "Running"
	// StepValidating means the step's validations are running.
	StepValidating StepPhase = "Validating"
	// StepPassed means the step's validations passed. It must not be repeated.
	StepPassed StepPhase = "Passed"
	// StepFailed means the step exhausted its attempts.
	StepFailed StepPhase = "Failed"
)

// StepResult is the outcome of one step.
type StepResult struct {
	// Name is the step's name.
	Name string `json:"name"`
	// Phase is the step's outcome so far.
	Phase StepPhase `json:"phase"`
	// Attempts is how many attempts of the step have begun.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// CompletedAt is when the step passed.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// FilesTouched are the files the step changed, from its first begin
	// (status.currentStep.baseTree) to its pass, as git saw them at the pass;
	// without git, those recorded at its last begin. The recovery file lists
	// them under the passed step and warns when later changes overlap them.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	FilesTouched []string `json:"filesTouched,omitempty"`
	// Receipts are the signed receipts of the step's latest validation run.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Receipts []Receipt `json:"receipts,omitempty"`
}

// Receipt is the signed record of one validation command's run.
type Receipt struct {
	// Command is the argv that was run.
	Command []string `json:"command"`
	// ExitCode is the command's exit code; -1 when it was killed.
	ExitCode int32 `json:"exitCode"`
	// StartedAt is when the command started.
	StartedAt metav1.Time `json:"startedAt"`
	// FinishedAt is when the command ended.
	FinishedAt metav1.Time `json:"finishedAt"`
	// DurationMillis is the command's run time in milliseconds.
	DurationMillis int64 `json:"durationMillis"`
	// StdoutSHA256 is the hex SHA-256 of the command's whole stdout.
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	StdoutSHA256 string `json:"stdoutSHA256"`
	// StderrSHA256 is the hex SHA-256 of the command's whole stderr.
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	StderrSHA256 string `json:"stderrSHA256"`
	// Attempt is the step attempt the run belongs to.
	Attempt int32 `json:"attempt"`
	// Envelope is the DSSE envelope whose payload is an in-toto statement of
	// this receipt, signed with the task's Ed25519 key. Absent when no key was available.
	// +optional
	Envelope *Envelope `json:"envelope,omitempty"`
}

// Envelope is a DSSE (Dead Simple Signing Envelope) signature envelope.
type Envelope struct {
	// PayloadType is the media type of the payload, application/vnd.in-toto+json.
	PayloadType string `json:"payloadType"`
	// Payload is the base64-encoded signed payload.
	Payload string `json:"payload"`
	// Signatures are the signatures over the DSSE pre-authentication encoding of the payload.
	// +kubebuilder:validation:MaxItems=4
	Signatures []Signature `json:"signatures"`
}

// Signature is one DSSE signature.
type Signature struct {
	// KeyID identifies the public key that verifies the signature.
	// +optional
	KeyID string `json:"keyid,omitempty"`
	// Sig is the base64-encoded signature.
	Sig string `json:"sig"`
}

// CrashType classifies why a task needs recovery.
// +kubebuilder:validation:Enum=stale_heartbeat;validation_interrupted;assignee_lost;context_compacted;manual
type CrashType string

// The crash types.
const (
	// CrashStaleHeartbeat means the agent stopped heartbeating while working.
	CrashStaleHeartbeat CrashType = "stale_heartbeat"
	// CrashValidationInterrupted means a validation run never finished.
	CrashValidationInterrupted CrashType = "validation_interrupted"
	// CrashAssigneeLost means the Worker holding the task died.
	CrashAssigneeLost CrashType = "assignee_lost"
	// CrashContextCompacted means the agent's context was compacted.
	CrashContextCompacted CrashType = "context_compacted"
	// CrashManual means a person asked for recovery.
	CrashManual CrashType = "manual"
)

// RecoveryStatus describes an interruption and how to resume from it.
type RecoveryStatus struct {
	// CrashType classifies the interruption.
	CrashType CrashType `json:"crashType"`
	// DetectedAt is when the interruption was detected.
	DetectedAt metav1.Time `json:"detectedAt"`
	// LastState is the state the task was in when interrupted.
	LastState HookState `json:"lastState"`
	// RecommendedAction is the one next action for the agent that resumes.
	// +kubebuilder:validation:MaxLength=2048
	RecommendedAction string `json:"recommendedAction"`
	// LastCheckpoint is the name of the newest Checkpoint before the interruption.
	// +optional
	LastCheckpoint string `json:"lastCheckpoint,omitempty"`
	// FilesChangedSinceCheckpoint lists workspace paths changed after LastCheckpoint.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	FilesChangedSinceCheckpoint []string `json:"filesChangedSinceCheckpoint,omitempty"`
}

// HistoryEntry records one state transition.
type HistoryEntry struct {
	// Time is when the transition happened.
	Time metav1.Time `json:"time"`
	// Event is the state-machine event that caused the transition.
	// +kubebuilder:validation:MaxLength=63
	Event string `json:"event"`
	// From is the state before the transition.
	// +optional
	From HookState `json:"from,omitempty"`
	// To is the state after the transition.
	To HookState `json:"to"`
	// Step is the index of the current step after the transition.
	// +optional
	Step int32 `json:"step,omitempty"`
	// Attempt is the attempt of the current step after the transition.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// Actor names who caused the transition: a CLI user, a Worker or a controller.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Actor string `json:"actor,omitempty"`
	// Message is a free-form explanation, such as a failure reason.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// Hook is a multi-step task worked on by an AI coding agent, with an explicit
// state machine, an append-only history and a recovery file.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=hk,categories=tether
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.currentStep.name`
// +kubebuilder:printcolumn:name="Attempt",type=integer,JSONPath=`.status.currentStep.attempt`
// +kubebuilder:printcolumn:name="Assignee",type=string,JSONPath=`.spec.assignee`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="History",type=string,JSONPath=`.status.conditions[?(@.reason=="HistoryMismatch")].reason`,description="HistoryMismatch while the status disagrees with its history (condition HistoryConsistent=False); tether repair rebuilds it"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Heartbeat",type=date,JSONPath=`.status.lastHeartbeat`,priority=1
// +kubebuilder:printcolumn:name="Goal",type=string,JSONPath=`.spec.goal`,priority=1
type Hook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the task.
	Spec HookSpec `json:"spec"`
	// Status is the task's observed progress.
	// +optional
	Status HookStatus `json:"status,omitempty"`
}

// HookList is a list of Hooks.
// +kubebuilder:object:root=true
type HookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Hooks.
	Items []Hook `json:"items"`
}

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

// Condition types. Ready summarises the others, in the manner of Flux.
const (
	// ConditionReady is true when the object is healthy and making progress.
	ConditionReady = "Ready"
	// ConditionStale is true when a Hook's heartbeat is overdue.
	ConditionStale = "Stale"
	// ConditionRecovering is true while a Hook is being recovered after an interruption.
	ConditionRecovering = "Recovering"
	// ConditionProcessAlive is true while a Worker's process is running.
	ConditionProcessAlive = "ProcessAlive"
	// ConditionCrashLoop is true when a Worker exhausted its automatic restarts.
	ConditionCrashLoop = "CrashLoop"
	// ConditionHistoryConsistent is true when a Hook's state, step results
	// and counters agree with the replay of its history; false names the
	// fields that disagree, which are not to be trusted.
	ConditionHistoryConsistent = "HistoryConsistent"
	// ConditionAgentLoop is true while `tether agent hook` keeps the
	// agent's Stop loop going, and false with the reason it ended
	// (HookTerminal, HookPaused, AwaitingHuman, NoNextAction,
	// HookContinuationCap, SessionContinuationCap, NoProgress).
	ConditionAgentLoop = "AgentLoop"
	// ConditionSnapshotAvailable is true when a Checkpoint's workspace snapshot can be restored.
	ConditionSnapshotAvailable = "SnapshotAvailable"
)

// Condition reasons, in CamelCase as Kubernetes requires.
const (
	// ReasonProgressing means the task is moving through its steps.
	ReasonProgressing = "Progressing"
	// ReasonSucceeded means the task completed.
	ReasonSucceeded = "Succeeded"
	// ReasonFailed means the task failed.
	ReasonFailed = "Failed"
	// ReasonAbandoned means the task was abandoned.
	ReasonAbandoned = "Abandoned"
	// ReasonSuspended means the task is paused by spec.suspend.
	ReasonSuspended = "Suspended"
	// ReasonAwaitingHuman means the task waits for a person.
	ReasonAwaitingHuman = "AwaitingHuman"
	// ReasonHeartbeatFresh means the last heartbeat is within staleAfter.
	ReasonHeartbeatFresh = "HeartbeatFresh"
	// ReasonHeartbeatExpired means no heartbeat arrived within staleAfter.
	ReasonHeartbeatExpired = "HeartbeatExpired"
	// ReasonValidationInterrupted means a validation run never finished.
	ReasonValidationInterrupted = "ValidationInterrupted"
	// ReasonAssigneeLost means the Worker holding the task died.
	ReasonAssigneeLost = "AssigneeLost"
	// ReasonContextCompacted means the agent's context was compacted.
	ReasonContextCompacted = "ContextCompacted"
	// ReasonManualRecovery means a person asked for recovery.
	ReasonManualRecovery = "ManualRecovery"
	// ReasonNoHeartbeatExpected means the Hook is in a state where no agent
	// is expected to heartbeat: not begun, awaiting a human, or terminal.
	ReasonNoHeartbeatExpected = "NoHeartbeatExpected"
	// ReasonInvalidStatus means the Hook's status is inconsistent with its
	// spec, so the state machine cannot advance it.
	ReasonInvalidStatus = "InvalidStatus"
	// ReasonHistoryMatches means the status is what the history replays to.
	ReasonHistoryMatches = "HistoryMatches"
	// ReasonHistoryMismatch means fields of the status disagree with the
	// replay of the history, as after a hand edit of the status.
	ReasonHistoryMismatch = "HistoryMismatch"
	// ReasonRetentionExpired means a terminal Hook outlived its retention
	// time-to-live and was deleted.
	ReasonRetentionExpired = "RetentionExpired"
	// ReasonContinuing means the agent was told to continue at Stop.
	ReasonContinuing = "Continuing"
	// ReasonNotRecovering means there is nothing to recover from.
	ReasonNotRecovering = "NotRecovering"
	// ReasonProcessRunning means the Worker's process is alive.
	ReasonProcessRunning = "ProcessRunning"
	// ReasonProcessExited means the Worker's process has exited.
	ReasonProcessExited = "ProcessExited"
	// ReasonRestartsExhausted means too many crashes fell within the restart window.
	ReasonRestartsExhausted = "RestartsExhausted"
	// ReasonWithinBudget means the crash count is within the restart budget.
	ReasonWithinBudget = "WithinBudget"
	// ReasonSnapshotRecorded means the snapshot commit exists in the workspace.
	ReasonSnapshotRecorded = "SnapshotRecorded"
	// ReasonSnapshotMissing means the snapshot commit could not be found.
	ReasonSnapshotMissing = "SnapshotMissing"
)

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

// CheckpointTrigger tells what caused a Checkpoint to be taken.
// +kubebuilder:validation:Enum=git_commit;git_push;pr_created;validation_pass;step_complete;interval;manual;pre_compact;pre_restore
type CheckpointTrigger string

// The checkpoint triggers.
const (
	// TriggerGitCommit is a checkpoint taken after a git commit.
	TriggerGitCommit CheckpointTrigger = "git_commit"
	// TriggerGitPush is a checkpoint taken before a git push.
	TriggerGitPush CheckpointTrigger = "git_push"
	// TriggerPRCreated is a checkpoint taken after a pull request was opened.
	TriggerPRCreated CheckpointTrigger = "pr_created"
	// TriggerValidationPass is a checkpoint taken after a validation passed.
	TriggerValidationPass CheckpointTrigger = "validation_pass"
	// TriggerStepComplete is a checkpoint taken when a step completed.
	TriggerStepComplete CheckpointTrigger = "step_complete"
	// TriggerInterval is a checkpoint taken every spec.checkpointInterval.
	TriggerInterval CheckpointTrigger = "interval"
	// TriggerManual is a checkpoint asked for by a person or an agent.
	TriggerManual CheckpointTrigger = "manual"
	// TriggerPreCompact is a checkpoint taken before the agent's context is compacted.
	TriggerPreCompact CheckpointTrigger = "pre_compact"
	// TriggerPreRestore is a checkpoint of the workspace as it was, taken
	// by `tether checkpoint restore --force` before it overwrites anything,
	// so that the restore can be undone.
	TriggerPreRestore CheckpointTrigger = "pre_restore"
)

// CaptureDurationAnnotation records on a Checkpoint how long the process
// that took it spent capturing it (snapshot, sequence number and ref), as
// a Go duration such as "1.25s". Checkpoints are mostly taken by
// short-lived CLI processes; `tether run` reads it to report
// tether_checkpoint_capture_seconds.
const CaptureDurationAnnotation = "agents.tether.dev/capture-duration"

// CheckpointSpec is an immutable snapshot of a Hook's progress and workspace.
type CheckpointSpec struct {
	// HookName is the Hook, in the same namespace, that the checkpoint belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	HookName string `json:"hookName"`

	// Trigger tells what caused the checkpoint.
	Trigger CheckpointTrigger `json:"trigger"`

	// Seq is the checkpoint's sequence number within its Hook, allocated
	// from the Hook's status.checkpointSeq; the newest checkpoint has the
	// highest. It is the last component of the snapshot ref.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Seq int64 `json:"seq,omitempty"`

	// Description is a short human-readable note.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Description string `json:"description,omitempty"`

	// Step is the name of the Hook's current step when the checkpoint was taken.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Step string `json:"step,omitempty"`

	// State is the Hook's state when the checkpoint was taken.
	// +optional
	State HookState `json:"state,omitempty"`

	// Workspace is the root of the git working tree the snapshot was taken
	// of; restore, diff and the finalizer that deletes the ref work there.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Workspace string `json:"workspace,omitempty"`

	// Git is the state of the workspace's git repository.
	// +optional
	Git *GitState `json:"git,omitempty"`

	// Files are the workspace files that differ from the previous
	// checkpoint's snapshot (from HEAD for a Hook's first checkpoint), at
	// most 500; FilesTruncated tells when there were more.
	// +kubebuilder:validation:MaxItems=500
	// +optional
	Files []FileSnapshot `json:"files,omitempty"`

	// FilesTruncated tells whether more files changed than Files holds.
	// +optional
	FilesTruncated bool `json:"filesTruncated,omitempty"`

	// SkippedFiles names the new or changed files left out of the snapshot
	// because they were larger than the snapshot size limit.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	SkippedFiles []string `json:"skippedFiles,omitempty"`

	// Degraded says what the snapshot lacks or how it differs from a plain
	// one: a merge or rebase in progress, an unborn branch, skipped files.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Degraded []string `json:"degraded,omitempty"`

	// PullRequest is the URL of the pull request whose creation triggered
	// the checkpoint (trigger pr_created).
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	PullRequest string `json:"pullRequest,omitempty"`
}

// GitState is the state of a git working tree.
type GitState struct {
	// Branch is the checked-out branch; empty for a detached HEAD.
	// +optional
	Branch string `json:"branch,omitempty"`
	// Commit is the HEAD commit; empty on an unborn branch.
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{40}|[0-9a-f]{64})?$`
	// +optional
	Commit string `json:"commit,omitempty"`
	// Dirty tells whether the working tree (untracked files included)
	// differed from HEAD.
	// +optional
	Dirty bool `json:"dirty,omitempty"`
	// SnapshotRef is the private git ref, refs/tether/checkpoints/<namespace>/<hook>/<seq>,
	// holding a commit of the whole working tree, untracked files included,
	// from which it can be restored.
	// +optional
	SnapshotRef string `json:"snapshotRef,omitempty"`
	// SnapshotCommit is the commit SnapshotRef pointed to when the
	// checkpoint was taken; its parent is Commit.
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{40}|[0-9a-f]{64})?$`
	// +optional
	SnapshotCommit string `json:"snapshotCommit,omitempty"`
	// SnapshotShort is SnapshotCommit abbreviated to 12 hex digits, as
	// `get checkpoints` prints it.
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{0,12}$`
	// +optional
	SnapshotShort string `json:"snapshotShort,omitempty"`
	// SnapshotTree is the tree of SnapshotCommit; equal trees mean equal
	// working trees.
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{40}|[0-9a-f]{64})?$`
	// +optional
	SnapshotTree string `json:"snapshotTree,omitempty"`
}

// FileChange is how a file differs from the previous snapshot.
// +kubebuilder:validation:Enum=A;M;D;T
type FileChange string

// The file changes.
const (
	// FileAdded is a file that is new.
	FileAdded FileChange = "A"
	// FileModified is a file whose content or mode changed.
	FileModified FileChange = "M"
	// FileDeleted is a file that is gone.
	FileDeleted FileChange = "D"
	// FileTypeChanged is a file that became a symlink, or the reverse.
	FileTypeChanged FileChange = "T"
)

// FileSnapshot records one file of the workspace that changed.
type FileSnapshot struct {
	// Path is the file's path relative to the root of the working tree.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Path string `json:"path"`
	// Change is how the file differs from the previous snapshot.
	// +optional
	Change FileChange `json:"change,omitempty"`
	// Size is the file's size in bytes (a symlink's target length); 0 when deleted.
	// +kubebuilder:validation:Minimum=0
	Size int64 `json:"size"`
	// Mode is the file's git mode in octal: 100644, 100755, 120000
	// (symlink) or 160000 (submodule); for a deleted file, the mode it had.
	// +kubebuilder:validation:Pattern=`^[0-7]{6}$`
	// +optional
	Mode string `json:"mode,omitempty"`
	// ModTime is the file's modification time.
	// +optional
	ModTime *metav1.Time `json:"modTime,omitempty"`
	// Hash is the git object id of the file's content in the snapshot;
	// empty for a deleted file.
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{40}|[0-9a-f]{64})?$`
	// +optional
	Hash string `json:"hash,omitempty"`
}

// CheckpointStatus is the observed state of a Checkpoint.
type CheckpointStatus struct {
	// ObservedGeneration is the generation of the spec that the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions holds the Ready condition: whether the snapshot ref exists
	// and points at spec.git.snapshotCommit, so the checkpoint can be restored.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Checkpoint is an immutable snapshot of a Hook's progress: its step, the git
// state of its workspace, a commit of the whole working tree under a private
// ref from which it can be restored, and the files changed since the
// previous checkpoint. It is owned by its Hook.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cp,categories=tether
// +kubebuilder:printcolumn:name="Hook",type=string,JSONPath=`.spec.hookName`
// +kubebuilder:printcolumn:name="Trigger",type=string,JSONPath=`.spec.trigger`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.spec.step`
// +kubebuilder:printcolumn:name="Seq",type=integer,JSONPath=`.spec.seq`
// +kubebuilder:printcolumn:name="Snapshot",type=string,JSONPath=`.spec.git.snapshotShort`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Branch",type=string,JSONPath=`.spec.git.branch`,priority=1
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
type Checkpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the snapshot. It is immutable after creation.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	Spec CheckpointSpec `json:"spec"`
	// Status is the observed state of the snapshot.
	// +optional
	Status CheckpointStatus `json:"status,omitempty"`
}

// CheckpointList is a list of Checkpoints.
// +kubebuilder:object:root=true
type CheckpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Checkpoints.
	Items []Checkpoint `json:"items"`
}

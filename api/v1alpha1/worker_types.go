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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkerPhase is the lifecycle phase of a Worker's process.
// +kubebuilder:validation:Enum=Pending;Running;Restarting;Crashed;CrashLoop;Stopped;Lost
type WorkerPhase string

// The Worker phases.
const (
	// WorkerPending means the process has not been started or adopted yet.
	WorkerPending WorkerPhase = "Pending"
	// WorkerRunning means the process is alive.
	WorkerRunning WorkerPhase = "Running"
	// WorkerRestarting means the process died and is being restarted.
	WorkerRestarting WorkerPhase = "Restarting"
	// WorkerCrashed means the process died and will not be restarted automatically
	// because spec.restart.auto is false.
	WorkerCrashed WorkerPhase = "Crashed"
	// WorkerCrashLoop means the process crashed too often within the restart
	// window; it is not restarted until a person restarts it.
	WorkerCrashLoop WorkerPhase = "CrashLoop"
	// WorkerStopped means the process exited as requested.
	WorkerStopped WorkerPhase = "Stopped"
	// WorkerLost means a remote worker's heartbeat timed out.
	WorkerLost WorkerPhase = "Lost"
)

// Dead tells whether a Worker in phase p has no live process to work on a
// Hook: Crashed, CrashLoop, Stopped or Lost. The Hook reconciler frees the
// Hooks such a Worker holds, and claims for it are refused.
func (p WorkerPhase) Dead() bool {
	switch p {
	case WorkerCrashed, WorkerCrashLoop, WorkerStopped, WorkerLost:
		return true
	}
	return false
}

// WorkerHeldLimit is how many held Hooks a crash record lists; it must equal
// the MaxItems marker on CrashRecord.Held.
const WorkerHeldLimit = 64

// WorkerCrashLimit is how many crash records status.crashes keeps; it must
// equal the MaxItems marker on WorkerStatus.Crashes.
const WorkerCrashLimit = 20

// WorkerSpec is the desired state of a Worker: which agent process to run or
// adopt, and how to react when it dies.
// +kubebuilder:validation:XValidation:rule="[has(self.command), has(self.adopt), has(self.template)].filter(x, x).size() <= 1",message="command, adopt and template are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="!has(self.tmux) || has(self.command)",message="tmux requires command"
type WorkerSpec struct {
	// Command is the argv of the agent process that tether launches and supervises.
	// Its first element, the program, may not be empty.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self[0] != ''",message="the program (the first element) may not be empty"
	// +optional
	Command []string `json:"command,omitempty"`

	// Workdir is the working directory of the launched process.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Workdir string `json:"workdir,omitempty"`

	// Env holds extra environment variables for the launched process.
	// +kubebuilder:validation:MaxItems=128
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []EnvVar `json:"env,omitempty"`

	// Tmux runs the launched command inside a tmux session, so that a person can attach to it.
	// +optional
	Tmux *TmuxSpec `json:"tmux,omitempty"`

	// Adopt makes tether supervise an already running process instead of launching one.
	// +optional
	Adopt *AdoptSpec `json:"adopt,omitempty"`

	// Restart is the automatic restart policy.
	// +kubebuilder:default={}
	// +optional
	Restart RestartPolicy `json:"restart,omitempty"`

	// ClearAssigneeOnCrash frees the Hooks held by the Worker once its process
	// is confirmed dead, so that another Worker can claim them.
	// +kubebuilder:default=true
	// +optional
	ClearAssigneeOnCrash *bool `json:"clearAssigneeOnCrash,omitempty"`

	// HeartbeatTimeout is how long a Worker on another host may go without a
	// heartbeat before it is considered lost. Workers on this host are
	// watched through their process instead.
	// +kubebuilder:default="2m0s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	// +optional
	HeartbeatTimeout *metav1.Duration `json:"heartbeatTimeout,omitempty"`

	// Template is the Pod template that runs the agent in cluster mode: the
	// Worker reconciler creates a Pod from it, owned by the Worker, with
	// restartPolicy Never (tether's crash window decides restarts) and the
	// TETHER_* environment in its first container. The template is
	// schemaless here and validated by the API server with a dry-run create
	// before each Pod: an invalid template creates no Pod and is reported in
	// the Ready condition (InvalidTemplate) and an Event, naming the field.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// EnvVar is an environment variable of a launched process.
type EnvVar struct {
	// Name is the variable's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`
	// Value is the variable's value.
	// +optional
	Value string `json:"value,omitempty"`
}

// TmuxSpec runs a Worker inside a tmux session.
type TmuxSpec struct {
	// Session is the name of the tmux session; it defaults to the Worker's name.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]*$`
	// +optional
	Session string `json:"session,omitempty"`
}

// AdoptSpec names an existing process for a Worker to supervise.
type AdoptSpec struct {
	// PID is the process ID to adopt.
	// +kubebuilder:validation:Minimum=1
	PID int32 `json:"pid"`
}

// RestartPolicy bounds automatic restarts of a crashed Worker.
type RestartPolicy struct {
	// Auto restarts the process after a crash. It is opt-in.
	// +kubebuilder:default=false
	// +optional
	Auto bool `json:"auto"`

	// MaxCrashes is the crash, counted within Window, that puts the Worker
	// in CrashLoop instead of being restarted: with 3, crashes 1 and 2 are
	// restarted and crash 3 is not.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxCrashes int32 `json:"maxCrashes,omitempty"`

	// Window is the sliding time window in which crashes are counted.
	// +kubebuilder:default="10m0s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) <= duration('8760h')",message="must be a duration of at most 8760h (365 days)"
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`
}

// WorkerStatus is the observed state of a Worker.
type WorkerStatus struct {
	// ObservedGeneration is the generation of the spec that the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the lifecycle phase of the process.
	// +optional
	Phase WorkerPhase `json:"phase,omitempty"`

	// PID is the process ID of the supervised process.
	// +optional
	PID int32 `json:"pid,omitempty"`

	// ProcessStartTicks is the process start time from /proc/PID/stat, in
	// clock ticks since boot. Together with BootID and PID it identifies the
	// process, so that a reused PID is never mistaken for the Worker.
	// +optional
	ProcessStartTicks int64 `json:"processStartTicks,omitempty"`

	// BootID identifies the boot of Host during which the process started.
	// +optional
	BootID string `json:"bootID,omitempty"`

	// StartedAt is when the current process started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// Host is the host name of the machine the process runs on.
	// +optional
	Host string `json:"host,omitempty"`

	// LogFile is the path of the file receiving the process's stdout and stderr.
	// +optional
	LogFile string `json:"logFile,omitempty"`

	// TmuxSession is the tmux session the process runs in, if any.
	// +optional
	TmuxSession string `json:"tmuxSession,omitempty"`

	// PodName is the Pod that runs the agent of a Worker with spec.template,
	// in the Worker's namespace; each start creates a new Pod.
	// +optional
	PodName string `json:"podName,omitempty"`

	// NodeName is the node the Pod in PodName was scheduled to.
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Restarts counts the automatic and manual restarts of the process.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`

	// LastHeartbeat is when the Worker last reported that it is alive, to the
	// microsecond (as a Lease's renewTime).
	// +optional
	LastHeartbeat *metav1.MicroTime `json:"lastHeartbeat,omitempty"`

	// WindowStart is when the current crash window began. A manual restart
	// resets it and marks every crash recorded before it forgiven.
	// +optional
	WindowStart *metav1.Time `json:"windowStart,omitempty"`

	// Crashes are the newest crash records, oldest first, at most 20.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Crashes []CrashRecord `json:"crashes,omitempty"`

	// Conditions are the Ready and CrashLoop conditions.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CrashRecord records one death of a Worker's process.
type CrashRecord struct {
	// Time is when the death was detected.
	Time metav1.Time `json:"time"`
	// PID is the process ID that died.
	// +optional
	PID int32 `json:"pid,omitempty"`
	// Reason is a machine-readable cause, such as Exited, Signaled or Vanished.
	Reason string `json:"reason"`
	// ExitCode is the exit code, when the process exited.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Signal is the number of the signal that killed the process.
	// +optional
	Signal *int32 `json:"signal,omitempty"`
	// Hook names the Hooks the Worker held when it died, comma-separated.
	// +optional
	Hook string `json:"hook,omitempty"`
	// Held are the Hooks the Worker held when it died, each with the
	// generation it had then, read around any cache. The Hook reconciler
	// frees a Hook listed here while the Hook still has that generation and
	// this Worker as assignee: a later claim changes the generation, so a
	// Hook claimed again after the crash, even by the restarted Worker, is
	// left alone.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Held []HeldHook `json:"held,omitempty"`
	// AssigneeCleared is no longer written.
	//
	// Deprecated: the Hook reconciler frees the Hooks of a dead Worker; the
	// Hook's status.recovery (crashType assignee_lost) and its AssigneeLost
	// Event record it.
	// +optional
	AssigneeCleared bool `json:"assigneeCleared,omitempty"`
	// Restarted tells whether the process was restarted.
	// +optional
	Restarted bool `json:"restarted,omitempty"`
	// Forgiven is true once a manual restart (tether worker restart) has
	// forgiven the crash: it no longer counts toward spec.restart.maxCrashes.
	// +optional
	Forgiven bool `json:"forgiven,omitempty"`
}

// HeldHook is a Hook a Worker held when its process died.
type HeldHook struct {
	// Name is the Hook's name, in the Worker's namespace.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Generation is the Hook's metadata.generation when the death was recorded.
	Generation int64 `json:"generation"`
}

// Worker is an AI coding agent process that tether launches or adopts,
// watches for crashes and restarts within limits.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wk,categories=tether
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="PID",type=integer,JSONPath=`.status.pid`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.status.host`,priority=1
// +kubebuilder:printcolumn:name="Pod",type=string,JSONPath=`.status.podName`,priority=1
type Worker struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the process to supervise.
	Spec WorkerSpec `json:"spec"`
	// Status is the observed state of the process.
	// +optional
	Status WorkerStatus `json:"status,omitempty"`
}

// WorkerList is a list of Workers.
// +kubebuilder:object:root=true
type WorkerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Workers.
	Items []Worker `json:"items"`
}

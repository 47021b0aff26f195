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

package controllers

import (
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// The restart policy and heartbeat rules live in workerfsm; these names
// keep the reconciler's calls short.

// Defaults of the Worker spec; see workerfsm.
const (
	DefaultMaxCrashes       = workerfsm.DefaultMaxCrashes
	DefaultCrashWindow      = workerfsm.DefaultCrashWindow
	DefaultHeartbeatTimeout = workerfsm.DefaultHeartbeatTimeout
)

// Action is what the reconciler does after a crash; see workerfsm.Action.
type Action = workerfsm.Action

// The actions after a crash.
const (
	// ActionRestart starts the process again.
	ActionRestart = workerfsm.ActionRestart
	// ActionNotifyOnly records the crash and leaves the Worker in CrashLoop.
	ActionNotifyOnly = workerfsm.ActionNotifyOnly
	// ActionNone records the crash of a Worker without automatic restarts.
	ActionNone = workerfsm.ActionNone
)

func maxCrashes(spec *v1.WorkerSpec) int { return workerfsm.MaxCrashes(spec) }

func heartbeatTimeout(spec *v1.WorkerSpec) time.Duration { return workerfsm.HeartbeatTimeout(spec) }

// CrashesInWindow is workerfsm.CrashesInWindow.
func CrashesInWindow(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) int {
	return workerfsm.CrashesInWindow(spec, st, now)
}

// Decide is workerfsm.Decide.
func Decide(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) Action {
	return workerfsm.Decide(spec, st, now)
}

// appendCrash is workerfsm.AppendCrash.
func appendCrash(st *v1.WorkerStatus, c v1.CrashRecord) { workerfsm.AppendCrash(st, c) }

// setPhase moves st along the workerfsm table. The table has a cell for
// every pair the reconciler can observe; an invalid pair, which only a
// hand edit of the phase could bring, leaves the phase as it is.
func setPhase(st *v1.WorkerStatus, e workerfsm.Event) {
	_ = workerfsm.Apply(st, e)
}

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
)

// Defaults of the Worker spec, matching the CRD defaults, for objects that
// reach the reconciler without them.
const (
	DefaultMaxCrashes       = 3
	DefaultCrashWindow      = 10 * time.Minute
	DefaultHeartbeatTimeout = 2 * time.Minute
)

// Action is what the reconciler does after a crash.
type Action string

// The actions after a crash.
const (
	// ActionRestart starts the process again.
	ActionRestart Action = "Restart"
	// ActionNotifyOnly records the crash and leaves the Worker in CrashLoop.
	ActionNotifyOnly Action = "NotifyOnly"
	// ActionNone records the crash of a Worker without automatic restarts.
	ActionNone Action = "None"
)

func maxCrashes(spec *v1.WorkerSpec) int {
	if spec.Restart.MaxCrashes > 0 {
		return int(spec.Restart.MaxCrashes)
	}
	return DefaultMaxCrashes
}

func crashWindow(spec *v1.WorkerSpec) time.Duration {
	if spec.Restart.Window != nil && spec.Restart.Window.Duration > 0 {
		return spec.Restart.Window.Duration
	}
	return DefaultCrashWindow
}

func heartbeatTimeout(spec *v1.WorkerSpec) time.Duration {
	if spec.HeartbeatTimeout != nil && spec.HeartbeatTimeout.Duration > 0 {
		return spec.HeartbeatTimeout.Duration
	}
	return DefaultHeartbeatTimeout
}

// CrashesInWindow counts the crash records in status that fall inside the
// restart window ending at now. A manual restart sets status.windowStart and
// so forgives the crashes before it. Times in status have a resolution of
// one second, so a crash in the same second as windowStart is forgiven too.
func CrashesInWindow(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) int {
	since := now.Add(-crashWindow(spec))
	n := 0
	for _, c := range st.Crashes {
		if since.After(c.Time.Time) {
			continue
		}
		if st.WindowStart != nil && !c.Time.After(st.WindowStart.Time) {
			continue
		}
		n++
	}
	return n
}

// Decide returns the action for a crash at now, given the crashes already
// recorded in status (not yet the new one): restart while fewer than
// maxCrashes crashes fall inside the window, when restart.auto is set.
func Decide(spec *v1.WorkerSpec, st *v1.WorkerStatus, now time.Time) Action {
	switch {
	case !spec.Restart.Auto || len(spec.Command) == 0:
		return ActionNone
	case CrashesInWindow(spec, st, now) < maxCrashes(spec):
		return ActionRestart
	default:
		return ActionNotifyOnly
	}
}

// appendCrash appends c to the bounded crash records of st.
func appendCrash(st *v1.WorkerStatus, c v1.CrashRecord) {
	st.Crashes = append(st.Crashes, c)
	if extra := len(st.Crashes) - v1.WorkerCrashLimit; extra > 0 {
		st.Crashes = append([]v1.CrashRecord(nil), st.Crashes[extra:]...)
	}
}

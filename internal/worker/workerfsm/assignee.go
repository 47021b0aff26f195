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

package workerfsm

import (
	"fmt"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// ClearsAssignee tells whether the Hooks w holds are freed when it dies
// (spec.clearAssigneeOnCrash, true when unset).
func ClearsAssignee(w *v1.Worker) bool {
	return w.Spec.ClearAssigneeOnCrash == nil || *w.Spec.ClearAssigneeOnCrash
}

// AssigneeLost tells whether hook's assignee, the Worker w (nil when there
// is none), has lost it, and why. It is the whole rule, decided from the
// two objects' current state, and the one place it is decided: the Hook
// reconciler frees a Hook by it, the Worker's finalizer waits for the
// Hooks it names, and a claim waits while it holds for the claimer's own
// Worker.
//
//   - a Worker whose spec.clearAssigneeOnCrash is false keeps its Hooks;
//   - a Worker being deleted, or in a phase with no live process (Crashed,
//     CrashLoop, Stopped, Lost), has lost every Hook it holds;
//   - a Worker whose process died and was restarted in the same status
//     write is Running again: it has lost the Hooks a crash record lists
//     at the generation they still have. Claiming changes a Hook's
//     generation, so a Hook claimed after the crash is kept.
//
// A Worker that does not exist is not judged: a Hook may name a Worker
// that is yet to be created, and a deleted Worker's finalizer waits until
// its Hooks are freed.
func AssigneeLost(hook *v1.Hook, w *v1.Worker) (bool, string) {
	if hook.Spec.Assignee == "" || w == nil || w.Name != hook.Spec.Assignee || !ClearsAssignee(w) {
		return false, ""
	}
	if !w.DeletionTimestamp.IsZero() {
		return true, "the worker was deleted"
	}
	if w.Status.Phase.Dead() {
		why := "the worker is " + string(w.Status.Phase)
		if n := len(w.Status.Crashes); n > 0 {
			why += ": " + describeCrash(&w.Status.Crashes[n-1])
		}
		return true, why
	}
	for i := len(w.Status.Crashes) - 1; i >= 0; i-- {
		rec := &w.Status.Crashes[i]
		for _, held := range rec.Held {
			if held.Name == hook.Name && held.Generation == hook.Generation {
				return true, describeCrash(rec) + "; it was restarted"
			}
		}
	}
	return false, ""
}

// describeCrash says how a crash record's process died.
func describeCrash(rec *v1.CrashRecord) string {
	how := rec.Reason
	switch {
	case rec.ExitCode != nil:
		how = fmt.Sprintf("exited with code %d", *rec.ExitCode)
	case rec.Signal != nil:
		how = fmt.Sprintf("killed by signal %d", *rec.Signal)
	}
	return fmt.Sprintf("pid %d %s at %s", rec.PID, how, rec.Time.UTC().Format("15:04:05"))
}

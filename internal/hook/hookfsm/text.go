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

package hookfsm

import (
	"fmt"
	"strings"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// NextAction is the one thing to do next on hook, for the recovery file's
// "What to do now" and the CLI. Commands in it are Markdown code spans.
//
// While the status disagrees with its history (CheckHistory), it is never
// what the status says: it tells the agent to stop and ask a person, with
// where the history says the task stands and the way back (`tether
// repair`), or, when the history itself is damaged, that a person decides.
func NextAction(hook *v1.Hook) string {
	if ds := CheckHistory(hook); len(ds) > 0 {
		return untrustedAction(hook, ds)
	}
	st := &hook.Status
	switch state := st.State; state {
	case "", v1.HookInitializing, v1.HookStepPending:
		return fmt.Sprintf("run %s to start %s, attempt %d", command(hook, "step begin"), stepLabel(hook), attemptOf(st))
	case v1.HookStepRunning:
		return fmt.Sprintf("work on %s, attempt %d, then run %s to validate it", stepLabel(hook), attemptOf(st), command(hook, "step done"))
	case v1.HookStepValidating:
		return fmt.Sprintf("wait for %s to finish validating %s, attempt %d", command(hook, "step done"), stepLabel(hook), attemptOf(st))
	case v1.HookAwaitingHuman:
		if reason := lastMessage(st, v1.HookAwaitingHuman); reason != "" {
			return fmt.Sprintf("wait for a person to answer %q, then run %s", reason, command(hook, "resume"))
		}
		return "wait for a person, then run " + command(hook, "resume")
	case v1.HookRecovering:
		if st.Recovery != nil && st.Recovery.RecommendedAction != "" {
			return st.Recovery.RecommendedAction
		}
		return RecommendedAction(hook, interruptedState(st))
	case v1.HookCompleted:
		return "nothing: every step passed; do not repeat any of them"
	case v1.HookFailed:
		if reason := lastMessage(st, v1.HookFailed); reason != "" {
			return fmt.Sprintf("nothing: the task failed (%s); a person decides what happens next", reason)
		}
		return "nothing: the task failed; a person decides what happens next"
	case v1.HookAbandoned:
		return "nothing: the task was abandoned"
	default:
		return fmt.Sprintf("nothing until a person fixes status.state: %q is not a state", state)
	}
}

// untrustedAction is NextAction for a Hook whose status disagrees with
// its history in ds.
func untrustedAction(hook *v1.Hook, ds []Disagreement) string {
	what := ds[0].String()
	if len(ds) > 1 {
		what += fmt.Sprintf(", and %d more", len(ds)-1)
	}
	rebuilt, _, err := Rebuild(hook)
	if err != nil {
		return fmt.Sprintf("stop and ask a person: the status disagrees with its history (%s), and the history itself is damaged, so neither says where the task stands; a person checks the work and decides what happens next", what)
	}
	proven := Describe(&v1.Hook{ObjectMeta: hook.ObjectMeta, Spec: hook.Spec, Status: *rebuilt})
	return fmt.Sprintf("stop and ask a person: the status disagrees with its history (%s), so tether refuses every step of this task until a person checks the work and runs %s, which rebuilds the status from the history (it says: %s); until then do not begin, repeat or skip any step",
		what, command(hook, "repair"), proven)
}

// RecommendedAction is how an agent resumes hook after an interruption in
// state lastState; Interrupt stores it in status.recovery.recommendedAction.
func RecommendedAction(hook *v1.Hook, lastState v1.HookState) string {
	st := &hook.Status
	attempt := attemptOf(st)
	switch lastState {
	case v1.HookStepRunning:
		if maxAttempts := MaxAttempts(&hook.Spec); attempt >= maxAttempts {
			return fmt.Sprintf("%s has used all %d of its attempts, so %s fails the task; a person may raise spec.maxAttempts first",
				stepLabel(hook), maxAttempts, command(hook, "resume"))
		}
		return fmt.Sprintf("run %s and continue %s as attempt %d: the interrupted attempt %d counts",
			command(hook, "resume"), stepLabel(hook), attempt+1, attempt)
	case v1.HookStepValidating:
		return fmt.Sprintf("re-run validation: run %s, then %s to re-run the validations of %s; the interrupted run does not count as an attempt",
			command(hook, "resume"), command(hook, "step done"), stepLabel(hook))
	default:
		return fmt.Sprintf("run %s to start %s, attempt %d", command(hook, "step begin"), stepLabel(hook), attempt)
	}
}

// Describe summarises hook's state, step and attempt in a few words, as in
// `step "build" (2/3) running, attempt 1`.
func Describe(hook *v1.Hook) string {
	st := &hook.Status
	at := fmt.Sprintf("%s, attempt %d", stepLabel(hook), attemptOf(st))
	switch st.State {
	case "", v1.HookInitializing, v1.HookCompleted:
		return string(st.State.OrInitializing())
	case v1.HookStepPending, v1.HookStepRunning, v1.HookStepValidating:
		return fmt.Sprintf("%s %s, attempt %d", stepLabel(hook), strings.TrimPrefix(string(st.State), "step_"), attemptOf(st))
	case v1.HookAwaitingHuman:
		return "awaiting a human at " + at
	case v1.HookRecovering:
		return "recovering at " + at
	default:
		if st.CurrentStep == nil {
			return string(st.State)
		}
		return fmt.Sprintf("%s at %s", st.State, at)
	}
}

// command is a tether command line for hook, as a Markdown code span.
func command(hook *v1.Hook, verb string) string {
	line := "tether " + verb + " " + hook.Name
	if hook.Namespace != "" && hook.Namespace != "default" {
		line += " -n " + hook.Namespace
	}
	return "`" + line + "`"
}

// stepLabel names the current step, or the first one before initialization,
// as `step "build" (2/3)`.
func stepLabel(hook *v1.Hook) string {
	var index int32
	name := ""
	if cs := hook.Status.CurrentStep; cs != nil {
		index, name = cs.Index, cs.Name
	}
	if index >= 0 && int(index) < len(hook.Spec.Steps) {
		name = hook.Spec.Steps[index].Name
	}
	return fmt.Sprintf("step %q (%d/%d)", name, index+1, len(hook.Spec.Steps))
}

// attemptOf is the current attempt; before initialization, the first.
func attemptOf(st *v1.HookStatus) int32 {
	if st.CurrentStep == nil {
		return 1
	}
	return st.CurrentStep.Attempt
}

// lastMessage is the message of the newest history entry into state.
func lastMessage(st *v1.HookStatus, state v1.HookState) string {
	for i := len(st.History) - 1; i >= 0; i-- {
		if st.History[i].To == state {
			return st.History[i].Message
		}
	}
	return ""
}

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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// DefaultMaxAttempts is the attempts a step gets when spec.maxAttempts is
// unset; it matches the CRD default.
const DefaultMaxAttempts = 3

// Input is one event with its arguments.
type Input struct {
	// Event is what happened.
	Event Event
	// Now is the time of the event. It must be set.
	Now metav1.Time
	// Actor names who caused the event: a CLI user, a Worker or a controller.
	Actor string
	// Message explains the event. Await and Fail require it as their reason.
	Message string
	// Crash describes the interruption. Interrupt requires it.
	Crash *Crash
	// WorkingOn is the agent's description of its work, recorded by Begin.
	WorkingOn string
	// Files are the workspace paths the step touches, recorded by Begin;
	// for Pass, the files the step changed since its base tree (nil keeps
	// those recorded at its last begin).
	Files []string
	// BaseTree is the git tree the step's changes are counted from; Begin
	// records it on the step's first begin and keeps the first one after.
	BaseTree string
	// Receipts are the receipts of the validation run that Pass or
	// FailValidation concludes; they replace the step's receipts.
	Receipts []v1.Receipt
}

// Crash describes an interruption, for the Interrupt event.
type Crash struct {
	// Type classifies the interruption.
	Type v1.CrashType
	// RecommendedAction overrides the text RecommendedAction would give.
	RecommendedAction string
	// LastCheckpoint is the name of the newest Checkpoint before the interruption.
	LastCheckpoint string
	// FilesChangedSinceCheckpoint lists workspace paths changed after LastCheckpoint.
	FilesChangedSinceCheckpoint []string
}

// MaxAttempts is spec.maxAttempts, or DefaultMaxAttempts when it is unset.
func MaxAttempts(spec *v1.HookSpec) int32 {
	if spec.MaxAttempts > 0 {
		return spec.MaxAttempts
	}
	return DefaultMaxAttempts
}

// Apply applies in to hook and returns the new status. It never modifies
// hook. An event the state does not accept gives a *TransitionError; invalid
// input, or a status inconsistent with the spec, an *InvalidError.
//
// Interrupt on a recovering Hook returns the status unchanged, so that
// detecting the same interruption twice records it once. Heartbeat only sets
// status.lastHeartbeat. Every other event appends one history entry per
// transition, sets lastHeartbeat (except Interrupt, which other parties
// report) and keeps the newest v1alpha1.HookHistoryLimit entries, counting
// the dropped ones in status.historyDropped.
func Apply(hook *v1.Hook, in Input) (*v1.HookStatus, error) {
	if err := validateInput(hook, &in); err != nil {
		return nil, err
	}
	state, err := stateOf(hook)
	if err != nil {
		return nil, err
	}
	if !Allowed(state, in.Event) {
		return nil, &TransitionError{Hook: hook.Name, Event: in.Event, State: state, Expected: accepted[in.Event]}
	}
	if err := validateStatus(hook, state); err != nil {
		return nil, err
	}
	m := &machine{hook: hook, in: in, st: hook.Status.DeepCopy()}
	switch in.Event {
	case Heartbeat:
		m.st.LastHeartbeat = m.heartbeat()
		return m.st, nil
	case Interrupt:
		if state == v1.HookRecovering {
			return m.st, nil
		}
	}
	m.alignSteps()
	m.st.State = state
	m.apply(state)
	if in.Message != "" {
		m.st.History[len(m.st.History)-1].Message = in.Message
	}
	if in.Event != Interrupt {
		m.st.LastHeartbeat = m.heartbeat()
	}
	if extra := len(m.st.History) - v1.HookHistoryLimit; extra > 0 {
		m.st.History = append([]v1.HistoryEntry(nil), m.st.History[extra:]...)
		m.st.HistoryDropped += int64(extra)
	}
	return m.st, nil
}

// machine carries one Apply call's input and the status it builds.
type machine struct {
	hook *v1.Hook
	in   Input
	st   *v1.HookStatus
}

func (m *machine) apply(state v1.HookState) {
	switch m.in.Event {
	case Initialize:
		m.initialize()
	case Begin:
		if state == v1.HookRecovering {
			m.resumeRecovering()
			state = m.st.State
		}
		switch state {
		case v1.HookInitializing:
			m.initialize()
			m.begin()
		case v1.HookStepPending:
			m.begin()
		case v1.HookStepRunning:
			m.noteWork()
		}
	case Validate:
		m.result().Phase = v1.StepValidating
		m.record(Validate, v1.HookStepValidating, "")
	case Pass:
		m.pass()
	case FailValidation:
		m.result().Receipts = append([]v1.Receipt(nil), m.in.Receipts...)
		m.nextAttempt(FailValidation, "")
	case Await:
		if state == v1.HookInitializing {
			m.initialize()
		}
		m.record(Await, v1.HookAwaitingHuman, "")
	case Resume:
		if state == v1.HookAwaitingHuman {
			m.record(Resume, m.awaitedFrom(), "")
		} else {
			m.resumeRecovering()
		}
	case Interrupt:
		if state == v1.HookInitializing {
			m.initialize()
			state = v1.HookStepPending
		}
		m.interrupt(state)
	case Abandon:
		m.st.Recovery = nil
		m.st.TerminalAt = m.now()
		m.record(Abandon, v1.HookAbandoned, "")
	case Fail:
		m.st.Recovery = nil
		m.st.TerminalAt = m.now()
		if m.st.CurrentStep != nil {
			m.result().Phase = v1.StepFailed
		}
		m.record(Fail, v1.HookFailed, "")
	}
}

// heartbeat is the input's time as a heartbeat, kept to the microsecond.
func (m *machine) heartbeat() *metav1.MicroTime {
	t := metav1.NewMicroTime(m.in.Now.Time)
	return &t
}

func (m *machine) now() *metav1.Time {
	t := m.in.Now
	return &t
}

// record moves to state to and appends the history entry of event e, with
// msg, a note of the machine's own, as its message.
func (m *machine) record(e Event, to v1.HookState, msg string) {
	entry := v1.HistoryEntry{Time: m.in.Now, Event: string(e), From: m.st.State, To: to, Actor: m.in.Actor, Message: msg}
	if m.st.CurrentStep != nil {
		entry.Step, entry.Attempt = m.st.CurrentStep.Index, m.st.CurrentStep.Attempt
	}
	m.st.State = to
	m.st.History = append(m.st.History, entry)
}

// result is the current step's entry in status.steps.
func (m *machine) result() *v1.StepResult {
	return &m.st.Steps[m.st.CurrentStep.Index]
}

// alignSteps makes status.steps follow spec.steps by name, so results
// survive an edit that adds or reorders steps.
func (m *machine) alignSteps() {
	steps := make([]v1.StepResult, len(m.hook.Spec.Steps))
	for i, s := range m.hook.Spec.Steps {
		steps[i] = v1.StepResult{Name: s.Name, Phase: v1.StepPending}
		for _, old := range m.st.Steps {
			if old.Name == s.Name {
				steps[i] = old
				break
			}
		}
	}
	m.st.Steps = steps
	if cs := m.st.CurrentStep; cs != nil {
		cs.Name = m.hook.Spec.Steps[cs.Index].Name
	}
}

func (m *machine) initialize() {
	steps := make([]v1.StepResult, len(m.hook.Spec.Steps))
	for i, s := range m.hook.Spec.Steps {
		steps[i] = v1.StepResult{Name: s.Name, Phase: v1.StepPending}
	}
	m.st.Steps = steps
	m.st.CurrentStep = &v1.CurrentStep{Index: 0, Name: steps[0].Name, Attempt: 1}
	m.record(Initialize, v1.HookStepPending, "")
}

func (m *machine) begin() {
	cs := m.st.CurrentStep
	cs.WorkingOn = m.in.WorkingOn
	cs.FilesTouched = append([]string(nil), m.in.Files...)
	if cs.BaseTree == "" {
		cs.BaseTree = m.in.BaseTree
	}
	cs.StartedAt = m.now()
	r := m.result()
	r.Phase = v1.StepRunning
	r.Attempts = cs.Attempt
	m.record(Begin, v1.HookStepRunning, "")
}

// noteWork records Begin's description of the work on a step that a resume
// already put back to running.
func (m *machine) noteWork() {
	cs := m.st.CurrentStep
	if m.in.WorkingOn != "" {
		cs.WorkingOn = m.in.WorkingOn
	}
	if m.in.Files != nil {
		cs.FilesTouched = append([]string(nil), m.in.Files...)
	}
	if cs.BaseTree == "" {
		cs.BaseTree = m.in.BaseTree
	}
}

// nextAttempt starts another attempt of the current step, or fails the Hook
// when the step has used all of its attempts.
func (m *machine) nextAttempt(e Event, msg string) {
	cs, r := m.st.CurrentStep, m.result()
	if cs.Attempt >= MaxAttempts(&m.hook.Spec) {
		r.Phase = v1.StepFailed
		m.st.TerminalAt = m.now()
		m.record(e, v1.HookFailed, msg)
		return
	}
	cs.Attempt++
	cs.StartedAt = m.now()
	r.Phase = v1.StepRunning
	r.Attempts = cs.Attempt
	m.record(e, v1.HookStepRunning, msg)
}

func (m *machine) pass() {
	cs, r := m.st.CurrentStep, m.result()
	r.Phase = v1.StepPassed
	r.CompletedAt = m.now()
	r.Receipts = append([]v1.Receipt(nil), m.in.Receipts...)
	files := cs.FilesTouched
	if m.in.Files != nil {
		files = m.in.Files
	}
	r.FilesTouched = append([]string(nil), files...)
	if next := cs.Index + 1; int(next) < len(m.hook.Spec.Steps) {
		m.st.CurrentStep = &v1.CurrentStep{Index: next, Name: m.hook.Spec.Steps[next].Name, Attempt: 1}
		m.record(Pass, v1.HookStepPending, "")
		return
	}
	m.st.TerminalAt = m.now()
	m.record(Pass, v1.HookCompleted, "")
}

func (m *machine) interrupt(from v1.HookState) {
	c := m.in.Crash
	action := c.RecommendedAction
	if action == "" {
		action = RecommendedAction(&v1.Hook{ObjectMeta: m.hook.ObjectMeta, Spec: m.hook.Spec, Status: *m.st}, from)
	}
	m.st.Recovery = &v1.RecoveryStatus{
		CrashType:                   c.Type,
		DetectedAt:                  m.in.Now,
		LastState:                   from,
		RecommendedAction:           action,
		LastCheckpoint:              c.LastCheckpoint,
		FilesChangedSinceCheckpoint: append([]string(nil), c.FilesChangedSinceCheckpoint...),
	}
	m.record(Interrupt, v1.HookRecovering, "")
}

// resumeRecovering leaves recovering for the state the interruption
// happened in. An interrupted attempt counts as an attempt; an interrupted
// validation does not, and the step goes back to running to re-run it.
func (m *machine) resumeRecovering() {
	last := interruptedState(m.st)
	m.st.Recovery = nil
	switch last {
	case v1.HookStepRunning:
		m.nextAttempt(Resume, fmt.Sprintf("attempt %d was interrupted; it counts as an attempt", m.st.CurrentStep.Attempt))
	case v1.HookStepValidating:
		m.result().Phase = v1.StepRunning
		m.record(Resume, v1.HookStepRunning, "re-run validation: the interrupted validation does not count as an attempt")
	default:
		m.record(Resume, last, "")
	}
}

// awaitedFrom is the state that the entry into awaiting_human left. History
// keeps its newest entries, so that entry is normally retained; when someone
// removed it, the step's phase decides.
func (m *machine) awaitedFrom() v1.HookState {
	for i := len(m.st.History) - 1; i >= 0; i-- {
		e := m.st.History[i]
		if e.To == v1.HookAwaitingHuman {
			if contains(recorded[Await], e.From) {
				return e.From
			}
			break
		}
	}
	if m.st.Recovery != nil {
		return v1.HookRecovering
	}
	return stateOfPhase(m.st)
}

// interruptedState is status.recovery.lastState or, when that is missing
// or not a state an interruption can happen in, the step's phase decides.
func interruptedState(st *v1.HookStatus) v1.HookState {
	if st.Recovery != nil && contains(recorded[Interrupt], st.Recovery.LastState) {
		return st.Recovery.LastState
	}
	return stateOfPhase(st)
}

// stateOfPhase is the working state that the current step's phase implies.
// It reads any status, as NextAction may be given one Apply would reject.
func stateOfPhase(st *v1.HookStatus) v1.HookState {
	cs := st.CurrentStep
	switch {
	case cs == nil:
		return v1.HookInitializing
	case int(cs.Index) >= len(st.Steps) || cs.Index < 0:
		return v1.HookStepPending
	}
	switch st.Steps[cs.Index].Phase {
	case v1.StepRunning:
		return v1.HookStepRunning
	case v1.StepValidating:
		return v1.HookStepValidating
	default:
		return v1.HookStepPending
	}
}

func stateOf(hook *v1.Hook) (v1.HookState, error) {
	s := hook.Status.State.OrInitializing()
	if !contains(States(), s) {
		return "", &InvalidError{Hook: hook.Name, Field: "status.state", Reason: fmt.Sprintf("unknown state %q", s)}
	}
	return s, nil
}

var crashTypes = []v1.CrashType{v1.CrashStaleHeartbeat, v1.CrashValidationInterrupted, v1.CrashAssigneeLost, v1.CrashContextCompacted, v1.CrashManual}

// Limits of the status fields the input is copied into; the CRD enforces
// the same ones.
const (
	maxActor     = 253
	maxMessage   = 1024
	maxWorkingOn = 2048
	maxAction    = 2048
	maxFiles     = 256
	maxReceipts  = 16
)

func validateInput(hook *v1.Hook, in *Input) error {
	invalid := func(field, format string, args ...any) error {
		return &InvalidError{Hook: hook.Name, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case accepted[in.Event] == nil:
		return invalid("event", "unknown event %q", in.Event)
	case in.Now.IsZero():
		return invalid("now", "the time of the event is required")
	case len(in.Actor) > maxActor:
		return invalid("actor", "longer than %d bytes", maxActor)
	case len(in.Message) > maxMessage:
		return invalid("message", "longer than %d bytes", maxMessage)
	case len(in.WorkingOn) > maxWorkingOn:
		return invalid("workingOn", "longer than %d bytes", maxWorkingOn)
	case len(in.Files) > maxFiles:
		return invalid("files", "%d files, at most %d", len(in.Files), maxFiles)
	case len(in.Receipts) > maxReceipts:
		return invalid("receipts", "%d receipts, at most %d", len(in.Receipts), maxReceipts)
	case (in.Event == Await || in.Event == Fail) && strings.TrimSpace(in.Message) == "":
		return invalid("message", "a reason is required to %s", in.Event)
	case len(hook.Spec.Steps) == 0:
		return invalid("spec.steps", "at least one step is required")
	}
	if in.Event != Interrupt {
		return nil
	}
	c := in.Crash
	switch {
	case c == nil:
		return invalid("crash", "required to interrupt")
	case !containsCrash(c.Type):
		return invalid("crash.type", "unknown crash type %q", c.Type)
	case len(c.RecommendedAction) > maxAction:
		return invalid("crash.recommendedAction", "longer than %d bytes", maxAction)
	case len(c.FilesChangedSinceCheckpoint) > maxFiles:
		return invalid("crash.filesChangedSinceCheckpoint", "%d files, at most %d", len(c.FilesChangedSinceCheckpoint), maxFiles)
	}
	return nil
}

func containsCrash(t v1.CrashType) bool {
	for _, c := range crashTypes {
		if c == t {
			return true
		}
	}
	return false
}

// validateStatus checks what the transitions rely on: every state past
// initializing has a current step, and a current step is within spec.steps.
func validateStatus(hook *v1.Hook, state v1.HookState) error {
	cs := hook.Status.CurrentStep
	switch {
	case cs == nil && state == v1.HookInitializing:
		return nil
	case cs == nil:
		return &InvalidError{Hook: hook.Name, Field: "status.currentStep", Reason: "missing in state " + string(state)}
	case cs.Index < 0 || int(cs.Index) >= len(hook.Spec.Steps):
		return &InvalidError{Hook: hook.Name, Field: "status.currentStep.index",
			Reason: fmt.Sprintf("%d is out of range: spec.steps has %d steps", cs.Index, len(hook.Spec.Steps))}
	case cs.Attempt < 1:
		return &InvalidError{Hook: hook.Name, Field: "status.currentStep.attempt", Reason: fmt.Sprintf("%d is less than 1", cs.Attempt)}
	}
	return nil
}

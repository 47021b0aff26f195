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

package receipts

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// FailureKind classifies why a Hook's evidence does not support its status.
type FailureKind string

// The kinds of verification failure.
const (
	// FailureUnsigned is a receipt without an envelope.
	FailureUnsigned FailureKind = "Unsigned"
	// FailureSignature is a receipt whose envelope does not verify with the
	// task key, or whose fields differ from the statement it signs.
	FailureSignature FailureKind = "Signature"
	// FailureOtherHook is a receipt signed for another Hook.
	FailureOtherHook FailureKind = "OtherHook"
	// FailureOtherStep is a receipt of another step of this Hook.
	FailureOtherStep FailureKind = "OtherStep"
	// FailureOtherAttempt is a receipt of an attempt other than the one the
	// step passed in, or receipts of different runs mixed in one step.
	FailureOtherAttempt FailureKind = "OtherAttempt"
	// FailureExitCode is a passed step with a command that did not exit 0:
	// a failed run marked passed.
	FailureExitCode FailureKind = "ExitCode"
	// FailureMissing is a validate command of a passed step without a
	// receipt.
	FailureMissing FailureKind = "Missing"
	// FailureDuplicate is a second receipt of the same command.
	FailureDuplicate FailureKind = "Duplicate"
	// FailureOrder is receipts out of the order their commands ran in.
	FailureOrder FailureKind = "Order"
	// FailureUnknownCommand is a receipt of a command the step does not
	// declare (version 1 receipts, which are checked against the spec).
	FailureUnknownCommand FailureKind = "UnknownCommand"
	// FailureNotPassed is a completed Hook with a step that did not pass.
	FailureNotPassed FailureKind = "NotPassed"
)

// Failure is one reason a Hook's evidence does not support its status.
type Failure struct {
	// Hook is NAMESPACE/NAME.
	Hook string
	// Step is the step's name and StepIndex its position in status.steps.
	Step      string
	StepIndex int
	// Receipt is the receipt's position in the step's receipts; -1 when
	// the failure is about the step as a whole.
	Receipt int
	// Kind classifies the failure.
	Kind FailureKind
	// Message says what is wrong.
	Message string

	err error
}

// Error names the step, the receipt if any, and what is wrong.
func (f *Failure) Error() string {
	if f.Hook == "" && f.Step == "" {
		return f.Message
	}
	where := fmt.Sprintf("step %q (status.steps[%d])", f.Step, f.StepIndex)
	if f.Receipt >= 0 {
		where = fmt.Sprintf("step %q, status.steps[%d].receipts[%d]", f.Step, f.StepIndex, f.Receipt)
	}
	return where + ": " + f.Message
}

// Unwrap is the underlying error, such as ErrUnsigned.
func (f *Failure) Unwrap() error { return f.err }

// Verdict is what a step's evidence shows.
type Verdict string

// The verdicts.
const (
	// VerdictVerified is a passed step whose every validate command has
	// one signed receipt of the passing attempt, exiting 0, in order.
	VerdictVerified Verdict = "verified"
	// VerdictUnverified is a passed step whose receipts are complete and
	// consistent, but whose signatures could not be checked (no key).
	VerdictUnverified Verdict = "consistent, signatures not checked"
	// VerdictNoValidation is a passed step that declares no validate
	// commands and has no receipts: nothing was checked.
	VerdictNoValidation Verdict = "passed without validation"
	// VerdictInvalid is a step whose evidence does not support its phase.
	VerdictInvalid Verdict = "INVALID"
	// VerdictNotPassed is a step that does not claim to have passed; its
	// receipts, if any, are checked one by one and for their order.
	VerdictNotPassed Verdict = "not passed"
)

// Report is the verification of a Hook's whole claim: every step's phase
// against its receipts.
type Report struct {
	// KeyErr is why signatures were not checked; nil when they were.
	KeyErr error
	// Steps has one report per entry of status.steps.
	Steps []StepReport
}

// StepReport is the verification of one step.
type StepReport struct {
	// Index is the step's position in status.steps, and Name its name.
	Index int
	Name  string
	// Phase is the step's phase.
	Phase v1.StepPhase
	// Attempt is the attempt a passed step passed in.
	Attempt int32
	// Commands is how many validate commands the receipts must cover: the
	// signed commandCount, or, without one, the spec's; -1 when unknown.
	Commands int
	// Verdict is what the evidence shows.
	Verdict Verdict
	// Receipts has one entry per stored receipt.
	Receipts []ReceiptReport
	// Failures are the reasons for an INVALID verdict.
	Failures []*Failure
	// Notes are facts that do not make the step invalid, such as validate
	// commands changed since the step was validated.
	Notes []string
}

// ReceiptReport is the verification of one stored receipt on its own.
type ReceiptReport struct {
	// Index is the receipt's position in the step's receipts.
	Index int
	// Receipt is the receipt.
	Receipt *v1.Receipt
	// Statement is the decoded statement, verified when the Report's
	// KeyErr is nil; nil when it does not decode.
	Statement *Statement
	// Err is why the receipt fails on its own; nil when it does not.
	Err *Failure
}

// Status describes the receipt's own check in a few words: "verified",
// "INVALID: …", "UNSIGNED", or that the signature was not checked.
func (r *ReceiptReport) Status(keyErr error) string {
	switch {
	case r.Err != nil && r.Err.Kind == FailureUnsigned:
		return "UNSIGNED"
	case r.Err != nil:
		return "INVALID: " + r.Err.Message
	case errors.Is(keyErr, ErrNoKey):
		return "signed, not verified (no key available here)"
	case keyErr != nil:
		return "signed, not verified: " + keyErr.Error()
	}
	return "verified"
}

// Failures lists every failure of the report, step by step.
func (r *Report) Failures() []*Failure {
	var out []*Failure
	for i := range r.Steps {
		out = append(out, r.Steps[i].Failures...)
	}
	return out
}

// OK reports whether no step's evidence contradicts its phase.
func (r *Report) OK() bool { return len(r.Failures()) == 0 }

// Describe is the step's verdict in one line, for people and the recovery
// file: "verified: 2 of 2 validate commands, attempt 1", or
// "INVALID: <the failures>".
func (s *StepReport) Describe() string {
	switch s.Verdict {
	case VerdictInvalid:
		msgs := make([]string, len(s.Failures))
		for i, f := range s.Failures {
			msgs[i] = f.Message
			if f.Receipt >= 0 {
				msgs[i] = fmt.Sprintf("receipts[%d]: %s", f.Receipt, f.Message)
			}
		}
		return string(s.Verdict) + ": " + strings.Join(msgs, "; ")
	case VerdictNoValidation:
		return string(s.Verdict) + ": the step declares no validate commands"
	case VerdictVerified, VerdictUnverified:
		return fmt.Sprintf("%s: %d of %d validate commands, attempt %d", s.Verdict, len(s.Receipts), s.Commands, s.Attempt)
	}
	return string(s.Verdict)
}

// CheckHook checks hook's whole claim (Check) with km's key for it. Without
// a key it still checks everything but the signatures, and says why in
// KeyErr.
func CheckHook(ctx context.Context, hook *v1.Hook, km KeyManager) *Report {
	pub, err := km.PublicKey(ctx, hook)
	if err != nil {
		return Check(hook, nil, err)
	}
	return Check(hook, pub, nil)
}

// EvidenceFunc returns CheckHook with km, as the recovery file takes it.
func EvidenceFunc(ctx context.Context, km KeyManager) func(hook *v1.Hook) *Report {
	return func(hook *v1.Hook) *Report { return CheckHook(ctx, hook, km) }
}

// Check verifies hook's whole claim, not each signature alone: every
// Passed step must have, for the attempt it passed in, exactly one receipt
// per validate command of the run that passed it (the signed commandCount
// and validateSHA256; for version 1 receipts, the current spec), each
// signed for this Hook, this step and that attempt, exiting 0, in the order
// the commands ran; a completed Hook must have every step passed. A Passed
// step with no validate commands and no receipts is "passed without
// validation", not verified. Receipts of other steps are checked one by one
// and for their order.
//
// pub is the Hook's public key; nil checks everything but the signatures,
// with keyErr saying why (nil means ErrNoKey). Check is pure: it reads only
// its arguments.
func Check(hook *v1.Hook, pub ed25519.PublicKey, keyErr error) *Report {
	if pub == nil && keyErr == nil {
		keyErr = ErrNoKey
	}
	rep := &Report{}
	if pub == nil {
		rep.KeyErr = keyErr
	}
	for i := range hook.Status.Steps {
		c := &stepCheck{hook: hook, result: &hook.Status.Steps[i], rep: StepReport{Index: i, Commands: -1}}
		c.run(pub)
		rep.Steps = append(rep.Steps, c.rep)
	}
	checkCompleted(hook, rep)
	for i := range rep.Steps {
		s := &rep.Steps[i]
		switch {
		case len(s.Failures) > 0:
			s.Verdict = VerdictInvalid
		case s.Phase != v1.StepPassed:
			s.Verdict = VerdictNotPassed
		case s.Verdict == VerdictNoValidation:
		case pub == nil:
			s.Verdict = VerdictUnverified
		default:
			s.Verdict = VerdictVerified
		}
	}
	return rep
}

// checkCompleted fails a completed Hook's steps that did not pass, and the
// spec steps that have no result at all.
func checkCompleted(hook *v1.Hook, rep *Report) {
	if hook.Status.State != v1.HookCompleted {
		return
	}
	for i := range rep.Steps {
		s := &rep.Steps[i]
		if s.Phase != v1.StepPassed {
			s.Failures = append(s.Failures, decide(hook, s.Name, i, -1, FailureNotPassed,
				fmt.Sprintf("the hook is completed, but this step is %s", s.Phase), nil))
		}
	}
	for _, spec := range hook.Spec.Steps {
		if !slices.ContainsFunc(hook.Status.Steps, func(r v1.StepResult) bool { return r.Name == spec.Name }) {
			f := decide(hook, spec.Name, len(rep.Steps), -1, FailureNotPassed, "the hook is completed, but this step has no result", nil)
			rep.Steps = append(rep.Steps, StepReport{Index: len(rep.Steps), Name: spec.Name, Commands: -1, Failures: []*Failure{f}})
		}
	}
}

// stepCheck carries the check of one step.
type stepCheck struct {
	hook   *v1.Hook
	result *v1.StepResult
	rep    StepReport
}

func (c *stepCheck) fail(receipt int, kind FailureKind, format string, args ...any) {
	c.rep.Failures = append(c.rep.Failures, decide(c.hook, c.result.Name, c.rep.Index, receipt, kind, fmt.Sprintf(format, args...), nil))
}

// spec is the step's validate commands in the current spec; ok is false
// when the spec no longer has the step.
func (c *stepCheck) spec() (argvs [][]string, index int, ok bool) {
	for i := range c.hook.Spec.Steps {
		if s := &c.hook.Spec.Steps[i]; s.Name == c.result.Name {
			return Argvs(s.Validate), i, true
		}
	}
	return nil, -1, false
}

func (c *stepCheck) run(pub ed25519.PublicKey) {
	res := c.result
	c.rep.Name, c.rep.Phase = res.Name, res.Phase
	passed := res.Phase == v1.StepPassed
	if passed {
		c.rep.Attempt = res.Attempts
	}
	for j := range res.Receipts {
		st, f := verifyReceipt(c.hook, res.Name, &res.Receipts[j], pub)
		if f != nil {
			f = decide(c.hook, res.Name, c.rep.Index, j, f.Kind, f.Message, f.err)
			c.rep.Failures = append(c.rep.Failures, f)
		}
		c.rep.Receipts = append(c.rep.Receipts, ReceiptReport{Index: j, Receipt: &res.Receipts[j], Statement: st, Err: f})
	}
	specArgvs, specIndex, inSpec := c.spec()
	if len(res.Receipts) == 0 {
		if !passed {
			return
		}
		if len(specArgvs) > 0 {
			c.fail(-1, FailureMissing, "passed with no receipts, but spec.steps[%d].validate declares %d commands", specIndex, len(specArgvs))
			return
		}
		c.rep.Commands, c.rep.Verdict = 0, VerdictNoValidation
		return
	}
	c.checkRun(passed, specArgvs, inSpec)
}

// checkAttempt checks that the receipts rs are of one attempt (for a
// passed step, the one it passed in) and, for a passed step, exited 0.
func (c *stepCheck) checkAttempt(rs []ReceiptReport, passed bool) {
	attempt := rs[0].Receipt.Attempt
	if passed {
		attempt = c.result.Attempts
	}
	for _, r := range rs {
		if r.Receipt.Attempt != attempt {
			if passed {
				c.fail(r.Index, FailureOtherAttempt, "receipt of attempt %d; the step passed in attempt %d", r.Receipt.Attempt, attempt)
			} else {
				c.fail(r.Index, FailureOtherAttempt, "receipt of attempt %d among receipts of attempt %d: they are not of one validation run", r.Receipt.Attempt, attempt)
			}
		}
		if passed && r.Receipt.ExitCode != 0 {
			c.fail(r.Index, FailureExitCode, "exit code %d in a passed step: every validate command of a passed step exits 0 (a failed run marked passed?)", r.Receipt.ExitCode)
		}
	}
}

// checkRun checks that the receipts are those of one validation run, each
// command once and in order; for a passed step, every command of the run,
// of the attempt it passed in, exiting 0.
func (c *stepCheck) checkRun(passed bool, specArgvs [][]string, inSpec bool) {
	// A receipt of another Hook or step is no receipt of this step.
	rs := slices.DeleteFunc(slices.Clone(c.rep.Receipts), func(r ReceiptReport) bool {
		return r.Err != nil && (r.Err.Kind == FailureOtherHook || r.Err.Kind == FailureOtherStep)
	})
	if len(rs) == 0 {
		if passed && len(specArgvs) > 0 {
			c.fail(-1, FailureMissing, "no receipt of this step, and the spec declares %d validate commands", len(specArgvs))
		}
		return
	}
	c.checkAttempt(rs, passed)

	// The run's commands: what the receipts signed (version 2), else the spec.
	var count int
	digest, signed := "", false
	for _, r := range rs {
		if st := r.Statement; r.Err == nil && st != nil && st.Predicate.CommandCount != nil {
			if !signed {
				count, digest, signed = int(*st.Predicate.CommandCount), st.Predicate.ValidateSHA256, true
			} else if int(*st.Predicate.CommandCount) != count || st.Predicate.ValidateSHA256 != digest {
				c.fail(r.Index, FailureOtherAttempt, "receipt of a run of %d other validate commands (validateSHA256 %s…) than receipts[%d]'s",
					*st.Predicate.CommandCount, short(st.Predicate.ValidateSHA256), rs[0].Index)
			}
		}
	}
	var cmds [][]string // the run's argvs, when known
	switch {
	case signed && digest == ValidateDigest(specArgvs):
		cmds = specArgvs
	case signed && inSpec:
		c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("validated against %d validate commands that differ from the %d the spec declares now (validateSHA256 %s…, the spec's %s…)",
			count, len(specArgvs), short(digest), short(ValidateDigest(specArgvs))))
	case !signed:
		count, cmds = len(specArgvs), specArgvs
		if slices.ContainsFunc(rs, func(r ReceiptReport) bool { return r.Statement != nil && r.Statement.PredicateType == PredicateTypeV1 }) {
			c.rep.Notes = append(c.rep.Notes, "version 1 receipts sign no place in their run: completeness and order are checked against the current spec")
		}
	}
	c.rep.Commands = count

	positions := c.positions(rs, signed, cmds)
	seen := make(map[int]int, len(positions))
	last := -1
	for j, p := range positions {
		switch {
		case p < 0:
			continue
		case seenBefore(seen, p):
			c.fail(rs[j].Index, FailureDuplicate, "a second receipt of command %d of %d%s (the first is receipts[%d])", p+1, count, argvOf(cmds, p), seen[p])
			continue
		case p < last:
			c.fail(rs[j].Index, FailureOrder, "receipt of command %d of %d%s stored after the receipt of command %d: the commands ran in order", p+1, count, argvOf(cmds, p), last+1)
		}
		seen[p] = rs[j].Index
		last = max(last, p)
	}
	if !passed {
		return
	}
	for p := range count {
		if _, ok := seen[p]; !ok {
			c.fail(-1, FailureMissing, "no receipt of validate command %d of %d%s", p+1, count, argvOf(cmds, p))
		}
	}
}

func seenBefore(seen map[int]int, p int) bool {
	_, ok := seen[p]
	return ok
}

// positions is the place of each receipt in its run: the signed
// commandIndex of a receipt that verifies or, for any other (version 1,
// unsigned, tampered), the first unused command of the run with the receipt's
// argv. -1 for a receipt with no place, which is reported.
func (c *stepCheck) positions(rs []ReceiptReport, signed bool, cmds [][]string) []int {
	out := make([]int, len(rs))
	used := make([]bool, len(cmds))
	placed := func(r ReceiptReport) bool {
		return signed && r.Err == nil && r.Statement != nil && r.Statement.Predicate.CommandIndex != nil
	}
	for j, r := range rs {
		if placed(r) {
			out[j] = int(*r.Statement.Predicate.CommandIndex)
			if out[j] < len(used) {
				used[out[j]] = true
			}
		}
	}
	for j, r := range rs {
		if placed(r) {
			continue
		}
		out[j] = -1
		first, dup := -1, -1
		for p := range cmds {
			if slices.Equal(cmds[p], r.Receipt.Command) {
				if !used[p] && first < 0 {
					first = p
				}
				dup = p
			}
		}
		switch {
		case first >= 0:
			used[first], out[j] = true, first
		case dup >= 0:
			out[j] = dup
		case r.Err == nil || cmds != nil:
			c.fail(r.Index, FailureUnknownCommand, "command %q is not one of the step's validate commands", r.Receipt.Command)
		}
	}
	return out
}

func argvOf(cmds [][]string, p int) string {
	if p < 0 || p >= len(cmds) {
		return ""
	}
	return fmt.Sprintf(" (%s)", strings.Join(cmds[p], " "))
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// FailureObserver is told of each verification failure as it is decided.
type FailureObserver func(*Failure)

var observer struct {
	sync.RWMutex
	fn FailureObserver
}

// ObserveFailures makes fn see every verification failure from now on,
// such as a metrics counter keyed by Failure.Kind, and returns a function
// that restores the previous observer. Every check reports its failures,
// so a Hook rendered or verified twice reports them twice.
func ObserveFailures(fn FailureObserver) (restore func()) {
	observer.Lock()
	prev := observer.fn
	observer.fn = fn
	observer.Unlock()
	return func() {
		observer.Lock()
		observer.fn = prev
		observer.Unlock()
	}
}

// decide is the one place a verification failure is decided: every
// failure Check reports is made here and passed to the observer.
func decide(hook *v1.Hook, step string, stepIndex, receipt int, kind FailureKind, msg string, err error) *Failure {
	f := &Failure{Hook: hook.Namespace + "/" + hook.Name, Step: step, StepIndex: stepIndex, Receipt: receipt, Kind: kind, Message: msg, err: err}
	observer.RLock()
	fn := observer.fn
	observer.RUnlock()
	if fn != nil {
		fn(f)
	}
	return f
}

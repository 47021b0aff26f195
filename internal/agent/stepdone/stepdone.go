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

// Package stepdone is the step protocol, callable in-process. Begin is
// `step begin`: step_running, with the files the step touches detected in
// its workspace. Run is `step done`: move
// the Hook to step_validating, run the current step's validate commands
// while heartbeating, sign one receipt per command, and record pass or
// fail_validation; a signal (or a cancelled context) during the run kills
// the running command and moves the Hook to recovering
// (validation_interrupted); a pass is followed by its checkpoints
// (validation_pass, step_complete). Every status change goes through
// hookwrite.
package stepdone

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/hook/validation"
	"github.com/tether-dev/tether/internal/workspace/stepfiles"
)

// maxMessage is status.history[].message's MaxLength.
const maxMessage = 1024

// Options configure one run of the protocol.
type Options struct {
	// Client reads and writes the Hook. Required.
	Client client.Client
	// Key names the Hook. Required.
	Key client.ObjectKey
	// Write says who acts, records the Events and sets the clock.
	Write hookwrite.Options
	// Keys provides the signer of the Hook's receipts. Required.
	Keys receipts.KeyManager
	// StaleAfter is the Hook's effective staleAfter; the heartbeat is
	// refreshed every third of it. Nil means the spec's value, else
	// config.DefaultStaleAfter.
	StaleAfter func(hook *v1.Hook) time.Duration
	// Out receives the progress lines and the commands' output; nil
	// discards them.
	Out io.Writer
	// Signals interrupt the validation; nil means SIGINT and SIGTERM.
	Signals []os.Signal
	// Checkpoints, when set, takes the checkpoints of a step that passed
	// (TakePassedCheckpoints) before Run returns.
	Checkpoints bool
}

// Outcome is the result of a run that recorded a conclusion.
type Outcome struct {
	// Hook is the Hook as last written.
	Hook *v1.Hook
	// Passed is true when every validate command passed.
	Passed bool
	// Failure describes the failed command when Passed is false.
	Failure string
	// Step is the name of the step that was validated.
	Step string
	// Validations is how many validate commands the step declares.
	Validations int
	// Checkpoints are the checkpoints taken after the pass, with
	// Options.Checkpoints.
	Checkpoints []*v1.Checkpoint
}

// Run runs `step done` on the Hook opts.Key. The transition is checked, and
// the signing key obtained, before anything is written, so an invalid call
// or a bad key changes nothing.
//
// It returns a nil Outcome with the error when nothing was concluded. A
// recorded conclusion is returned with a nil error on a pass, and with an
// error on a failed validation or an interruption (then the Hook is
// recovering); the caller shows the Hook either way.
//
// With opts.Checkpoints, a pass is followed by its checkpoints: a failure
// to take them is a warning on opts.Out, never Run's error, as the step
// has passed whatever happens to them.
func Run(ctx context.Context, opts Options) (*Outcome, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	o, err := run(ctx, &opts)
	if err == nil && o != nil && o.Passed && opts.Checkpoints {
		o.Checkpoints = TakePassedCheckpoints(ctx, opts.Client, o, opts.Write, opts.Out)
	}
	return o, err
}

// PassedTriggers are the triggers of the checkpoints of a step that passed
// with validations validate commands: validation_pass when it had any,
// then step_complete.
func PassedTriggers(validations int) []v1.CheckpointTrigger {
	if validations > 0 {
		return []v1.CheckpointTrigger{v1.TriggerValidationPass, v1.TriggerStepComplete}
	}
	return []v1.CheckpointTrigger{v1.TriggerStepComplete}
}

// TakePassedCheckpoints takes the checkpoints of the step o passed, one per
// PassedTriggers, in spec.workspace or, without one, in the working
// directory where the validations ran. It reports each on out as
// "checkpoint.GROUP/NAME created (TRIGGER, snapshot SHORT)"; the first
// failure is a warning there and ends it.
func TakePassedCheckpoints(ctx context.Context, c client.Client, o *Outcome, write hookwrite.Options, out io.Writer) []*v1.Checkpoint {
	var taken []*v1.Checkpoint
	for _, t := range PassedTriggers(o.Validations) {
		desc := fmt.Sprintf("step %q passed", o.Step)
		if t == v1.TriggerValidationPass {
			desc = fmt.Sprintf("step %q: %d validation(s) passed", o.Step, o.Validations)
		}
		req := checkpoint.Request{Trigger: t, Description: desc, Step: o.Step, OrWorkingDir: true, Recorder: write.Recorder, Actor: write.Actor}
		res, err := checkpoint.Take(ctx, c, client.ObjectKeyFromObject(o.Hook), req)
		if err != nil {
			_, _ = fmt.Fprintf(out, "warning: %s checkpoint: %v\n", t, err)
			return taken
		}
		taken = append(taken, res.Checkpoint)
		_, _ = fmt.Fprintf(out, "checkpoint.%s/%s created (%s, snapshot %s)\n", v1.GroupVersion.Group, res.Checkpoint.Name, t, res.Checkpoint.Spec.Git.SnapshotShort)
	}
	return taken
}

func run(ctx context.Context, opts *Options) (*Outcome, error) {
	out := opts.Out
	hook := &v1.Hook{}
	if err := opts.Client.Get(ctx, opts.Key, hook); err != nil {
		return nil, err
	}
	// An invalid transition is reported before a first use creates a key.
	if _, err := hookwrite.Apply(hook.DeepCopy(), hookfsm.Input{Event: hookfsm.Validate}, opts.Write); err != nil {
		return nil, err
	}
	signer, err := opts.Keys.Signer(ctx, hook)
	if err != nil {
		return nil, fmt.Errorf("receipt signing key: %w", err)
	}
	workspace, err := Workspace(hook)
	if err != nil {
		return nil, err
	}

	hook, err = transition(ctx, opts, hookwrite.Input(hookfsm.Input{Event: hookfsm.Validate}))
	if err != nil {
		return nil, err
	}
	cs := *hook.Status.CurrentStep
	step := hook.Spec.Steps[cs.Index]
	commands := "commands"
	if len(step.Validate) == 1 {
		commands = "command"
	}
	_, _ = fmt.Fprintf(out, "validating step %q (%d/%d), attempt %d: %d %s in %s\n",
		cs.Name, cs.Index+1, len(hook.Spec.Steps), cs.Attempt, len(step.Validate), commands, workspace)

	signals := opts.Signals
	if signals == nil {
		signals = []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	runCtx, stop := signal.NotifyContext(ctx, signals...)
	defer stop()
	hbCtx, stopHeartbeats := context.WithCancel(runCtx)
	var hbDone sync.WaitGroup
	hbDone.Add(1)
	go func() {
		defer hbDone.Done()
		heartbeatWhileValidating(hbCtx, opts, out, hook, cs)
	}()
	results, runErr := validation.Run(runCtx, workspace, step.Validate, validation.Options{
		Stdout: out, Stderr: out,
		OnStart: func(_ int, c v1.ValidationCommand) {
			_, _ = fmt.Fprintf(out, "+ %s\n", strings.Join(c.Command, " "))
		},
	})
	stopHeartbeats()
	hbDone.Wait()

	if runErr != nil {
		return interrupted(context.WithoutCancel(ctx), opts, cs, runErr)
	}
	return conclude(ctx, opts, cs, results, signer, step, stepFiles(ctx, out, hook, cs))
}

// stepFiles is the files the step changed since its base tree, for its
// pass; nil (the files its begin recorded are kept) without a
// spec.workspace, without a base, or when git cannot tell.
func stepFiles(ctx context.Context, out io.Writer, hook *v1.Hook, cs v1.CurrentStep) []string {
	if hook.Spec.Workspace == "" || cs.BaseTree == "" {
		return nil
	}
	c, err := stepfiles.Since(ctx, hook.Spec.Workspace, cs.BaseTree)
	if err != nil {
		_, _ = fmt.Fprintf(out, "warning: the files step %q changed: %v; keeping those its begin recorded\n", cs.Name, err)
		return nil
	}
	if c.Truncated {
		_, _ = fmt.Fprintf(out, "warning: step %q changed more than %d files; recording the first %d\n", cs.Name, stepfiles.Max, stepfiles.Max)
	}
	return c.Files
}

func transition(ctx context.Context, opts *Options, build hookwrite.Build) (*v1.Hook, error) {
	h, _, err := hookwrite.Transition(ctx, opts.Client, opts.Key, build, opts.Write)
	return h, err
}

// Workspace is the directory validations run in: spec.workspace, or the
// working directory when it is unset. It must be a directory.
func Workspace(hook *v1.Hook) (string, error) {
	ws := hook.Spec.Workspace
	if ws == "" {
		return os.Getwd()
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return "", fmt.Errorf("hook %q: spec.workspace: %w", hook.Name, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("hook %q: spec.workspace: %s is not a directory", hook.Name, ws)
	}
	return ws, nil
}

// conclude writes pass or fail_validation with the signed receipts, if the
// hook is still validating the same attempt.
func conclude(ctx context.Context, opts *Options, cs v1.CurrentStep,
	results []validation.Result, signer receipts.ReceiptSigner, step v1.Step, files []string) (*Outcome, error) {
	passed := len(results) == len(step.Validate)
	var failure string
	for i := range results {
		if !results[i].Passed() {
			passed, failure = false, DescribeFailure(&results[i])
		}
	}
	event := hookfsm.Pass
	if !passed {
		event = hookfsm.FailValidation
	}
	hook, err := transition(ctx, opts, func(h *v1.Hook) (hookfsm.Input, error) {
		if err := sameAttempt(h, cs); err != nil {
			return hookfsm.Input{}, err
		}
		signed := make([]v1.Receipt, len(results))
		for i := range results {
			signed[i] = receipts.FromResult(&results[i], cs.Attempt)
		}
		// Each receipt signs its place among the commands that ran, so
		// that a dropped, duplicated or reordered receipt is detected.
		if err := receipts.SignRun(signer, h, cs.Name, step.Validate, signed); err != nil {
			return hookfsm.Input{}, err
		}
		in := hookfsm.Input{Event: event, Receipts: signed, Message: truncate(failure, maxMessage)}
		if passed {
			in.Files = files
		}
		return in, nil
	})
	if err != nil {
		return nil, err
	}
	o := &Outcome{Hook: hook, Passed: passed, Failure: failure, Step: cs.Name, Validations: len(step.Validate)}
	if !passed {
		return o, fmt.Errorf("step %q attempt %d failed validation: %s", cs.Name, cs.Attempt, failure)
	}
	return o, nil
}

// interrupted records that a signal stopped the validation: the hook moves
// to recovering with crash type validation_interrupted.
func interrupted(ctx context.Context, opts *Options, cs v1.CurrentStep, cause error) (*Outcome, error) {
	hook, err := transition(ctx, opts, func(h *v1.Hook) (hookfsm.Input, error) {
		if err := sameAttempt(h, cs); err != nil {
			return hookfsm.Input{}, err
		}
		return hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashValidationInterrupted}}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("validation interrupted (%w), and recording it failed: %w", cause, err)
	}
	return &Outcome{Hook: hook, Failure: cause.Error(), Step: cs.Name},
		fmt.Errorf("validation interrupted (%w); the hook is recovering (validation_interrupted)", cause)
}

// sameAttempt refuses to conclude a validation when the hook has moved on
// since it began, for example to recovering after a missed heartbeat.
func sameAttempt(h *v1.Hook, cs v1.CurrentStep) error {
	now := h.Status.CurrentStep
	if h.Status.State != v1.HookStepValidating || now == nil || now.Index != cs.Index || now.Attempt != cs.Attempt {
		return fmt.Errorf("the hook left step_validating of step %q attempt %d while validating (it is %s); the results are discarded",
			cs.Name, cs.Attempt, hookfsm.Describe(h))
	}
	return nil
}

// heartbeatWhileValidating refreshes lastHeartbeat every third of the
// effective staleAfter, so a long validation is not mistaken for a dead
// agent, until ctx ends or the hook leaves this validation.
func heartbeatWhileValidating(ctx context.Context, opts *Options, out io.Writer, hook *v1.Hook, cs v1.CurrentStep) {
	stale := config.DefaultStaleAfter
	if opts.StaleAfter != nil {
		stale = opts.StaleAfter(hook)
	} else if hook.Spec.StaleAfter != nil && hook.Spec.StaleAfter.Duration > 0 {
		stale = hook.Spec.StaleAfter.Duration
	}
	tick := time.NewTicker(stale / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_, err := transition(ctx, opts, func(h *v1.Hook) (hookfsm.Input, error) {
			if err := sameAttempt(h, cs); err != nil {
				return hookfsm.Input{}, err
			}
			return hookfsm.Input{Event: hookfsm.Heartbeat}, nil
		})
		if err != nil && ctx.Err() == nil {
			_, _ = fmt.Fprintf(out, "warning: heartbeat: %v\n", err)
		}
	}
}

// DescribeFailure says in a few words why a validate command failed.
func DescribeFailure(r *validation.Result) string {
	cmd := strings.Join(r.Command, " ")
	switch {
	case r.Err != nil:
		return fmt.Sprintf("%q could not start: %v", cmd, r.Err)
	case r.TimedOut:
		return fmt.Sprintf("%q timed out after %s; its process group was killed", cmd, r.Duration.Round(time.Millisecond))
	case r.ExitCode == validation.ExitKilled:
		return fmt.Sprintf("%q was killed by a signal", cmd)
	default:
		return fmt.Sprintf("%q exited %d", cmd, r.ExitCode)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

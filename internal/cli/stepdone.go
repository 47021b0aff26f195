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

package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/hook/validation"
)

func newStepDoneCommand(g *GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "done HOOK",
		Short: "Run the current step's validations, sign their receipts and advance the hook",
		Long: `Finish the hook's current step: move it to step_validating, run each of the
step's validate commands in spec.workspace (stopping at the first failure),
sign one receipt per command with the task's key, and record them with the
outcome. A pass moves to the next step, or completes the hook; a failure
starts the next attempt, or fails the hook when the step has used
spec.maxAttempts attempts, and exits 1.

The hook's heartbeat is refreshed while the validations run. SIGINT or
SIGTERM kills the running command's process group and moves the hook to
recovering (validation_interrupted); the interrupted run does not count as
an attempt.`,
		Args: exactHook,
	}
	v := newHookVerb(g, cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := v.open(cmd)
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		return v.stepDone(cmd.Context(), b, args[0])
	}
	return cmd
}

// stepDone runs `step done`. The signing key is checked before anything is
// written, so a bad key changes nothing.
func (v *hookVerb) stepDone(ctx context.Context, b *Backend, name string) error {
	hook := &v1.Hook{}
	if err := b.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, hook); err != nil {
		return explainHookErr(name, err)
	}
	// An invalid transition is reported before a first use creates a key.
	if _, err := hookfsm.Apply(hook, hookfsm.Input{Event: hookfsm.Validate, Now: metav1.Now(), Actor: actor()}); err != nil {
		return err
	}
	km, err := keyManager(v.global, b)
	if err != nil {
		return err
	}
	signer, err := km.Signer(ctx, hook)
	if err != nil {
		return fmt.Errorf("receipt signing key: %w", err)
	}
	workspace, err := workspaceOf(hook)
	if err != nil {
		return err
	}

	hook, err = transition(ctx, b, name, func(*v1.Hook) (hookfsm.Input, error) {
		return hookfsm.Input{Event: hookfsm.Validate}, nil
	})
	if err != nil {
		return err
	}
	cs := *hook.Status.CurrentStep
	step := hook.Spec.Steps[cs.Index]
	_, _ = fmt.Fprintf(v.errOut, "validating %s: %d command(s) in %s\n", hookfsm.Describe(hook), len(step.Validate), workspace)

	runCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hbCtx, stopHeartbeats := context.WithCancel(runCtx)
	var hbDone sync.WaitGroup
	hbDone.Add(1)
	go func() {
		defer hbDone.Done()
		v.heartbeatWhileValidating(hbCtx, b, hook, cs)
	}()
	results, runErr := validation.Run(runCtx, workspace, step.Validate, validation.Options{
		Stdout: v.errOut, Stderr: v.errOut,
		OnStart: func(i int, c v1.ValidationCommand) {
			_, _ = fmt.Fprintf(v.errOut, "+ %s\n", strings.Join(c.Command, " "))
		},
	})
	stopHeartbeats()
	hbDone.Wait()

	if runErr != nil {
		return v.interrupted(context.WithoutCancel(ctx), b, name, cs, runErr)
	}
	return v.conclude(ctx, b, name, cs, results, signer, step)
}

// workspaceOf is the directory validations run in: spec.workspace, or the
// working directory when it is unset. It must be a directory.
func workspaceOf(hook *v1.Hook) (string, error) {
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
func (v *hookVerb) conclude(ctx context.Context, b *Backend, name string, cs v1.CurrentStep,
	results []validation.Result, signer receipts.ReceiptSigner, step v1.Step) error {
	passed := len(results) == len(step.Validate)
	var failure string
	for i := range results {
		if !results[i].Passed() {
			passed, failure = false, describeFailure(&results[i])
		}
	}
	event := hookfsm.Pass
	if !passed {
		event = hookfsm.FailValidation
	}
	hook, err := transition(ctx, b, name, func(h *v1.Hook) (hookfsm.Input, error) {
		if err := sameAttempt(h, cs); err != nil {
			return hookfsm.Input{}, err
		}
		signed := make([]v1.Receipt, len(results))
		for i := range results {
			signed[i] = receipts.FromResult(&results[i], cs.Attempt)
			if err := receipts.Sign(signer, h, cs.Name, &signed[i]); err != nil {
				return hookfsm.Input{}, err
			}
		}
		return hookfsm.Input{Event: event, Receipts: signed, Message: truncate(failure, 1024)}, nil
	})
	if err != nil {
		return err
	}
	if err := v.show(b, hook); err != nil {
		return err
	}
	if !passed {
		return fmt.Errorf("step %q attempt %d failed validation: %s", cs.Name, cs.Attempt, failure)
	}
	v.checkpointPassedStep(ctx, b, name, cs.Name, len(results))
	return nil
}

// interrupted records that a signal stopped the validation: the hook moves
// to recovering with crash type validation_interrupted.
func (v *hookVerb) interrupted(ctx context.Context, b *Backend, name string, cs v1.CurrentStep, cause error) error {
	hook, err := transition(ctx, b, name, func(h *v1.Hook) (hookfsm.Input, error) {
		if err := sameAttempt(h, cs); err != nil {
			return hookfsm.Input{}, err
		}
		return hookfsm.Input{Event: hookfsm.Interrupt, Crash: &hookfsm.Crash{Type: v1.CrashValidationInterrupted}}, nil
	})
	if err != nil {
		return fmt.Errorf("validation interrupted (%w), and recording it failed: %w", cause, err)
	}
	if err := v.show(b, hook); err != nil {
		return err
	}
	return fmt.Errorf("validation interrupted (%w); the hook is recovering (validation_interrupted)", cause)
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
// effective staleAfter (spec, else the configuration file), so a long
// validation is not mistaken for a dead agent, until ctx ends or the hook
// leaves this validation.
func (v *hookVerb) heartbeatWhileValidating(ctx context.Context, b *Backend, hook *v1.Hook, cs v1.CurrentStep) {
	stale := config.DefaultStaleAfter
	if cfg, err := config.Load(v.global.ConfigFile); err == nil {
		stale = cfg.Effective(&hook.Spec).StaleAfter
	}
	tick := time.NewTicker(stale / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_, err := transition(ctx, b, hook.Name, func(h *v1.Hook) (hookfsm.Input, error) {
			if err := sameAttempt(h, cs); err != nil {
				return hookfsm.Input{}, err
			}
			return hookfsm.Input{Event: hookfsm.Heartbeat}, nil
		})
		if err != nil && ctx.Err() == nil {
			_, _ = fmt.Fprintf(v.errOut, "warning: heartbeat: %v\n", err)
		}
	}
}

func describeFailure(r *validation.Result) string {
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

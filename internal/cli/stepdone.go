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
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/stepdone"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
)

func newStepDoneCommand(g *GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "done [HOOK]",
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
an attempt.` + hookArgNote,
		Args: optionalHook,
	}
	v := newHookVerb(g, cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := v.open(cmd)
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		key, err := resolveHook(cmd.Context(), cmd, b, args, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		return v.stepDone(cmd.Context(), b, key.Name)
	}
	return cmd
}

// stepDone runs `step done` through the stepdone package, with the
// checkpoints of a pass, and shows the Hook it concluded.
func (v *hookVerb) stepDone(ctx context.Context, b *Backend, name string) error {
	km, err := b.KeyManager()
	if err != nil {
		return err
	}
	rec, err := b.Recorder()
	if err != nil {
		return err
	}
	out, err := stepdone.Run(ctx, stepdone.Options{
		Client: b.Client,
		Key:    client.ObjectKey{Namespace: b.Namespace, Name: name},
		Write:  hookwrite.Options{Actor: actor(ctx), Recorder: rec},
		Keys:   km,
		StaleAfter: func(hook *v1.Hook) time.Duration {
			cfg, err := config.Load(v.global.ConfigFile)
			if err != nil {
				return config.DefaultStaleAfter
			}
			return cfg.Effective(&hook.Spec).StaleAfter
		},
		Out:         v.errOut,
		Checkpoints: true,
	})
	if out == nil {
		return explainHookErr(name, err)
	}
	if showErr := v.show(b, out.Hook); showErr != nil {
		return showErr
	}
	return err
}

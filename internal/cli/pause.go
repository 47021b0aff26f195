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
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/pause"
)

// newPauseCommands returns `tether pause` and `tether unpause`.
func newPauseCommands(g *GlobalOptions) []*cobra.Command {
	var reason string
	pauseCmd := &cobra.Command{
		Use:   "pause HOOK [--reason TEXT]",
		Short: "Pause a Hook: no stale detection, no claims, and its agent may stop",
		Long: `Pause a Hook: set spec.suspend to true and keep --reason in the
agents.tether.dev/pause-reason annotation.

While a Hook is paused, tether makes no time-based transition of it (no stale
detection), claim --next skips it, the agent's Stop hook lets the agent stop,
and the recovery file tells the agent to stop and why. Agent verbs still
work. tether unpause continues.

Pausing a paused Hook with the same reason changes nothing and prints
"unchanged". A completed, failed or abandoned Hook is refused.`,
		Example: `  tether pause fix-login --reason "reviewing the plan first"
  tether unpause fix-login`,
		Args: exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("reason") && strings.TrimSpace(reason) == "" {
				return fmt.Errorf("--reason: must not be empty")
			}
			return runPause(cmd, g, args[0], "paused", pause.Pause, reason)
		},
	}
	pauseCmd.Flags().StringVar(&reason, "reason", "", "why the Hook is paused; the agent and tether describe show it")
	unpauseCmd := &cobra.Command{
		Use:   "unpause HOOK",
		Short: "Continue a paused Hook",
		Long: `Unpause a Hook: set spec.suspend to false and remove the pause reason.
Stale detection and claims start again. Unpausing a Hook that is not paused
changes nothing and prints "unchanged".`,
		Args: exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPause(cmd, g, args[0], "unpaused", pause.Unpause, "")
		},
	}
	return []*cobra.Command{pauseCmd, unpauseCmd}
}

type pauseFunc func(context.Context, client.Client, client.ObjectKey, pause.Options) (pause.Result, error)

func runPause(cmd *cobra.Command, g *GlobalOptions, name, done string, do pauseFunc, reason string) error {
	b, err := g.Backend(cmd.Context())
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	line, err := pauseHook(cmd.Context(), b, client.ObjectKey{Namespace: b.Namespace, Name: name}, done, do, actor(cmd.Context()), reason)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), line)
	return err
}

// pauseHook pauses or unpauses (do) the Hook at key for actor and returns
// what tether pause prints: the Hook and done, or "unchanged".
func pauseHook(ctx context.Context, b *Backend, key client.ObjectKey, done string, do pauseFunc, actor, reason string) (string, error) {
	rec, err := b.Recorder()
	if err != nil {
		return "", err
	}
	res, err := do(ctx, b.Client, key, pause.Options{Actor: actor, Reason: reason, Recorder: rec})
	var terminal *pause.TerminalError
	if err != nil && !errors.As(err, &terminal) {
		return "", explainHookErr(key.Name, err)
	}
	if err != nil {
		return "", err
	}
	if !res.Changed {
		done = "unchanged"
	}
	return fmt.Sprintf("hook.%s/%s %s", v1.GroupVersion.Group, key.Name, done), nil
}

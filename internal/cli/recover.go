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
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

func newRecoverCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "recover [HOOK]",
		Short: "Print a Hook's recovery file: where the task stands and the one thing to do next",
		Long: `Print the recovery file of a Hook: its state, step and attempt, the one
next action, the last checkpoint and the files changed since it (from git
when the workspace is reachable), the steps that must not be repeated with
their receipts, what was being worked on, the checkpoint timeline and recent
history.

It is rendered from the Hook object, so it works whether or not tether run
is running, and prints the same text as the file tether run keeps up to date,
except that it finds the files changed since the last checkpoint with git.` + hookArgNote,
		Args: optionalHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForReading()
			b, err := g.ReadBackend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			key, err := resolveHook(cmd.Context(), cmd, b, args, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			text, err := recoveryText(cmd.Context(), b, key, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(text)
			return err
		},
	}
}

// recoveryText renders the recovery file of the Hook at key, as tether
// recover prints it; warnings about the checkpoints go to errOut.
func recoveryText(ctx context.Context, b *Backend, key client.ObjectKey, errOut io.Writer) ([]byte, error) {
	// Without a usable key the file still renders, saying so per receipt.
	var evidence recoveryfile.Evidence
	if km, err := b.KeyManager(); err == nil {
		evidence = receipts.EvidenceFunc(ctx, km)
	}
	return recoveryfile.RenderLive(ctx, b.Client, key, evidence, func(msg string) {
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", msg)
	})
}

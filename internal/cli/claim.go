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
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tether-dev/tether/internal/hook/claim"
)

// ExitNothingToClaim is the exit code of `claim --next` when no Hook is
// claimable, so that a loop can tell "no work" from an error.
const ExitNothingToClaim = 3

func newClaimCommand(g *GlobalOptions) *cobra.Command {
	var worker string
	var next bool
	cmd := &cobra.Command{
		Use:   "claim [HOOK] --worker W | claim --next --worker W",
		Short: "Make a Worker the assignee of a Hook, atomically",
		Long: `Set a Hook's spec.assignee to a Worker, only if it is empty.

The claim is a compare-and-swap on the Hook's resourceVersion: when two
claimers race, exactly one wins; the other gets a conflict (exit 2).

With --next, claim the first claimable Hook of the namespace: unassigned,
not suspended, and recovering, step_pending or initializing, in that order,
oldest first (then by name). On success the claimed Hook is printed as
hook.agents.tether.dev/NAME. When nothing is claimable nothing is printed
and the exit code is 3.`,
		Example: `  tether claim fix-login --worker agent-1
  while hook=$(tether claim --next --worker agent-1); do work "$hook"; done`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case next && len(args) > 0:
				return errors.New("give either HOOK or --next, not both")
			case !next && len(args) != 1:
				return errors.New("give one HOOK, or --next")
			case worker == "":
				return errors.New("--worker is required")
			}
			b, err := g.Backend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			if next {
				h, err := claim.Next(cmd.Context(), b.Client, b.Namespace, worker)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "hook.agents.tether.dev/%s\n", h.Name)
				return err
			}
			h, err := claim.One(cmd.Context(), b.Client, types.NamespacedName{Namespace: b.Namespace, Name: args[0]}, worker)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "hook.agents.tether.dev/%s\n", h.Name)
			return err
		},
	}
	cmd.Flags().StringVar(&worker, "worker", "", "the Worker that claims (required)")
	cmd.Flags().BoolVar(&next, "next", false, "claim the first claimable Hook")
	return cmd
}

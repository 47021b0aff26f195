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
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/prompt"
)

// newAgentPromptCommand is `tether agent prompt HOOK`.
func newAgentPromptCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "prompt HOOK",
		Short: "Print instructions that let any CLI agent report its progress on a Hook",
		Long: `Print a short block of instructions for a coding agent without hooks:
how to read the recovery file and which agent verbs to run when (step begin,
heartbeat, checkpoint, step done, await), with the Hook's name and namespace
filled in. Put it in the agent's prompt or its AGENTS.md.

The Hook must exist; the text depends only on its name and namespace.`,
		Example: `  tether agent prompt fix-login >> AGENTS.md`,
		Args:    exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := g.Backend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			if err := b.Client.Get(cmd.Context(), client.ObjectKey{Namespace: b.Namespace, Name: args[0]}, &v1.Hook{}); err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(prompt.Render(args[0], b.Namespace))
			return err
		},
	}
}

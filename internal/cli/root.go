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

// Package cli implements the tether command line: the kubectl-style verbs,
// the agent verbs and `tether run`.
package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/internal/startupgc"
)

// KubectlPluginPrefix is the file name prefix kubectl looks for on $PATH:
// installed as kubectl-tether, the binary runs as `kubectl tether`.
const KubectlPluginPrefix = "kubectl-"

// displayName is the command name users type, from argv[0]: "kubectl tether"
// when run as a kubectl plugin, else "tether".
func displayName(argv0 string) string {
	base := filepath.Base(argv0)
	if plugin, ok := strings.CutPrefix(base, KubectlPluginPrefix); ok && plugin != "" {
		return "kubectl " + strings.ReplaceAll(plugin, "_", "-")
	}
	return "tether"
}

// NewRootCommand builds the tether command tree.
func NewRootCommand() *cobra.Command {
	opts := NewGlobalOptions()
	root := &cobra.Command{
		Use:   "tether",
		Short: "Crash recovery for AI coding agents",
		Long: `tether keeps the work of AI coding agents recoverable.

Tasks (Hooks), agent processes (Workers) and progress snapshots (Checkpoints)
are declarative resources, reconciled on a local file store or on a
Kubernetes cluster, and inspected kubectl-style.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: displayName(os.Args[0])},
		// The verb is known: back to the default GOGC, which the read
		// verbs then raise for themselves.
		// The verb also names the actor of what it writes.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			startupgc.End()
			cmd.SetContext(withVerb(cmd.Context(), cmd))
		},
	}
	opts.AddFlags(root.PersistentFlags())
	root.AddCommand(newVersionCommand(), newRunCommand(opts))
	root.AddCommand(newGetCommand(opts), newDescribeCommand(opts), newEventsCommand(opts), newExplainCommand(), newTopCommand(opts), newConsoleCommand(opts))
	root.AddCommand(newApplyCommand(opts), newDeleteCommand(opts), newEditCommand(opts))
	root.AddCommand(newAgentCommands(opts)...)
	root.AddCommand(newPauseCommands(opts)...)
	root.AddCommand(newRepairCommand(opts))
	root.AddCommand(newInitCommand(opts))
	root.AddCommand(newRecoverCommand(opts), newGCCommand(opts), newDoctorCommand(opts))
	root.AddCommand(newWorkerCommand(opts), newClaimCommand(opts), newLogsCommand(opts))
	agent := withAgentHookCommands(newAgentCommand(), opts)
	agent.AddCommand(newAgentPromptCommand(opts))
	root.AddCommand(newCheckpointCommand(opts), agent, newHooksCommand())
	return root
}

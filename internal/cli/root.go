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
	"github.com/spf13/cobra"
)

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
	}
	opts.AddFlags(root.PersistentFlags())
	root.AddCommand(newVersionCommand(), newRunCommand(opts))
	root.AddCommand(newWorkerCommand(opts), newClaimCommand(opts), newLogsCommand(opts))
	return root
}

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
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/internal/config"
)

// newAgentCommand is the `agent` group: tether's integration with coding
// agents.
func newAgentCommand() *cobra.Command {
	agent := &cobra.Command{
		Use:   "agent",
		Short: "Integrate tether with coding agents",
	}
	agent.AddCommand(newAgentInstallCommand(true), newAgentInstallCommand(false))
	return agent
}

func newAgentInstallCommand(install bool) *cobra.Command {
	var scope, dir string
	var dryRun bool
	names := strings.Join(agentNames(), "|")
	verb, short, long := "install", "Install tether's hooks into an agent's settings",
		`Merge tether's hook entries ("<tether> agent hook", for the events each agent
has: see docs/agents.md) into the agent's hooks file of --scope. Every other
key and hook is kept; installing twice changes nothing; the file is written
atomically; a file tether cannot parse is refused with its line and column.
Agents: `+agentTitles()+`.`
	if !install {
		verb, short, long = "uninstall", "Remove tether's hooks from an agent's settings",
			`Remove exactly tether's hook entries from the agent's hooks file; a file
still as install wrote it is given back byte for byte, and otherwise a group,
event or "hooks" object goes only when that removal empties it. See
docs/agents.md.`
	}
	cmd := &cobra.Command{
		Use:       verb + " " + names + " [--scope project|user|local] [--dir DIR] [--dry-run]",
		Short:     short,
		Long:      long,
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: agentNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := agentKinds[args[0]]
			res, err := editAgentHooks(kind, install, scope, dir, dryRun)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if dryRun {
				_, err := out.Write(res.After)
				return err
			}
			_, err = fmt.Fprintln(out, agentEditLine(kind, install, res))
			return err
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "project", "which hooks file: "+scopeHelp())
	cmd.Flags().StringVar(&dir, "dir", ".", "the project root")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the resulting hooks file instead of writing it")
	return cmd
}

// editAgentHooks installs (or uninstalls) tether's entries in the hooks
// file of kind's scope under the project root dir; `tether agent install`
// and `tether init --agent` share it.
func editAgentHooks(kind *agentKind, install bool, scope, dir string, dryRun bool) (agentEditResult, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return agentEditResult{}, fmt.Errorf("--dir: %w", err)
	}
	req := agentEdit{Install: install, Scope: scope, Dir: root, DryRun: dryRun}
	// Only the user scope needs it; its installer says so when it is missing.
	req.Home, _ = os.UserHomeDir()
	// What install changed is recorded in tether's home, not in the project,
	// so that uninstall gives the file back byte for byte.
	if h, err := config.Home(); err == nil {
		req.RecordDir = filepath.Join(h, "agent-installs")
	}
	if install {
		if req.Tether, err = os.Executable(); err != nil {
			return agentEditResult{}, fmt.Errorf("finding the tether binary: %w", err)
		}
	}
	return kind.Edit(req)
}

// agentEditLine is the line that reports res: `claude hooks installed:
// PATH`, `removed` or `unchanged`.
func agentEditLine(kind *agentKind, install bool, res agentEditResult) string {
	state := map[bool]string{true: "installed", false: "removed"}[install]
	if !res.Changed {
		state = "unchanged"
	}
	return fmt.Sprintf("%s hooks %s: %s", kind.Name, state, res.Path)
}

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

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
	"github.com/tether-dev/tether/internal/config"
)

// agentNames are the agents `tether agent install` knows.
var agentNames = []string{"claude"}

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
	verb, short, long := "install", "Install tether's hooks into an agent's settings",
		`Merge tether's hook entries ("<tether> agent hook" for SessionStart,
UserPromptSubmit, PostToolUse, PostToolUseFailure, PreCompact, Stop and
SessionEnd) into Claude
Code's settings file. Every other key and hook is kept; installing twice
changes nothing; the file is written atomically; a file that is not valid JSON
is refused with its line and column. See docs/agents.md.`
	if !install {
		verb, short, long = "uninstall", "Remove tether's hooks from an agent's settings",
			`Remove exactly tether's hook entries from Claude Code's settings file; a
group, event or "hooks" object goes only when that removal empties it. See
docs/agents.md.`
	}
	cmd := &cobra.Command{
		Use:       verb + " claude [--scope project|user|local] [--dir DIR] [--dry-run]",
		Short:     short,
		Long:      long,
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: agentNames,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := claudeSettings(install, scope, dir, dryRun)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if dryRun {
				_, err := out.Write(res.After)
				return err
			}
			_, err = fmt.Fprintln(out, claudeResult(install, res))
			return err
		},
	}
	cmd.Flags().StringVar(&scope, "scope", string(claudesettings.ScopeProject),
		"which settings file: project (DIR/.claude/settings.json), local (DIR/.claude/settings.local.json) or user (~/.claude/settings.json)")
	cmd.Flags().StringVar(&dir, "dir", ".", "the project root")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the resulting settings file instead of writing it")
	return cmd
}

// claudeSettings installs (or uninstalls) tether's entries in the Claude
// Code settings file of scope under the project root dir; `tether agent
// install claude` and `tether init --agent claude` share it.
func claudeSettings(install bool, scope, dir string, dryRun bool) (claudesettings.Result, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return claudesettings.Result{}, fmt.Errorf("--dir: %w", err)
	}
	home := ""
	if claudesettings.Scope(scope) == claudesettings.ScopeUser {
		if home, err = os.UserHomeDir(); err != nil {
			return claudesettings.Result{}, fmt.Errorf("--scope user: %w", err)
		}
	}
	path, err := claudesettings.Path(claudesettings.Scope(scope), root, home)
	if err != nil {
		return claudesettings.Result{}, fmt.Errorf("--%w", err)
	}
	// What install changed is recorded in tether's home, not in the project,
	// so that uninstall gives the file back byte for byte.
	recordDir := ""
	if h, err := config.Home(); err == nil {
		recordDir = filepath.Join(h, "agent-installs")
	}
	if !install {
		return claudesettings.Uninstall(path, recordDir, dryRun)
	}
	exe, err := os.Executable()
	if err != nil {
		return claudesettings.Result{}, fmt.Errorf("finding the tether binary: %w", err)
	}
	return claudesettings.Install(path, claudesettings.Options{TetherPath: exe, RecordDir: recordDir}, dryRun)
}

// claudeResult is the line that reports res: `claude hooks installed: PATH`,
// `removed` or `unchanged`.
func claudeResult(install bool, res claudesettings.Result) string {
	state := map[bool]string{true: "installed", false: "removed"}[install]
	if !res.Changed {
		state = "unchanged"
	}
	return fmt.Sprintf("claude hooks %s: %s", state, res.Path)
}

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
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/instructions"
	"github.com/tether-dev/tether/internal/agent/prompt"
)

// newAgentPromptCommand is `tether agent prompt HOOK`.
func newAgentPromptCommand(g *GlobalOptions) *cobra.Command {
	var write, remove bool
	var agent, dir string
	cmd := &cobra.Command{
		Use:   "prompt HOOK [--write|--remove] [--agent " + strings.Join(agentNames(), "|") + "] [--dir DIR]",
		Short: "Print instructions that let any CLI agent report its progress on a Hook",
		Long: `Print a short block of instructions for a coding agent without hooks:
how to read the recovery file and which agent verbs to run when (step begin,
heartbeat, checkpoint, step done, await), with the Hook's name and namespace
filled in. Put it in the agent's prompt or its instructions file.

The Hook must exist; the text depends only on its name and namespace.

--write puts the block into the agent's instructions file at the repository
root (or --dir), between the lines "<!-- tether:begin HOOK -->" and
"<!-- tether:end -->" (` + instructionsFiles() + `): a tether block already
there is replaced in place, every other byte is kept, and a second run writes
nothing. --remove takes the block out and gives the file back as it was
before the first write (a file --write created is removed). The file is
written atomically, never through a symbolic link.`,
		Example: `  tether agent prompt fix-login >> AGENTS.md
  tether agent prompt fix-login --write --agent codex
  tether agent prompt fix-login --remove --agent codex`,
		Args: exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			if write && remove {
				return errors.New("--write and --remove: give one")
			}
			var path string
			if write || remove {
				kind := agentKinds[agent]
				if kind == nil {
					return fmt.Errorf("--agent: unknown agent %q (want %s)", agent, strings.Join(agentNames(), ", "))
				}
				root, err := projectRoot(dir)
				if err != nil {
					return err
				}
				path = filepath.Join(root, kind.Instructions)
			}
			out := cmd.OutOrStdout()
			if remove {
				// No store needed: the Hook may be gone by now.
				res, err := instructions.Delete(path, args[0])
				if err != nil {
					return err
				}
				state := "unchanged"
				switch {
				case res.Removed:
					state = "removed with the file tether created"
				case res.Changed:
					state = "removed"
				}
				_, err = fmt.Fprintf(out, "tether block %s: %s\n", state, path)
				return err
			}
			b, err := g.Backend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			if err := b.Client.Get(cmd.Context(), client.ObjectKey{Namespace: b.Namespace, Name: args[0]}, &v1.Hook{}); err != nil {
				return err
			}
			text := prompt.Render(args[0], b.Namespace)
			if !write {
				_, err = out.Write(text)
				return err
			}
			res, err := instructions.Write(path, args[0], text)
			if err != nil {
				return err
			}
			state := "written"
			if !res.Changed {
				state = "unchanged"
			}
			_, err = fmt.Fprintf(out, "tether block %s: %s\n", state, path)
			return err
		},
	}
	cmd.Flags().BoolVar(&write, "write", false, "write the block into the agent's instructions file")
	cmd.Flags().BoolVar(&remove, "remove", false, "take the block out of the agent's instructions file")
	cmd.Flags().StringVar(&agent, "agent", defaultAgent, "whose instructions file: "+instructionsFiles())
	cmd.Flags().StringVar(&dir, "dir", "", "the directory of the instructions file (default: the repository root of the working directory, else the working directory)")
	return cmd
}

// instructionsFiles names each agent's instructions file.
func instructionsFiles() string {
	var s []string
	for _, n := range agentNames() {
		s = append(s, agentKinds[n].Instructions+" for "+n)
	}
	return strings.Join(s, ", ")
}

// projectRoot is dir made absolute; without dir, the nearest directory
// from the working directory upward that holds .git, else the working
// directory.
func projectRoot(dir string) (string, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("--dir: %w", err)
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return wd, nil
		}
		d = parent
	}
}

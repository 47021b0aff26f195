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
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/internal/agent/githooks"
)

func newInitCommand(g *GlobalOptions) *cobra.Command {
	var dir, agent, scope, tether string
	var gitHooks bool
	cmd := &cobra.Command{
		Use:   "init [--dir DIR] [--agent " + strings.Join(agentNames(), "|") + "] [--scope project|user|local] [--git-hooks]",
		Short: "Set tether up in a repository: the store, and optionally agent and git hooks",
		Long: `Set tether up in the repository at --dir (default: the working directory):

- create the local store: --store, else $TETHER_STORE, else DIR/.tether
  (nothing to create with --cluster);
- with --agent AGENT, install tether's hooks of that agent into its hooks
  file of --scope, as tether agent install AGENT does;
- with --git-hooks, install the post-commit and pre-push hooks that take
  checkpoints, as tether hooks install git does.

It never prompts. Running it again changes nothing and says what already
exists. It checks everything first: when it refuses (a directory outside
git with --git-hooks, a settings file it cannot merge, a hook it will not
overwrite), it has changed nothing. It ends with the commands to run next.`,
		Example: `  tether init
  tether init --agent claude --git-hooks
  tether init --dir ~/src/app --agent claude --scope local`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kind := agentKinds[agent]
			if agent != "" && kind == nil {
				return fmt.Errorf("--agent: unknown agent %q: want %s", agent, strings.Join(agentNames(), ", "))
			}
			if agent == "" && cmd.Flags().Changed("scope") {
				return errors.New("--scope: only with --agent " + strings.Join(agentNames(), "|"))
			}
			if _, err := g.namespaceFlag(); err != nil {
				return err
			}
			root, err := filepath.Abs(dir)
			if err != nil {
				return fmt.Errorf("--dir: %w", err)
			}
			if fi, err := os.Stat(root); err != nil {
				return fmt.Errorf("--dir: %w", err)
			} else if !fi.IsDir() {
				return fmt.Errorf("--dir: %s is not a directory", root)
			}
			// Everything that can refuse is checked before anything is
			// written: a refusal changes nothing.
			store, storeState, err := g.site().initStore(g, root)
			if err != nil {
				return err
			}
			if agent != "" {
				if _, err := editAgentHooks(kind, true, scope, root, true); err != nil {
					return err
				}
			}
			var hooks githooks.Options
			if gitHooks {
				bin, err := tetherPath(tether)
				if err != nil {
					return err
				}
				flags, err := recordedFlags(cmd)
				if err != nil {
					return err
				}
				// A store the hooks would not find from the working tree
				// is recorded in them.
				if store != "" && !cmd.Flags().Changed("store") && store != filepath.Join(root, StoreDirName) {
					flags = append(flags, "--store", store)
				}
				hooks = githooks.Options{Dir: root, Tether: bin, Flags: flags, DryRun: true}
				if _, err := githooks.Install(cmd.Context(), hooks); err != nil {
					return fmt.Errorf("git hooks in %s: %w", root, err)
				}
				hooks.DryRun = false
			}

			out := cmd.OutOrStdout()
			if store != "" {
				if err := initStore(cmd, g, store, storeState); err != nil {
					return err
				}
			}
			if agent != "" {
				res, err := editAgentHooks(kind, true, scope, root, false)
				if err != nil {
					return err
				}
				_, _ = fmt.Fprintln(out, agentEditLine(kind, true, res))
			}
			if gitHooks {
				results, err := githooks.Install(cmd.Context(), hooks)
				printResults(cmd, results)
				if err != nil {
					return fmt.Errorf("git hooks in %s: %w", root, err)
				}
			}
			_, err = fmt.Fprint(out, nextSteps(g, root, store, agent))
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "the repository to set up")
	cmd.Flags().StringVar(&agent, "agent", "", "also install the hooks of this agent: "+strings.Join(agentNames(), ", "))
	cmd.Flags().StringVar(&scope, "scope", "project", "with --agent, which hooks file: "+scopeHelp())
	cmd.Flags().BoolVar(&gitHooks, "git-hooks", false, "also install the post-commit and pre-push git hooks that take checkpoints")
	cmd.Flags().StringVar(&tether, "tether", "", "with --git-hooks, the tether binary the hooks run (default: this binary)")
	return cmd
}

// initStorePath is the absolute path of the local store of `tether init`
// and whether it exists ("exists") or will be created ("created"): --store,
// else $TETHER_STORE, else DIR/.tether. Unlike other verbs, init does not
// look upward for a .tether directory: it sets up this repository.
func initStorePath(g *GlobalOptions, root string) (string, string, error) {
	store := filepath.Join(root, StoreDirName)
	if flag, env := g.Store, os.Getenv(StoreEnv); flag != "" || env != "" {
		var err error
		if store, err = ResolveStoreDir(flag, env, root); err != nil {
			return "", "", err
		}
	}
	switch fi, err := os.Stat(store); {
	case err == nil && fi.IsDir():
		return store, "exists", nil
	case err == nil:
		return "", "", fmt.Errorf("store %s: exists and is not a directory", store)
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("store %s: %w", store, err)
	}
	return store, "created", nil
}

// initStore creates the local store at store unless it exists, and prints
// which (state, from initStorePath).
func initStore(cmd *cobra.Command, g *GlobalOptions, store, state string) error {
	o := *g
	o.Store = store
	b, err := o.Backend(cmd.Context())
	if err != nil {
		return fmt.Errorf("store %s: %w", store, err)
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("store %s: %w", store, err)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "store %s: %s\n", state, store)
	return err
}

// nextSteps is what init prints last: the commands that put a task under
// tether, with --store when the store would not be found from the
// repository, and -n when a namespace was given.
func nextSteps(g *GlobalOptions, root, store, agent string) string {
	flags := g.site().flags(root, store)
	if ns := *g.KubeConfig.Namespace; ns != "" {
		flags += " -n " + ns
	}
	s := "\nnext:\n"
	s += fmt.Sprintf("  tether%s apply -f task.yaml       # create a task: a Hook with a goal and steps (tether explain hooks.spec)\n", flags)
	s += fmt.Sprintf("  tether%s run                      # in another terminal: stale detection, recovery files, Workers\n", flags)
	if agent != "" {
		s += fmt.Sprintf("  tether%s agent bind HOOK          # bind this checkout's agent sessions to the task\n", flags)
	} else {
		s += fmt.Sprintf("  tether%s agent prompt HOOK        # instructions to give an agent without hooks\n", flags)
	}
	return s
}

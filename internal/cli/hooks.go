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

	"github.com/tether-dev/tether/internal/agent/githooks"
)

// hooksFlags are the global flags a git hook passes on to tether when they
// were given to `tether hooks install git`; path-valued ones are made absolute.
var hooksFlags = []struct {
	name string
	path bool
}{
	{"store", true}, {"config", true}, {"namespace", false},
	{"cluster", false}, {"kubeconfig", true}, {"context", false},
}

func newHooksCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove the git hooks that take checkpoints",
		Long: `Install or remove the git hooks that take checkpoints on commit and push.

tether hooks install git writes post-commit (trigger git_commit) and
pre-push (trigger git_push) into the hooks directory git uses (core.hooksPath
included), chaining any hook already there. tether hooks uninstall git puts
back exactly what was there. See docs/githooks.md.`,
	}
	var workspace, tether string
	install := &cobra.Command{
		Use:   "install git",
		Short: "Install tether's post-commit and pre-push git hooks, chaining existing ones",
		Long: `Install tether's post-commit and pre-push hooks in the git repository of
--workspace (default: the working directory).

Each takes a checkpoint of the Hook whose spec.workspace holds the working
tree (tether checkpoint --workspace DIR --trigger git_commit|git_push). A
hook already there keeps running with the same arguments and stdin, and its
exit status still decides; it is kept as NAME.tether-chained. tether's part
never blocks or fails a commit or push: on failure it warns on stderr.

--store, --config, -n, --cluster, --kubeconfig and --context, when given
here, are recorded in the hooks; otherwise tether finds its store from the
working tree as every verb does. Re-running it is harmless.`,
		Example: `  tether hooks install git
  tether hooks install git --workspace ~/src/app --store ~/src/app/.tether`,
		Args: gitOnly,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := tetherPath(tether)
			if err != nil {
				return err
			}
			flags, err := recordedFlags(cmd)
			if err != nil {
				return err
			}
			results, err := githooks.Install(cmd.Context(), githooks.Options{Dir: workspace, Tether: bin, Flags: flags})
			printResults(cmd, results)
			return err
		},
	}
	install.Flags().StringVar(&tether, "tether", "", "the tether binary the hooks run (default: this binary)")
	uninstall := &cobra.Command{
		Use:   "uninstall git",
		Short: "Remove tether's git hooks and put back the hooks they chained",
		Args:  gitOnly,
		RunE: func(cmd *cobra.Command, _ []string) error {
			results, err := githooks.Uninstall(cmd.Context(), githooks.Options{Dir: workspace})
			printResults(cmd, results)
			return err
		},
	}
	status := &cobra.Command{
		Use:   "status git",
		Short: "Show whether tether's git hooks are installed",
		Args:  gitOnly,
		RunE: func(cmd *cobra.Command, _ []string) error {
			states, err := githooks.Status(cmd.Context(), githooks.Options{Dir: workspace})
			for _, s := range states {
				_, _ = fmt.Fprintln(cmd.OutOrStdout(), s)
			}
			return err
		},
	}
	for _, c := range []*cobra.Command{install, uninstall, status} {
		c.Flags().StringVar(&workspace, "workspace", "", "a directory in the git working tree (default: the working directory)")
		cmd.AddCommand(c)
	}
	return cmd
}

// gitOnly accepts the one integration tether has hooks for.
func gitOnly(_ *cobra.Command, args []string) error {
	if len(args) != 1 || args[0] != "git" {
		return fmt.Errorf("want exactly one integration, git; got %q", strings.Join(args, " "))
	}
	return nil
}

// tetherPath is the binary the hooks run: flag, else this executable.
func tetherPath(flag string) (string, error) {
	if flag == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("finding the tether binary (pass --tether): %w", err)
		}
		flag = exe
	}
	return filepath.Abs(flag)
}

func recordedFlags(cmd *cobra.Command) ([]string, error) {
	var out []string
	for _, f := range hooksFlags {
		flag := cmd.Flags().Lookup(f.name)
		if flag == nil || !flag.Changed {
			continue
		}
		value := flag.Value.String()
		if flag.Value.Type() == "bool" {
			out = append(out, "--"+f.name+"="+value)
			continue
		}
		if f.path && value != "" {
			abs, err := filepath.Abs(value)
			if err != nil {
				return nil, err
			}
			value = abs
		}
		out = append(out, "--"+f.name, value)
	}
	return out, nil
}

func printResults(cmd *cobra.Command, results []githooks.Result) {
	for _, r := range results {
		_, _ = fmt.Fprintln(cmd.OutOrStdout(), r)
	}
}

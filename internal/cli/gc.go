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
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/retention"
)

type gcOptions struct {
	dryRun        bool
	allNamespaces bool
}

func newGCCommand(g *GlobalOptions) *cobra.Command {
	o := &gcOptions{}
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Delete terminal Hooks whose retention time has passed",
		Long: `Delete the completed, failed and abandoned Hooks whose retention
time-to-live, counted from when they became terminal, has passed; their
Checkpoints go with them. The TTLs come from spec.retention, else the tether
config file, else the defaults (completed 30d, failed 30d, abandoned 7d).

tether run does the same on its own, exactly when each Hook falls due.
With --dry-run, gc lists what it would delete and why, and deletes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, g)
		},
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be deleted and why; delete nothing")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "collect Hooks in every namespace")
	return cmd
}

func (o *gcOptions) run(cmd *cobra.Command, g *GlobalOptions) error {
	cfg, err := config.Load(g.ConfigFile)
	if err != nil {
		return err
	}
	b, err := g.Backend(cmd.Context())
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	ns := b.Namespace
	if o.allNamespaces {
		ns = ""
	}
	now := time.Now()
	collect, err := retention.Collect(cmd.Context(), b.Client, ns, cfg, now, o.dryRun)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if len(collect) == 0 {
		_, err := fmt.Fprintln(out, "No terminal hooks are due for deletion.")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
	header := "NAME\tSTATE\tTERMINAL SINCE\tTTL\tDUE SINCE\tRESULT"
	if o.allNamespaces {
		header = "NAMESPACE\t" + header
	}
	_, _ = fmt.Fprintln(w, header)
	var failed error
	for _, c := range collect {
		if c.Err != nil && failed == nil {
			failed = fmt.Errorf("hook %s/%s: %w", c.Hook.Namespace, c.Hook.Name, c.Err)
		}
		row := fmt.Sprintf("hook.%s/%s\t%s\t%s\t%s\t%s\t%s", v1.GroupVersion.Group, c.Hook.Name, c.Decision.State,
			c.Decision.Since.UTC().Format(time.RFC3339), c.Decision.TTL, now.Sub(c.Decision.DueAt).Truncate(time.Second), c.Result)
		if o.allNamespaces {
			row = c.Hook.Namespace + "\t" + row
		}
		_, _ = fmt.Fprintln(w, row)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return failed
}

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
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	var hooks v1.HookList
	var opts []client.ListOption
	if !o.allNamespaces {
		opts = append(opts, client.InNamespace(b.Namespace))
	}
	if err := b.Client.List(cmd.Context(), &hooks, opts...); err != nil {
		return err
	}
	type due struct {
		hook *v1.Hook
		d    retention.Decision
	}
	now := time.Now()
	var collect []due
	for i := range hooks.Items {
		h := &hooks.Items[i]
		if d, terminal := retention.Decide(h, cfg); terminal && d.Due(now) && h.DeletionTimestamp.IsZero() {
			collect = append(collect, due{h, d})
		}
	}
	sort.Slice(collect, func(i, j int) bool {
		a, b := collect[i].hook, collect[j].hook
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
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
		result := "would be deleted (dry run)"
		if !o.dryRun {
			result = "deleted"
			err := b.Client.Delete(cmd.Context(), c.hook,
				client.Preconditions{UID: &c.hook.UID, ResourceVersion: &c.hook.ResourceVersion},
				client.PropagationPolicy("Background"))
			switch {
			case apierrors.IsNotFound(err):
				result = "already gone"
			case err != nil:
				result = "not deleted: " + err.Error()
				if failed == nil {
					failed = fmt.Errorf("hook %s/%s: %w", c.hook.Namespace, c.hook.Name, err)
				}
			}
		}
		row := fmt.Sprintf("hook.%s/%s\t%s\t%s\t%s\t%s\t%s", v1.GroupVersion.Group, c.hook.Name, c.d.State,
			c.d.Since.UTC().Format(time.RFC3339), c.d.TTL, now.Sub(c.d.DueAt).Truncate(time.Second), result)
		if o.allNamespaces {
			row = c.hook.Namespace + "\t" + row
		}
		_, _ = fmt.Fprintln(w, row)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return failed
}

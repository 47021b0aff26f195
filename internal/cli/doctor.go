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

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/doctor"
)

func newDoctorCommand(g *GlobalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the local store and its surroundings, and say how to fix each problem",
		Long: `Check the local store, every namespace of it, without changing it:
directory permissions and ownership, symbolic links and other non-regular entries, quarantined object
files, the journal, leftover temp files, the receipt master key's
permissions, every Hook's history against its status and its receipts
against its steps, and the Workers of this host whose recorded process no
longer runs.

Prints one line per problem, "CHECK WHERE: REASON; fix: FIX", and exits 1
when there is any; prints "no problems found" and exits 0 when there is
none. It never creates the store, takes no lock and repairs nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("--output: must be one of json, yaml, got %q", output)
			}
			dir, err := g.site().doctorStore(g)
			if err != nil {
				return err
			}
			inspect, err := doctorInspect()
			if err != nil {
				return err
			}
			cfg, err := config.Load(g.ConfigFile)
			if err != nil {
				return err
			}
			findings, err := doctor.Run(cmd.Context(), doctor.Options{
				Dir:     dir,
				Inspect: inspect,
				KeyDir:  cfg.KeyDir,
			})
			if isNoStore(err) {
				return fmt.Errorf("%w (create one with tether init, or name it with --store)", err)
			}
			if err != nil {
				return err
			}
			if err := printFindings(cmd, output, dir, findings); err != nil {
				return err
			}
			if len(findings) > 0 {
				noun := "problems"
				if len(findings) == 1 {
					noun = "problem"
				}
				return fmt.Errorf("%d %s found in the store at %s", len(findings), noun, dir)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (a list of findings)")
	return cmd
}

// printFindings prints the findings one per line, or as a JSON or YAML
// list.
func printFindings(cmd *cobra.Command, output, dir string, findings []doctor.Finding) error {
	out := cmd.OutOrStdout()
	if findings == nil {
		findings = []doctor.Finding{}
	}
	if printed, err := printAs(out, output, findings); printed {
		return err
	}
	if len(findings) == 0 {
		_, err := fmt.Fprintf(out, "no problems found in the store at %s\n", dir)
		return err
	}
	for _, f := range findings {
		if _, err := fmt.Fprintln(out, f.String()); err != nil {
			return err
		}
	}
	return nil
}

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
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
)

// newRepairCommand returns `tether repair`.
func newRepairCommand(g *GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repair HOOK",
		Short: "Rebuild a Hook's status from its history, after a hand edit",
		Long: `Rebuild a Hook's status from its history: every field the history determines
(state, current step and attempt, each step's phase and attempts) is set to
what a replay of status.history says. The history is kept as it is.

Use it when the Hook's status disagrees with its history (condition
HistoryConsistent=False, the HISTORY column of tether get, tether doctor): tether
then refuses every transition of the Hook, fail and abandon included, and
tells its agent to stop. Check the work first: the history says what tether
saw happen, not what the edit claimed.

Prints each field with the value it had and the one it has now, and records a
StatusRebuilt Event keeping the old values. A status that agrees with its
history changes nothing and prints "unchanged". A history that is itself
damaged (entries that do not follow one another, or removed without being
counted) is refused: nothing can be rebuilt from it.`,
		Example: `  tether repair fix-login
  tether describe hook fix-login   # the StatusRebuilt Event says what it was`,
		Args: exactHook,
	}
	v := newHookVerb(g, cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := v.open(cmd)
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		rec, err := b.Recorder()
		if err != nil {
			return err
		}
		key := client.ObjectKey{Namespace: b.Namespace, Name: args[0]}
		hook, ds, err := hookwrite.RebuildStatus(cmd.Context(), b.Client, key, hookwrite.Options{Actor: actor(cmd.Context()), Recorder: rec})
		if err != nil {
			return explainHookErr(key.Name, err)
		}
		if p, _ := v.printer(); p != nil {
			return v.show(b, hook)
		}
		if len(ds) == 0 {
			_, err = fmt.Fprintf(v.out, "hook.%s/%s unchanged: the status agrees with its history\n", v1.GroupVersion.Group, hook.Name)
			return err
		}
		if _, err := fmt.Fprintf(v.out, "hook.%s/%s repaired from its history:\n", v1.GroupVersion.Group, hook.Name); err != nil {
			return err
		}
		for _, d := range ds {
			if _, err := fmt.Fprintf(v.out, "  %s: %s -> %s\n", d.Field, d.Recorded, d.Replayed); err != nil {
				return err
			}
		}
		_, err = io.WriteString(v.out, hookLine(hook))
		return err
	}
	return cmd
}

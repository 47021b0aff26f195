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
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/agent/agentsession"
	"github.com/tether-dev/tether/internal/config"
)

// hookArgNote ends the help of every verb whose Hook may be left out.
const hookArgNote = `

Without HOOK, the Hook is the one tether agent hook would use here: $TETHER_HOOK
(in $TETHER_NAMESPACE), else the checkout's binding (tether agent bind), else
the one non-terminal Hook whose spec.workspace holds the working directory.`

// optionalHook accepts the Hook's name, or nothing: then the verb acts on
// the Hook the working directory is bound to (resolveHook).
func optionalHook(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("%s takes at most one argument, the Hook's name; got %d", cmd.CommandPath(), len(args))
	}
	return nil
}

// resolveHook is the Hook a verb acts on: args[0] in b.Namespace, else the
// Hook `tether agent hook` would find for the working directory ($TETHER_HOOK,
// the checkout's binding, the one non-terminal Hook whose spec.workspace
// holds it). b.Namespace follows the Hook found, so the verb's reads and
// writes go to its namespace. A binding file that cannot be used is
// reported on errOut and passed over, as by the agent hook.
func resolveHook(ctx context.Context, cmd *cobra.Command, b *Backend, args []string, errOut io.Writer) (client.ObjectKey, error) {
	if len(args) == 1 {
		return client.ObjectKey{Namespace: b.Namespace, Name: args[0]}, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return client.ObjectKey{}, err
	}
	target, err := agentsession.Resolve(ctx, b.Client, b.Namespace, cwd, os.Getenv, func(msg string) {
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", msg)
	})
	if errors.Is(err, agentsession.ErrNoHook) {
		return client.ObjectKey{}, fmt.Errorf("%s: no Hook named, and none is bound to %s: $%s is unset, the checkout has no binding (tether agent bind HOOK) and no non-terminal Hook in namespace %q has a spec.workspace holding it; name the Hook",
			cmd.CommandPath(), cwd, config.HookEnv, b.Namespace)
	}
	if err != nil {
		return client.ObjectKey{}, fmt.Errorf("%s: no Hook named: %w", cmd.CommandPath(), err)
	}
	b.Namespace = target.Key.Namespace
	return target.Key, nil
}

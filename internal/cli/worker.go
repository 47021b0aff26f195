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
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tether-dev/tether/internal/worker/workerwrite"
)

func newWorkerCommand(g *GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Act on Workers: restart, heartbeat",
	}
	cmd.AddCommand(newWorkerRestartCommand(g), newWorkerHeartbeatCommand(g))
	return cmd
}

func newWorkerRestartCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart a Worker's process by hand and reset its crash window",
		Long: `Ask tether run to restart a Worker's process: a running process is
stopped (SIGTERM, then SIGKILL after a grace period) and started again; a
crashed or crash-looping one is started. Crashes before now no longer count
against spec.restart.maxCrashes.

An adopted Worker (spec.adopt.pid) is refused: tether only watches a process
it did not launch, and cannot start it again.

The restart happens when tether run serving the Worker sees the request.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := g.Backend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			if err := restartWorker(cmd.Context(), b, types.NamespacedName{Namespace: b.Namespace, Name: args[0]}); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "worker.agents.tether.dev/%s restarted\n", args[0])
			return err
		},
	}
}

func newWorkerHeartbeatCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "heartbeat NAME",
		Short: "Report that a Worker on this host is alive",
		Long: `Record a heartbeat of a Worker: status.lastHeartbeat is set to now and
status.host to this host. A Worker that tether run cannot watch through its
process (one on another host, or one with neither command nor adopt) is
Lost when no heartbeat arrives within spec.heartbeatTimeout, and the Hooks it
holds are freed, like a Kubernetes node whose lease expired.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := os.Hostname()
			if err != nil {
				return err
			}
			b, err := g.Backend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			return workerwrite.Heartbeat(cmd.Context(), b.Client, types.NamespacedName{Namespace: b.Namespace, Name: args[0]}, host, time.Now())
		},
	}
}

// restartWorker asks tether run to restart the Worker at key and resets
// its crash window (workerwrite.Restart).
func restartWorker(ctx context.Context, b *Backend, key types.NamespacedName) error {
	host, _ := os.Hostname()
	return workerwrite.Restart(ctx, b.Client, key, host, time.Now())
}

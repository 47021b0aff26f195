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
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/pause"
	"github.com/tether-dev/tether/internal/top"
)

// TopActor is the history and Event actor of what tether top's keys do,
// unless $TETHER_ACTOR names another.
const TopActor = "tether top"

// topOnceTimeout bounds how long tether top --once waits for its lists.
const topOnceTimeout = 30 * time.Second

type topOptions struct {
	g             *GlobalOptions
	once          bool
	allNamespaces bool
	// now is the clock of the frames; time.Now when nil.
	now func() time.Time
}

func newTopCommand(g *GlobalOptions) *cobra.Command {
	o := &topOptions{g: g}
	cmd := &cobra.Command{
		Use:   "top [--once] [-A]",
		Short: "Watch Hooks, Workers and alerts live, and act on them",
		Long: `Show the Hooks, the Workers and the recent Warning Events of the namespace
(or of every namespace with -A), kept up to date from watches on the local
store or the cluster.

Hooks show their state, step k/n, attempt, assignee, the age of their last
heartbeat (amber past three quarters of staleAfter, red and "stale" past it)
and their last checkpoint. Workers show their phase, PID (or "pod" for a
pod template), restarts, crashes within the crash window and uptime. Alerts
are the newest Warning Events: crashes, stale Hooks, restarts exhausted.

Keys: up/down (k/j) select; enter or d describes the selection; r shows a
Hook's recovery file; u resumes a Hook; p pauses or unpauses it; R restarts
a Worker; n cycles the namespace filter (with -A); s cycles the state filter;
? shows every key; q quits. Actions do what tether describe, recover, resume,
pause, unpause and worker restart do, recorded with the actor "tether top".

--once prints one frame as plain text, without colour or keys, and exits:
for scripts, pipes and tests. Without --once, standard input and output must
be a terminal.`,
		Example: `  tether top
  tether top -A
  tether top --once | grep stale`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGCForReading()
			return o.run(cmd)
		},
	}
	cmd.Flags().BoolVar(&o.once, "once", false, "print one frame as plain text and exit")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "show the objects of every namespace")
	return cmd
}

func (o *topOptions) run(cmd *cobra.Command) error {
	ctx := cmd.Context()
	if !o.once && !isTerminal(cmd.InOrStdin(), cmd.OutOrStdout()) {
		return errors.New("tether top needs a terminal; use --once to print one frame")
	}
	b, err := o.g.Backend(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	cfg, err := config.Load(o.g.ConfigFile)
	if err != nil {
		return err
	}
	ns := b.Namespace
	if o.allNamespaces {
		ns = ""
	}
	src, err := top.NewSource(b.Client, ns)
	if err != nil {
		return err
	}
	opts := top.Options{Namespace: ns, Config: cfg, Now: o.now}
	if o.once {
		ctx, cancel := context.WithTimeout(ctx, topOnceTimeout)
		defer cancel()
		return top.Once(ctx, src, opts, cmd.OutOrStdout())
	}
	// The screen is the view's: client-go's log lines would tear it, and
	// the view reports watch errors itself.
	klog.SetLogger(logr.Discard())
	opts.Actions = &topActions{b: b, cfg: cfg, actor: actorOr(TopActor)}
	return top.Run(ctx, src, opts, cmd.InOrStdin(), cmd.OutOrStdout())
}

// isTerminal reports whether in and out are both terminals.
func isTerminal(in, out any) bool {
	for _, f := range []any{in, out} {
		file, ok := f.(*os.File)
		if !ok || !term.IsTerminal(int(file.Fd())) {
			return false
		}
	}
	return true
}

// actorOr is $TETHER_ACTOR, else def.
func actorOr(def string) string {
	if a := os.Getenv(ActorEnv); a != "" {
		return a
	}
	return def
}

// topActions are tether top's keys, done by the verbs' own functions on
// the view's backend.
type topActions struct {
	b     *Backend
	cfg   *config.Config
	actor string
}

var _ top.Actions = (*topActions)(nil)

// Describe is tether describe of obj.
func (a *topActions) Describe(ctx context.Context, obj top.Object) (string, error) {
	rt, err := a.b.Types.ForGVK(v1.GroupVersion.WithKind(string(obj.Kind)))
	if err != nil {
		return "", err
	}
	u, err := getObject(ctx, a.b, rt, obj.Key.Namespace, obj.Key.Name)
	if err != nil {
		return "", err
	}
	return Describe(ctx, a.b, a.cfg, rt, u, true)
}

// Recover is tether recover of a Hook; warnings follow the file.
func (a *topActions) Recover(ctx context.Context, hook client.ObjectKey) (string, error) {
	var warnings bytes.Buffer
	text, err := recoveryText(ctx, a.b, hook, &warnings)
	if err != nil {
		return "", err
	}
	return string(text) + warnings.String(), nil
}

// Resume is tether resume of a Hook.
func (a *topActions) Resume(ctx context.Context, hook client.ObjectKey) (string, error) {
	h, err := transitionAs(ctx, a.b, hook, a.actor, func(*v1.Hook) (hookfsm.Input, error) {
		return hookfsm.Input{Event: hookfsm.Resume}, nil
	})
	if err != nil {
		return "", err
	}
	return hookLine(h), nil
}

// Pause is tether pause of a Hook.
func (a *topActions) Pause(ctx context.Context, hook client.ObjectKey) (string, error) {
	return pauseHook(ctx, a.b, hook, "paused", pause.Pause, a.actor, "")
}

// Unpause is tether unpause of a Hook.
func (a *topActions) Unpause(ctx context.Context, hook client.ObjectKey) (string, error) {
	return pauseHook(ctx, a.b, hook, "unpaused", pause.Unpause, a.actor, "")
}

// RestartWorker is tether worker restart of a Worker.
func (a *topActions) RestartWorker(ctx context.Context, worker client.ObjectKey) (string, error) {
	if err := restartWorker(ctx, a.b, worker); err != nil {
		return "", err
	}
	return fmt.Sprintf("worker.%s/%s restarted", v1.GroupVersion.Group, worker.Name), nil
}

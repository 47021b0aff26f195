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
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/console"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// DefaultConsoleAddress is where `tether console` listens unless told
// otherwise: loopback, the port after the local metrics endpoint's.
const DefaultConsoleAddress = "127.0.0.1:8384"

// tetherEvents selects the Events about tether's objects, as the
// operator's cache holds them.
var tetherEvents = fields.OneTermEqualSelector("involvedObject.apiVersion", v1.GroupVersion.String())

// consoleFlags are tether run's console flags.
type consoleFlags struct {
	addr        string
	allowRemote bool
}

// serve adds a console of its own listener, at f.addr, to mgr.
func (f *consoleFlags) serve(mgr manager.Manager, o console.Options) error {
	h, err := console.New(o)
	if err != nil {
		return err
	}
	srv, err := console.Listen(f.addr, h, f.allowRemote, "--console-allow-remote", o.Log)
	if err != nil {
		return fmt.Errorf("--console-bind-address: %w", err)
	}
	if err := mgr.Add(srv); err != nil {
		_ = srv.Close()
		return err
	}
	o.Log.Info("serving the console", "url", srv.URL())
	return nil
}

// clusterConsole is the console of the operator: the Manager's cache and
// the operator's own permissions, which read no Pod logs.
func clusterConsole(mgr manager.Manager, cfg *rest.Config, c *config.Config, keys receipts.KeyManager, allowRemote bool, log logr.Logger) console.Options {
	o := console.Options{Reader: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: c, Keys: keys, LoopbackOnly: !allowRemote,
		EventFields: tetherEvents, Log: log.WithName("console")}
	if w, err := client.NewWithWatch(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()}); err == nil {
		o.Watcher = w
	} else {
		log.Error(err, "the console will not follow changes")
	}
	return o
}

// logTail reads a Worker's log as tether logs does: its process's log
// file on this host, or, through b's Pod logs, its Pod's log.
func logTail(b *Backend) console.LogTail {
	return func(ctx context.Context, w *v1.Worker, limit int64) (string, error) {
		if w.Spec.Template != nil {
			if b == nil {
				return "", fmt.Errorf("worker %s runs as a Pod: tether logs worker/%s --cluster reads its log", w.Name, w.Name)
			}
			t := &tailWriter{max: int(limit)}
			if err := printPodLog(ctx, t, b, w, false, false); err != nil {
				return "", err
			}
			return t.String(), nil
		}
		path, err := workerLogFile(w)
		if err != nil {
			return "", err
		}
		return tailFile(path, limit)
	}
}

// tailFile is the last limit bytes of path, from a line's start.
func tailFile(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	t := &tailWriter{max: int(limit)}
	if off := fi.Size() - limit; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return "", err
		}
		t.cut = true
	}
	if _, err := io.Copy(t, f); err != nil {
		return "", err
	}
	return t.String(), nil
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	buf []byte
	max int
	cut bool
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf, t.cut = t.buf[over:], true
	}
	return len(p), nil
}

// String is the tail, from the first whole line when it was cut.
func (t *tailWriter) String() string {
	b := t.buf
	if t.cut {
		for i, c := range b {
			if c == '\n' {
				b = b[i+1:]
				break
			}
		}
	}
	return string(b)
}

func newConsoleCommand(g *GlobalOptions) *cobra.Command {
	var addr string
	var allowRemote bool
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve the read-only web console of a store or, with --cluster, a cluster",
		Long: `Serve the read-only web console: every Hook and Worker, one page per Hook
(steps, receipts, history, checkpoints and their diffs, Events, the agent
session, the recovery file) and per Worker (crashes, log tail), updated live
through a watch. It runs no reconciler, and changes nothing: it answers only
GET and HEAD.

tether run serves the same console beside its /metrics. Off the loopback
interface it refuses to start without --allow-remote: it has no login.`,
		Example: `  tether console
  tether console --bind-address 127.0.0.1:9000
  tether console --cluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := console.CheckAddress(addr, allowRemote, "--allow-remote"); err != nil {
				return fmt.Errorf("--bind-address: %w", err)
			}
			b, err := g.ReadBackend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			cfg, err := config.Load(g.ConfigFile)
			if err != nil {
				return err
			}
			o := console.Options{Reader: b.Client, Watcher: b.Client, WatchStart: consoleWatchStart, Config: cfg, Logs: logTail(b), LoopbackOnly: !allowRemote}
			if b.RESTConfig != nil {
				o.EventFields = tetherEvents
			}
			if km, err := b.KeyManager(); err == nil {
				o.Keys = km
			}
			h, err := console.New(o)
			if err != nil {
				return err
			}
			srv, err := console.Listen(addr, h, allowRemote, "--allow-remote", logr.Discard())
			if err != nil {
				return fmt.Errorf("--bind-address: %w", err)
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "serving the console of %s at %s (Ctrl-C stops it)\n", b.Location, srv.URL())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := srv.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "bind-address", DefaultConsoleAddress, "address to serve the console on (127.0.0.1:0 picks a free port)")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "serve on an address off the loopback interface (the console has no login: anyone who reaches it reads every Hook)")
	return cmd
}

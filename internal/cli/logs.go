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
	"strings"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

func newLogsCommand(g *GlobalOptions) *cobra.Command {
	var follow, previous bool
	cmd := &cobra.Command{
		Use:   "logs worker/NAME [-f]",
		Short: "Print the output of a Worker's process",
		Long: `Print the log file of a Worker's process (status.logFile): its stdout and
stderr, across restarts. With -f, keep printing what is appended until
interrupted. The log lives on the host that runs the process.

For a Worker that runs as a Pod (spec.template, in cluster mode), print the
log of its agent container through the API, as kubectl logs does; -p prints
the log of the Pod before the current one, the one that last ended.`,
		Example: `  tether logs worker/agent-1
  tether logs wk agent-1 -f`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := g.Backend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			targets, err := b.Types.ParseTargets(args)
			if err != nil {
				return err
			}
			if len(targets) != 1 || len(targets[0].Names) != 1 || targets[0].Type.GVK.Kind != "Worker" {
				return fmt.Errorf("logs takes one worker, as worker/NAME; got %q", strings.Join(args, " "))
			}
			w := &v1.Worker{}
			if err := b.Client.Get(cmd.Context(), types.NamespacedName{Namespace: b.Namespace, Name: targets[0].Names[0]}, w); err != nil {
				return err
			}
			if w.Spec.Template != nil {
				return printPodLog(cmd.Context(), cmd.OutOrStdout(), b, w, follow, previous)
			}
			if previous {
				return fmt.Errorf("worker %s runs a process, not Pods: its log file holds every run; drop --previous", w.Name)
			}
			path, err := workerLogFile(w)
			if err != nil {
				return err
			}
			return printLog(cmd.Context(), cmd.OutOrStdout(), path, follow)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing appended output")
	cmd.Flags().BoolVarP(&previous, "previous", "p", false, "for a Worker run as Pods, print the log of the Pod that last ended")
	return cmd
}

// workerLogFile is the log file of w's process, or why this host cannot
// read it.
func workerLogFile(w *v1.Worker) (string, error) {
	if host, _ := os.Hostname(); w.Status.Host != "" && w.Status.Host != host {
		return "", fmt.Errorf("worker %s runs on host %s; its log %s is there", w.Name, w.Status.Host, w.Status.LogFile)
	}
	if w.Status.LogFile == "" {
		return "", fmt.Errorf("worker %s has no log file yet (phase %q)", w.Name, w.Status.Phase)
	}
	return w.Status.LogFile, nil
}

// printPodLog streams the log of the agent container of w's current Pod,
// or of the one before it, through the API server.
func printPodLog(ctx context.Context, out io.Writer, b *Backend, w *v1.Worker, follow, previous bool) error {
	stream, err := b.podLogs()
	if err != nil {
		return fmt.Errorf("worker %s runs as a Pod: %w", w.Name, err)
	}
	pod := w.Status.PodName
	if previous {
		if w.Status.Restarts == 0 && pod != "" {
			return fmt.Errorf("worker %s has no previous Pod: %s is its first", w.Name, pod)
		}
		n := w.Status.Restarts
		if pod != "" {
			n--
		}
		pod = workerfsm.PodName(w, n)
	}
	if pod == "" {
		return fmt.Errorf("worker %s has no Pod now (phase %q); -p prints the last one's log", w.Name, w.Status.Phase)
	}
	opts := &corev1.PodLogOptions{Follow: follow}
	if containers := w.Spec.Template.Spec.Containers; len(containers) > 0 {
		opts.Container = containers[0].Name
	}
	logs, err := stream(ctx, w.Namespace, pod, opts)
	if err != nil {
		return fmt.Errorf("pod %s: %w", pod, err)
	}
	defer func() { _ = logs.Close() }()
	_, err = io.Copy(out, logs)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// printLog copies path to out and, when follow is set, whatever is
// appended to it, woken by fsnotify, until ctx ends or the file is removed
// or renamed (rotated).
func printLog(ctx context.Context, out io.Writer, path string, follow bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if !follow {
		_, err = io.Copy(out, f)
		return err
	}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer func() { _ = watcher.Close() }()
	if err := watcher.Add(path); err != nil {
		return err
	}
	for {
		if _, err := io.Copy(out, f); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-watcher.Errors:
			return err
		case ev, ok := <-watcher.Events:
			if !ok {
				return errors.New("log watch closed")
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				return nil
			}
			// An unlinked file this reader holds open reports no Remove until
			// it is closed, only the Chmod of its link count.
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				return nil
			}
		}
	}
}

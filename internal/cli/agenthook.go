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
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/agentsession"
	"github.com/tether-dev/tether/internal/config"
)

// withAgentHookCommands adds `agent hook`, `agent bind` and `agent unbind`
// to the agent group.
func withAgentHookCommands(agent *cobra.Command, g *GlobalOptions) *cobra.Command {
	agent.AddCommand(newAgentHookCommand(g), newAgentBindCommand(g), newAgentUnbindCommand(g))
	return agent
}

func newAgentHookCommand(g *GlobalOptions) *cobra.Command {
	agent := defaultAgent
	cmd := &cobra.Command{
		Use:   "hook [--agent " + strings.Join(agentNames(), "|") + "]",
		Short: "Answer a coding agent's hook event (reads the event JSON on stdin)",
		Long: `Answer one hook event of a coding agent, in that agent's protocol (--agent,
default claude): the command that "tether agent install AGENT" registers
for the agent's session, prompt, tool, compaction, end-of-turn and
session-end events. It reads the event JSON on stdin and finds the Hook the
agent works on: $TETHER_HOOK (in $TETHER_NAMESPACE), else the checkout's
binding (tether agent bind), else the one non-terminal Hook whose
spec.workspace contains the event's cwd.

It always exits 0 and answers within 2 s: a missing store, a corrupt object
or a held lock is a warning on stderr and no output. TETHER_DISABLE=1 turns
it into a no-op. See docs/agents.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A short-lived process on every tool call: collect less often.
			tuneGCForReading()
			if code := runAgentHook(cmd.Context(), g, agent, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), os.Getenv); code != 0 {
				return exitCodeError(code)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&agent, "agent", defaultAgent, "the agent whose protocol the event is in: "+strings.Join(agentNames(), ", "))
	return cmd
}

// hookOutcome is what the goroutine doing the store work hands back.
type hookOutcome struct {
	res agentsession.Result
	err error
}

// runAgentHook answers one event of agent and returns the exit code the
// agent's protocol asks for (0 for every agent tether knows, whatever
// happens). Nothing it meets makes it fail: every problem is a warning on
// errOut, and the answer comes within agentsession.Timeout even when the
// store blocks.
func runAgentHook(ctx context.Context, g *GlobalOptions, agent string, in io.Reader, out, errOut io.Writer, getenv func(string) string) int {
	if agentevent.Disabled(getenv) {
		return 0
	}
	warn := func(format string, args ...any) {
		_, _ = fmt.Fprintf(errOut, "tether agent hook: warning: "+format+"\n", args...)
	}
	kind := agentKinds[agent]
	if kind == nil {
		warn("--agent: unknown agent %q (want %s); carrying on without tether", agent, strings.Join(agentNames(), ", "))
		return 0
	}
	raw, ev, err := agentevent.Read(in, kind.Adapter, getenv)
	if err != nil {
		warn("%v", err)
		return 0
	}
	background := getenv(backgroundEnv) == "1" && ev.Kind == agentevent.PreCompact
	if ctx == nil {
		ctx = context.Background()
	}
	var noStore *noStoreError
	if err := g.site().present(g); errors.As(err, &noStore) {
		_, _ = fmt.Fprintf(errOut, "tether: %v; nothing to do\n", err)
		return 0
	} else if err != nil {
		warn("%v", err)
		return 0
	}
	timeout := agentsession.Timeout
	if background {
		timeout = backgroundTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answered := make(chan hookOutcome, 1)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		b, err := g.Backend(ctx)
		if err != nil {
			answered <- hookOutcome{err: err}
			return
		}
		defer func() { _ = b.Close() }()
		cfg, err := config.Load(g.ConfigFile)
		if err != nil {
			warn("%v; using the built-in defaults", err)
			cfg = config.Default("")
		}
		res, err := agentsession.Answer(ctx, ev, agentevent.CapabilitiesOf(kind.Adapter), agentsession.Backend{
			Client: b.Client, Namespace: b.Namespace, Recorder: b.Recorder, Keys: b.KeyManager,
		}, cfg, getenv)
		answered <- hookOutcome{res: res, err: err}
	}()
	var o hookOutcome
	select {
	case o = <-answered:
	case <-ctx.Done():
		if ev.Kind == agentevent.PreCompact && !background {
			// The capture of a large workspace can outlast the deadline:
			// stop this one cleanly (its git runs are killed and its
			// temporary index removed) and finish it in a detached process,
			// rather than lose the checkpoint compaction needs.
			cancel()
			select {
			case <-closed:
			case <-time.After(time.Second):
			}
			if pid, err := finishInBackground(raw); err != nil {
				warn("the pre_compact checkpoint took longer than %s and could not go on in the background: %v", agentsession.Timeout, err)
			} else {
				warn("the pre_compact checkpoint takes longer than %s; finishing it in the background (pid %d)", agentsession.Timeout, pid)
			}
			return 0
		}
		warn("no answer within %s (the store or git was slow, or a lock was held); carrying on without tether", timeout)
		return 0
	}
	if o.err != nil {
		warn("%v", o.err)
		return 0
	}
	for _, n := range o.res.Notes {
		_, _ = fmt.Fprintln(errOut, n)
	}
	answer := kind.Adapter.Render(ev, o.res.Reply)
	if len(answer.Stdout) > 0 {
		if _, err := out.Write(answer.Stdout); err != nil {
			warn("writing the answer: %v", err)
		}
	}
	// Events recorded on the way are flushed by Close, within what is left.
	select {
	case <-closed:
	case <-ctx.Done():
	case <-time.After(agentsession.Timeout):
	}
	return answer.ExitCode
}

// backgroundEnv marks the detached `tether agent hook` that finishes a
// PreCompact checkpoint the hook's deadline cut short.
const backgroundEnv = "TETHER_AGENT_HOOK_BACKGROUND"

// backgroundTimeout bounds the detached capture.
const backgroundTimeout = 5 * time.Minute

// finishInBackground starts this binary again, in its own session so that
// the client's end of the hook does not reach it, with the same arguments and
// the event on stdin (through a pipe filled before the start: a PreCompact
// event is far smaller than a pipe's buffer).
func finishInBackground(event []byte) (int, error) {
	if len(event) > 32<<10 {
		return 0, fmt.Errorf("event of %d bytes: too large to hand over", len(event))
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer func() { _ = r.Close() }()
	if _, err := w.Write(event); err != nil {
		_ = w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), backgroundEnv+"=1")
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	return pid, nil
}

func newAgentBindCommand(g *GlobalOptions) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "bind HOOK [--dir DIR]",
		Short: "Bind the agent sessions of a checkout to a Hook",
		Long: `Record that the agent working in DIR's checkout works on HOOK (in the
namespace of -n), for tether agent hook. The binding lives inside the git
directory ($(git rev-parse --git-dir)/tether/binding), so it is per checkout
and never committed; outside git it is DIR/.tether/binding. $TETHER_HOOK,
when set, takes precedence.`,
		Args: exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			abs, err := filepath.Abs(dir)
			if err != nil {
				return fmt.Errorf("--dir: %w", err)
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return fmt.Errorf("--dir %s: not a directory", abs)
			}
			b, err := g.Backend(cmd.Context())
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			hook := &v1.Hook{}
			if err := b.Client.Get(cmd.Context(), client.ObjectKey{Namespace: b.Namespace, Name: args[0]}, hook); err != nil {
				return explainHookErr(args[0], err)
			}
			path, err := agentsession.WriteBinding(abs, agentsession.Binding{Namespace: b.Namespace, Hook: hook.Name})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "bound %s to hook %s/%s (%s)\n", abs, b.Namespace, hook.Name, path)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "a directory of the checkout to bind")
	return cmd
}

func newAgentUnbindCommand(_ *GlobalOptions) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "unbind [--dir DIR]",
		Short: "Remove the Hook binding of a checkout",
		Long:  "Remove the binding that tether agent bind recorded for DIR's checkout.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			abs, err := filepath.Abs(dir)
			if err != nil {
				return fmt.Errorf("--dir: %w", err)
			}
			path, removed, err := agentsession.RemoveBinding(abs)
			if err != nil {
				return err
			}
			state := "unbound"
			if !removed {
				state = "not bound"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%s)\n", state, abs, path)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "a directory of the checkout to unbind")
	return cmd
}

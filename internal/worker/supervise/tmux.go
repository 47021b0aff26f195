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

package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoTmux reports that tmux is not installed.
var ErrNoTmux = errors.New("tmux is not installed")

// LaunchTmux starts spec in a new detached tmux session named session, so a
// person can attach to the agent, and returns the identity of the pane's
// process. tmux, not the caller, is its parent: watch it with Watch.
func LaunchTmux(session string, spec LaunchSpec) (Identity, error) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return Identity{}, ErrNoTmux
	}
	if len(spec.Command) == 0 {
		return Identity{}, errors.New("no command to launch")
	}
	run := func(args ...string) error {
		if out, err := exec.Command(tmux, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("tmux %s %s: %w: %s", args[0], session, err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	target := "=" + session + ":"
	// The session starts idle so that the log pipe is in place before the
	// agent prints anything; respawn-pane then replaces the idle process.
	if err := run("new-session", "-d", "-s", session, "sh", "-c", "exec sleep 2147483647"); err != nil {
		return Identity{}, err
	}
	if spec.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(spec.LogFile), 0o700); err != nil {
			return Identity{}, err
		}
		if err := run("pipe-pane", "-o", "-t", target, "umask 077; exec cat >> "+shellQuote(spec.LogFile)); err != nil {
			return Identity{}, err
		}
	}
	args := []string{"respawn-pane", "-k", "-t", target}
	if spec.Dir != "" {
		args = append(args, "-c", spec.Dir)
	}
	for _, kv := range spec.Env {
		args = append(args, "-e", kv)
	}
	// With more than one argument tmux executes the command directly, with
	// no shell to re-split it; "exec" keeps the pane's PID the agent's.
	args = append(args, "sh", "-c", `exec "$@"`, "sh")
	if err := run(append(args, spec.Command...)...); err != nil {
		return Identity{}, err
	}
	out, err := exec.Command(tmux, "display-message", "-p", "-t", target, "#{pane_pid}").Output()
	if err != nil {
		return Identity{}, fmt.Errorf("tmux display-message %s: %w", session, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return Identity{}, fmt.Errorf("tmux gave pane pid %q: %w", out, err)
	}
	return Identify(pid)
}

// KillTmuxSession ends a tmux session; a session that is already gone is
// not an error.
func KillTmuxSession(session string) error {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return ErrNoTmux
	}
	if exec.Command(tmux, "has-session", "-t", "="+session).Run() != nil {
		return nil
	}
	out, err := exec.Command(tmux, "kill-session", "-t", "="+session).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tmux kill-session %s: %w: %s", session, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// shellQuote quotes s for sh as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

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
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Exit reasons, as recorded in crash records.
const (
	// ReasonExited means the process exited by itself with a status.
	ReasonExited = "Exited"
	// ReasonSignaled means a signal killed the process.
	ReasonSignaled = "Signaled"
	// ReasonVanished means an adopted process ended; only its parent could
	// learn its exit status.
	ReasonVanished = "Vanished"
	// ReasonPIDReused means the PID now belongs to another process, so the
	// recorded one is gone.
	ReasonPIDReused = "PIDReused"
)

// Exit describes how a process ended.
type Exit struct {
	// Identity is the process that ended.
	Identity Identity
	// Time is when the end was observed.
	Time time.Time
	// Reason is one of the Reason constants.
	Reason string
	// ExitCode is the exit status, or -1 when a signal killed the process
	// or the status is unknown.
	ExitCode int
	// Signal is the signal that killed the process, or 0.
	Signal syscall.Signal
}

// Known reports whether the exit status was observed, which only the
// parent of a process can do.
func (e Exit) Known() bool { return e.Reason == ReasonExited || e.Reason == ReasonSignaled }

func (e Exit) String() string {
	switch e.Reason {
	case ReasonExited:
		return fmt.Sprintf("%s exited with code %d", e.Identity, e.ExitCode)
	case ReasonSignaled:
		return fmt.Sprintf("%s killed by signal %d (%s)", e.Identity, int(e.Signal), unix.SignalName(e.Signal))
	case ReasonPIDReused:
		return fmt.Sprintf("%s is gone; its PID was reused", e.Identity)
	default:
		return fmt.Sprintf("%s ended; its exit status is unknown", e.Identity)
	}
}

// LaunchSpec says how to start a process.
type LaunchSpec struct {
	// Command is the argv; Command[0] is looked up in PATH.
	Command []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is added to the caller's environment, as NAME=VALUE.
	Env []string
	// Unset names variables of the caller's environment the process does
	// not inherit (Env may still set them). A tmux pane takes its
	// environment from the tmux server, which this does not change.
	Unset []string
	// LogFile receives stdout and stderr, appended; created 0600 in 0700
	// directories. Empty discards the output.
	LogFile string
	// Token, when set, is given to the process as LaunchTokenEnv, so that
	// FindLaunched finds it again after a crash of the launcher.
	Token string
}

// Launch starts spec in a new session, so it leads its own process group
// and outlives the caller and the caller's terminal. The returned notice
// delivers the process's Exit, with its status, if it ends while the
// caller runs.
func Launch(spec LaunchSpec) (Identity, *ExitNotice, error) {
	if len(spec.Command) == 0 {
		return Identity{}, nil, errors.New("no command to launch")
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = append(inherited(os.Environ(), append(slices.Clone(spec.Unset), LaunchTokenEnv)), spec.Env...)
	if spec.Token != "" {
		cmd.Env = append(cmd.Env, LaunchTokenEnv+"="+spec.Token)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if spec.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(spec.LogFile), 0o700); err != nil {
			return Identity{}, nil, err
		}
		log, err := os.OpenFile(spec.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return Identity{}, nil, err
		}
		defer func() { _ = log.Close() }()
		cmd.Stdout, cmd.Stderr = log, log
	}
	if err := cmd.Start(); err != nil {
		return Identity{}, nil, err
	}
	id, err := Identify(cmd.Process.Pid)
	if err != nil {
		// The child already exited; Wait still reports how.
		boot, _ := BootID()
		id = Identity{PID: cmd.Process.Pid, BootID: boot}
	}
	notice := newExitNotice()
	reap := func() {
		_ = cmd.Wait()
		notice.deliver(exitOf(id, cmd.ProcessState))
	}
	// Wait alone would block an OS thread in waitid(2) for the process's
	// whole life; it is called once the pidfd says the child has ended,
	// and then only reaps it.
	if fd, err := unix.PidfdOpen(cmd.Process.Pid, 0); err == nil {
		if p, err := exitPollerOf(); err != nil {
			_ = unix.Close(fd)
		} else if _, err := p.add(fd, reap); err == nil {
			return id, notice, nil
		}
	}
	go reap()
	return id, notice, nil
}

func exitOf(id Identity, state *os.ProcessState) Exit {
	e := Exit{Identity: id, Time: time.Now(), ExitCode: -1, Reason: ReasonVanished}
	if state == nil {
		return e
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		e.Reason, e.Signal = ReasonSignaled, ws.Signal()
	case ok && ws.Exited():
		e.Reason, e.ExitCode = ReasonExited, ws.ExitStatus()
	}
	return e
}

// Watch watches a process that is not the caller's child through a pidfd.
// The notice delivers one Exit when the process ends, and has it already
// when id no longer runs. Stop ends the watch without an Exit.
func Watch(id Identity) (exits *ExitNotice, stop func(), err error) {
	fd, err := unix.PidfdOpen(id.PID, 0)
	if errors.Is(err, unix.ESRCH) {
		return endedNotice(Exit{Identity: id, Time: time.Now(), Reason: ReasonVanished, ExitCode: -1}), func() {}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pidfd_open %d: %w", id.PID, err)
	}
	// The pidfd pins the process it was opened for; checking the identity
	// after opening it rules out a PID reused in between.
	if alive, err := id.Alive(); err != nil || !alive {
		_ = unix.Close(fd)
		if err != nil {
			return nil, nil, err
		}
		// A zombie is the recorded process, dead and not yet reaped (its
		// parent may be an init that never reaps); only a live process with
		// another start time means the PID was reused.
		reason := ReasonVanished
		if st, statErr := readStat(id.PID); statErr == nil && st.state != 'Z' && st.state != 'X' && st.startTicks != id.StartTicks {
			reason = ReasonPIDReused
		}
		return endedNotice(Exit{Identity: id, Time: time.Now(), Reason: reason, ExitCode: -1}), func() {}, nil
	}
	p, err := exitPollerOf()
	if err != nil {
		_ = unix.Close(fd)
		return nil, nil, err
	}
	notice := newExitNotice()
	// The poller reports a pidfd that fails as ended too: a watch that can
	// no longer tell must not stay silent.
	cancel, err := p.add(fd, func() {
		notice.deliver(Exit{Identity: id, Time: time.Now(), Reason: ReasonVanished, ExitCode: -1})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("pidfd of %d: %w", id.PID, err)
	}
	return notice, cancel, nil
}

// Stop ends the process id and its process group: SIGTERM, then SIGKILL
// after grace. It returns once the process is gone. Stopping a process that
// already ended is not an error.
func Stop(id Identity, grace time.Duration) error {
	fd, err := unix.PidfdOpen(id.PID, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", id.PID, err)
	}
	defer func() { _ = unix.Close(fd) }()
	if alive, err := id.Alive(); err != nil || !alive {
		return err
	}
	signal := func(sig unix.Signal) {
		// A session leader's group shares its PID; signalling the group
		// also stops the children an agent started.
		if pgid, err := unix.Getpgid(id.PID); err == nil && pgid == id.PID {
			_ = unix.Kill(-pgid, sig)
		}
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
	signal(unix.SIGTERM)
	if waitPidfd(fd, grace) {
		return nil
	}
	signal(unix.SIGKILL)
	if !waitPidfd(fd, 10*time.Second) {
		return fmt.Errorf("%s did not end after SIGKILL", id)
	}
	return nil
}

// waitPidfd waits up to timeout for the process behind fd to end.
func waitPidfd(fd int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		remaining := time.Until(deadline)
		if remaining < 0 {
			remaining = 0
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		// Round up: a timeout truncated to whole milliseconds would end
		// the grace period early.
		n, err := unix.Poll(fds, int((remaining+time.Millisecond-1)/time.Millisecond))
		switch {
		case errors.Is(err, unix.EINTR), err == nil && n == 0 && time.Now().Before(deadline):
			continue
		}
		return err == nil && n > 0
	}
}

// inherited is environ without the variables named in unset.
func inherited(environ, unset []string) []string {
	if len(unset) == 0 {
		return environ
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(unset, name) {
			out = append(out, kv)
		}
	}
	return out
}

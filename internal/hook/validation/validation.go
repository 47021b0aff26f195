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

// Package validation runs a step's validation commands in the workspace and
// records what a receipt needs: exit code, times, and the SHA-256 of the full
// stdout and stderr.
package validation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// DefaultTimeout bounds a command whose timeout is unset; it matches the CRD default.
const DefaultTimeout = 10 * time.Minute

// ExitKilled is the exit code recorded for a command killed by a signal,
// including a process-group kill on timeout.
const ExitKilled = -1

// ExitNotStarted is the exit code recorded for a command that could not be
// started, such as a missing executable; shells use the same code.
const ExitNotStarted = 127

// Result is the outcome of one command.
type Result struct {
	// Command is the argv that was run.
	Command []string
	// ExitCode is the exit status, ExitKilled when a signal ended the command
	// and ExitNotStarted when it could not be started.
	ExitCode int
	// StartedAt and FinishedAt bound the run.
	StartedAt, FinishedAt time.Time
	// Duration is FinishedAt minus StartedAt, from the monotonic clock.
	Duration time.Duration
	// StdoutSHA256 and StderrSHA256 are the hex SHA-256 of the whole output.
	StdoutSHA256, StderrSHA256 string
	// TimedOut is true when the command ran past its timeout and its process
	// group was killed.
	TimedOut bool
	// Err says why a command could not be started; nil otherwise.
	Err error
}

// Passed reports whether the command exited 0.
func (r *Result) Passed() bool { return r.ExitCode == 0 && !r.TimedOut && r.Err == nil }

// Options tune Run. The zero value is usable.
type Options struct {
	// Stdout and Stderr, when set, also receive the commands' output, so a
	// person sees it as it is produced.
	Stdout, Stderr io.Writer
	// Env is the commands' environment; nil means the caller's.
	Env []string
	// WaitDelay bounds how long output is still read after the command
	// exited or was killed, for descendants that escaped its process group
	// but hold its output open. Zero means 5s.
	WaitDelay time.Duration
	// OnStart, when set, is called before each command starts.
	OnStart func(index int, cmd v1.ValidationCommand)
}

// Run runs cmds one after another in workspace, each without a shell, in a
// process group of its own and bounded by its timeout, and stops after the
// first command that does not pass. On timeout, and when ctx is cancelled,
// the command's whole process group is killed. Cancellation returns the
// results of the commands that finished with ctx's error; the interrupted
// command has no result.
func Run(ctx context.Context, workspace string, cmds []v1.ValidationCommand, opts Options) ([]Result, error) {
	fi, err := os.Stat(workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", workspace)
	}
	for i, c := range cmds {
		if len(c.Command) == 0 || c.Command[0] == "" {
			return nil, fmt.Errorf("validate[%d].command: an argv with a program is required", i)
		}
	}
	results := make([]Result, 0, len(cmds))
	for i, c := range cmds {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		if opts.OnStart != nil {
			opts.OnStart(i, c)
		}
		r := runOne(ctx, workspace, c, &opts)
		if err := ctx.Err(); err != nil {
			return results, err
		}
		results = append(results, r)
		if !r.Passed() {
			break
		}
	}
	return results, nil
}

func runOne(ctx context.Context, workspace string, c v1.ValidationCommand, opts *Options) Result {
	timeout := DefaultTimeout
	if c.Timeout != nil && c.Timeout.Duration > 0 {
		timeout = c.Timeout.Duration
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	outHash, errHash := sha256.New(), sha256.New()
	cmd := exec.CommandContext(runCtx, c.Command[0], c.Command[1:]...)
	cmd.Dir = workspace
	cmd.Env = opts.Env
	cmd.Stdout = tee(outHash, opts.Stdout)
	cmd.Stderr = tee(errHash, opts.Stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = opts.WaitDelay
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}

	r := Result{Command: append([]string(nil), c.Command...)}
	start := time.Now()
	r.StartedAt = start
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		// Descendants left in the group would outlive the validation they belong to.
		_ = killGroup(cmd.Process.Pid)
	}
	r.FinishedAt = time.Now()
	r.Duration = r.FinishedAt.Sub(start)
	r.StdoutSHA256 = hex.EncodeToString(outHash.Sum(nil))
	r.StderrSHA256 = hex.EncodeToString(errHash.Sum(nil))
	r.TimedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil

	var exitErr *exec.ExitError
	switch {
	case cmd.ProcessState != nil && !cmd.ProcessState.Exited():
		r.ExitCode = ExitKilled
	case cmd.ProcessState != nil:
		r.ExitCode = cmd.ProcessState.ExitCode()
	case errors.As(err, &exitErr):
		r.ExitCode = exitErr.ExitCode()
	default:
		r.ExitCode = ExitNotStarted
		r.Err = err
	}
	return r
}

// killGroup kills the process group led by pid. A group that is already
// gone is not an error.
func killGroup(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing process group %d: %w", pid, err)
	}
	return nil
}

func tee(h hash.Hash, w io.Writer) io.Writer {
	if w == nil {
		return h
	}
	return io.MultiWriter(h, w)
}

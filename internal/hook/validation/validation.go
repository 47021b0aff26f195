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
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/validation/supervisor"
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
	// and every descendant carrying its token were killed, for a descendant
	// that removed the token from its environment but holds the output
	// open. Zero means 5s.
	WaitDelay time.Duration
	// OnStart, when set, is called before each command starts.
	OnStart func(index int, cmd v1.ValidationCommand)
}

// Run runs cmds one after another in workspace, each without a shell, in a
// process group of its own and bounded by its timeout, and stops after the
// first command that does not pass. Each command runs under a supervisor,
// this binary re-executed (package supervisor), which is a child
// subreaper: every descendant of the command, even one that left its
// process group (setsid, a double fork), stays the supervisor's
// descendant, and the supervisor kills them all on timeout, when ctx is
// cancelled, when the command exits, and when the calling process dies
// (its lifeline pipe ends), SIGKILL included. Should the supervisor itself
// be killed, the descendants are found by the token in their environment
// (TokenEnv); the calling process is made a child subreaper for that case,
// so Run is for short-lived processes such as `tether step done`: a
// long-running one would collect the orphans of every process it started.
// Cancellation returns the results of the commands that finished with
// ctx's error; the interrupted command has no result.
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
	waitDelay := opts.WaitDelay
	if waitDelay == 0 {
		waitDelay = 5 * time.Second
	}
	becomeSubreaper()

	r := Result{Command: append([]string(nil), c.Command...)}
	outHash, errHash := sha256.New(), sha256.New()
	token, err := newToken()
	if err != nil {
		return notStarted(r, err)
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return notStarted(r, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return notStarted(r, err)
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW, errR, errW)
		return notStarted(r, err)
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW, errR, errW, lifeR, lifeW)
		return notStarted(r, err)
	}
	defer closeAll(lifeW, statR)
	// The program is looked up here, as exec.Command would, so that a
	// missing program is reported in the same words.
	probe := exec.Command(c.Command[0], c.Command[1:]...)
	sup := exec.Command("/proc/self/exe", append([]string{supervisor.Verb, token, probe.Path}, c.Command...)...)
	sup.Args[0] = os.Args[0]
	sup.Dir = workspace
	sup.Env = env
	// The supervisor's own pipes, read here, rather than exec's: its Wait
	// would wait for every descendant holding them, up to WaitDelay.
	sup.Stdout, sup.Stderr = outW, errW
	sup.ExtraFiles = []*os.File{lifeR, statW}

	start := time.Now()
	r.StartedAt = start
	startErr := probe.Err
	if startErr == nil {
		startErr = sup.Start()
	}
	closeAll(outW, errW, lifeR, statW)
	copied := make(chan struct{}, 2)
	for _, p := range []struct {
		from *os.File
		to   io.Writer
	}{{outR, tee(outHash, opts.Stdout)}, {errR, tee(errHash, opts.Stderr)}} {
		go func() {
			_, _ = io.Copy(p.to, p.from)
			copied <- struct{}{}
		}()
	}
	timedOut := false
	var rep report
	if startErr == nil {
		started, ended := make(chan struct{}), make(chan struct{})
		reported := make(chan report, 1)
		go func() { reported <- readReport(statR, started, ended) }()
		// The supervisor's exit status says nothing: the report does.
		exited := make(chan struct{})
		go func() {
			_ = sup.Wait()
			close(exited)
		}()
		// The timeout runs from the command's start: the supervisor's own
		// start is not the command's time.
		var deadline <-chan time.Time
		for done := false; !done; {
			select {
			case <-exited:
				done = true
			case <-started:
				started = nil
				timer := time.NewTimer(timeout)
				defer timer.Stop()
				deadline = timer.C
			case <-ended:
				ended, deadline = nil, nil
			case <-deadline:
				timedOut = ctx.Err() == nil
				_ = lifeW.Close()
				<-exited
				done = true
			case <-ctx.Done():
				_ = lifeW.Close()
				<-exited
				done = true
			}
		}
		rep = <-reported
		// Should the supervisor itself have been killed, its descendants
		// are found by their token.
		if rep.pid > 0 {
			killTree(rep.pid, token)
		}
	}
	r.FinishedAt = time.Now()
	r.Duration = r.FinishedAt.Sub(start)
	drain(copied, waitDelay, outR, errR)
	r.StdoutSHA256 = hex.EncodeToString(outHash.Sum(nil))
	r.StderrSHA256 = hex.EncodeToString(errHash.Sum(nil))
	r.TimedOut = timedOut

	switch {
	case startErr != nil:
		r.ExitCode, r.Err = ExitNotStarted, startErr
	case rep.startErr != nil:
		r.ExitCode, r.Err = ExitNotStarted, rep.startErr
	case rep.exited:
		r.ExitCode = rep.exitCode
	default:
		// Killed by a signal, or the supervisor was.
		r.ExitCode = ExitKilled
	}
	return r
}

// drain waits for both output copies to reach the end of their pipe, at
// most delay: a descendant that dropped the token from its environment may
// still hold a pipe open. The pipes are closed either way.
func drain(copied <-chan struct{}, delay time.Duration, pipes ...*os.File) {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for range pipes {
		select {
		case <-copied:
		case <-timer.C:
			for _, p := range pipes {
				_ = p.Close()
			}
			<-copied
		}
	}
	for _, p := range pipes {
		_ = p.Close()
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

func notStarted(r Result, err error) Result {
	r.StartedAt = time.Now()
	r.FinishedAt = r.StartedAt
	r.ExitCode, r.Err = ExitNotStarted, err
	return r
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func tee(h hash.Hash, w io.Writer) io.Writer {
	if w == nil {
		return h
	}
	return io.MultiWriter(h, w)
}

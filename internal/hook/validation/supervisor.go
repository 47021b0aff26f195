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

package validation

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// SupervisorVerb is the hidden first argument with which Run re-executes
// the running binary as the supervisor of one validation command.
const SupervisorVerb = "__validate-supervisor"

// The supervisor's inherited descriptors, after stdin, stdout and stderr:
// the lifeline, whose end of file means stop (the caller closed it, or
// died), and the status pipe, on which the supervisor reports the command.
const (
	lifelineFD = 3
	statusFD   = 4
)

// supervisorKillWait bounds the supervisor's wait for its killed
// descendants, for a process stuck in the kernel.
const supervisorKillWait = 5 * time.Second

var supervisorServed atomic.Bool

// ServeSupervisor must be called first thing in main (and in TestMain of a
// test binary that runs validations): when the process was started as a
// validation supervisor it supervises the command and exits; otherwise it
// returns, and Run may start this binary as a supervisor. Run fails in a
// binary that did not call it.
func ServeSupervisor() {
	if len(os.Args) > 1 && os.Args[1] == SupervisorVerb {
		os.Exit(supervise(os.Args[2:]))
	}
	supervisorServed.Store(true)
}

// supervise runs args (token, path, argv...) in a process group of its own
// and reports it on the status pipe: "pid N" once started, then "exit N",
// "signal" or "error MESSAGE". It is a child subreaper, so that every
// descendant of the command stays its descendant, even after a setsid or a
// double fork; when the command exits, when the lifeline ends (the caller
// stopped the command or died) or on SIGINT, SIGTERM or SIGHUP, it kills
// them all and reaps them before it exits.
func supervise(args []string) int {
	if len(args) < 3 {
		return 2
	}
	token, path, argv := args[0], args[1], args[2:]
	// The descriptors would otherwise leak into the command: a descendant
	// holding the lifeline open would hide the caller's death.
	syscall.CloseOnExec(lifelineFD)
	syscall.CloseOnExec(statusFD)
	lifeline := os.NewFile(lifelineFD, "lifeline")
	status := os.NewFile(statusFD, "status")
	if status == nil || lifeline == nil {
		return 2
	}
	stop := make(chan struct{}, 3)
	signals := make(chan os.Signal, 1)
	// Caught rather than ignored: an ignored signal stays ignored in the
	// command, across exec.
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-signals
		stop <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		stop <- struct{}{}
	}()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		_, _ = fmt.Fprintf(status, "error %s\n", oneLine(fmt.Errorf("child subreaper: %w", err)))
		return 0
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        argv,
		Env:         append(os.Environ(), TokenEnv+"="+token),
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		_, _ = fmt.Fprintf(status, "error %s\n", oneLine(err))
		return 0
	}
	_, _ = fmt.Fprintf(status, "pid %d\n", cmd.Process.Pid)
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-stop:
		// Killed without reaping, so that cmd.Wait gets the leader's status.
		killDescendants(cmd.Process.Pid)
		<-exited
	}
	// Reported before the descendants are killed, so that the time they
	// take is not counted against the command's timeout.
	if cmd.ProcessState.Exited() {
		_, _ = fmt.Fprintf(status, "exit %d\n", cmd.ProcessState.ExitCode())
	} else {
		_, _ = fmt.Fprintln(status, "signal")
	}
	killAndReapDescendants(cmd.Process.Pid)
	return 0
}

// killDescendants SIGKILLs the process group led by leader and every live
// descendant of this process, and reports whether it found any.
func killDescendants(leader int) bool {
	_ = syscall.Kill(-leader, syscall.SIGKILL)
	pids := descendants(os.Getpid())
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids) > 0
}

// killAndReapDescendants kills the descendants of this process until none
// is left alive and it has no child left to reap: the children of a killed
// process are reparented to this subreaper, and a process may fork between
// a scan and its kill.
func killAndReapDescendants(leader int) {
	deadline := time.Now().Add(supervisorKillWait)
	for {
		found := killDescendants(leader)
		reaped := false
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.ECHILD) && !found {
				return
			}
			if pid <= 0 || err != nil {
				break
			}
			reaped = true
		}
		if time.Now().After(deadline) {
			return
		}
		if !reaped {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// descendants returns the live (not zombie) descendants of root.
func descendants(root int) []int {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	zombie := map[int]bool{}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue
		}
		children[st.PPID] = append(children[st.PPID], p.PID)
		zombie[p.PID] = st.State == "Z"
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !zombie[c] {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// report is what a supervisor said about its command.
type report struct {
	pid      int
	exitCode int
	exited   bool
	signaled bool
	startErr error
}

// readReport reads the supervisor's status pipe to its end; it closes
// started when the command has started, and ended when it has ended.
func readReport(r io.Reader, started, ended chan<- struct{}) report {
	var rep report
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		word, rest, _ := strings.Cut(sc.Text(), " ")
		switch word {
		case "pid":
			if rep.pid == 0 {
				close(started)
			}
			rep.pid, _ = strconv.Atoi(rest)
		case "exit":
			rep.exitCode, _ = strconv.Atoi(rest)
			rep.exited = true
			close(ended)
		case "signal":
			rep.signaled = true
			close(ended)
		case "error":
			rep.startErr = errors.New(rest)
		}
	}
	return rep
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

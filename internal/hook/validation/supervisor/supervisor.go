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

// Package supervisor is the process that runs one validation command for
// `tether step done`: a child subreaper that kills the command's whole
// tree, descendants that left its process group included, when the command
// exits, at its timeout and when its caller dies.
//
// A binary that imports it serves the supervisor from this package's
// init, when it was started with Verb as its first argument: the
// supervisor then runs before the initialisation of the binary's other
// packages (about 70 ms of a tether process's start), once per validation
// command.
package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Verb is the hidden first argument with which a validation re-executes
// the running binary as the supervisor of one command: Verb TOKEN PATH
// ARGV...
const Verb = "__validate-supervisor"

// TokenEnv names the environment variable that marks every process of one
// validation command: set on the command, inherited by its descendants, and
// looked for in /proc/PID/environ when the command's tree is killed.
const TokenEnv = "TETHER_VALIDATION_TOKEN"

// The supervisor's inherited descriptors, after stdin, stdout and stderr:
// the lifeline, whose end of file means stop (the caller closed it, or
// died), and the status pipe, on which the supervisor reports the command.
const (
	LifelineFD = 3
	StatusFD   = 4
)

// killWait bounds the supervisor's wait for its killed descendants, for a
// process stuck in the kernel.
const killWait = 5 * time.Second

func init() {
	if len(os.Args) > 1 && os.Args[1] == Verb {
		os.Exit(supervise(os.Args[2:]))
	}
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
	syscall.CloseOnExec(LifelineFD)
	syscall.CloseOnExec(StatusFD)
	lifeline := os.NewFile(LifelineFD, "lifeline")
	status := os.NewFile(StatusFD, "status")
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
	// os.StartProcess rather than os/exec, whose imports would put this
	// package's init behind most of the binary's; stdin is the null
	// device, as exec.Cmd gives.
	null, err := os.Open(os.DevNull)
	if err != nil {
		_, _ = fmt.Fprintf(status, "error %s\n", oneLine(err))
		return 0
	}
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   append(os.Environ(), TokenEnv+"="+token),
		Files: []*os.File{null, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	_ = null.Close()
	if err != nil {
		_, _ = fmt.Fprintf(status, "error %s\n", oneLine(err))
		return 0
	}
	_, _ = fmt.Fprintf(status, "pid %d\n", proc.Pid)
	exited := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := proc.Wait()
		exited <- st
	}()
	var st *os.ProcessState
	select {
	case st = <-exited:
	case <-stop:
		// Killed without reaping, so that Wait gets the leader's status.
		killDescendants(proc.Pid)
		st = <-exited
	}
	// Reported before the descendants are killed, so that the time they
	// take is not counted against the command's timeout.
	if st != nil && st.Exited() {
		_, _ = fmt.Fprintf(status, "exit %d\n", st.ExitCode())
	} else {
		_, _ = fmt.Fprintln(status, "signal")
	}
	killAndReapDescendants(proc.Pid)
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
	deadline := time.Now().Add(killWait)
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
	children := map[int][]int{}
	zombie := map[int]bool{}
	for _, p := range processes() {
		children[p.ppid] = append(children[p.ppid], p.pid)
		zombie[p.pid] = p.state == 'Z'
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

// process is what descendants needs of /proc/PID/stat.
type process struct {
	pid, ppid int
	state     byte
}

// processes reads the state and parent of every process in /proc. It
// reads /proc itself rather than through prometheus/procfs, which imports
// net: that would put this package's init, and so the supervisor's start,
// behind most of the binary's initialisation.
func processes() []process {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]process, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces and ')': the
		// fields that follow start after the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 || len(fields[0]) != 1 {
			continue
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		out = append(out, process{pid: pid, ppid: ppid, state: fields[0][0]})
	}
	return out
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

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
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/hook/validation/supervisor"
)

// TokenEnv names the environment variable that marks every process of one
// validation command: set on the command, inherited by its descendants, and
// looked for in /proc/PID/environ when the command's tree is killed.
const TokenEnv = supervisor.TokenEnv

// The carriers are looked for until scanPasses scans, scanGap apart, in a
// row find none alive: a process in the middle of an exec has no readable
// environment for a moment, and a live carrier may fork before its kill.
const (
	scanPasses = 3
	scanGap    = 5 * time.Millisecond
)

// reapWait bounds how long a killed descendant reparented to this process
// is waited for; SIGKILL ends a process within milliseconds unless it is
// stuck in the kernel.
const reapWait = time.Second

var subreaper = sync.OnceValue(func() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
})

// becomeSubreaper makes this process the child subreaper of its
// descendants, once. Without it (an old kernel) orphans go to init, where
// the token still finds and kills them.
func becomeSubreaper() { _ = subreaper() }

// killTree kills the process group led by leader and every process whose
// environment carries token, until a scan finds none left alive (a process
// may fork between a scan and its kill), and reaps those that are or become
// children of this process. The leader is left for its exec.Cmd to reap.
// The carriers are found before the group is killed: a dead process's
// environment can no longer be read.
func killTree(leader int, token string) {
	marker := TokenEnv + "=" + token
	self := os.Getpid()
	killed := map[int]bool{}
	found := carriers(marker, self)
	_ = syscall.Kill(-leader, syscall.SIGKILL)
	for quiet := 0; quiet < scanPasses; {
		quiet++
		for _, pid := range found {
			if !killed[pid] && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid], quiet = true, 0
			}
		}
		time.Sleep(scanGap)
		found = carriers(marker, self)
	}
	reap(killed, leader, self)
}

// carriers returns the live processes other than self whose environment
// holds marker. Processes of other users, and zombies, have no readable
// environment and are skipped.
func carriers(marker string, self int) []int {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	var pids []int
	for _, p := range procs {
		if p.PID == self {
			continue
		}
		if env, err := p.Environ(); err == nil && slices.Contains(env, marker) {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// reap waits for the killed processes that are, or become, children of
// self, and for the children of self left in the leader's process group,
// so that they do not stay zombies; only those, so that no other child's
// exit status is taken from its own Wait. A killed process whose parent is
// alive elsewhere is left to that parent.
func reap(killed map[int]bool, leader, self int) {
	delete(killed, leader)
	deadline := time.Now().Add(reapWait)
	for {
		if procs, err := procfs.AllProcs(); err == nil {
			for _, p := range procs {
				if st, err := p.Stat(); err == nil && st.PPID == self && st.PGRP == leader && p.PID != leader {
					killed[p.PID] = true
				}
			}
		}
		for pid := range killed {
			p, err := procfs.NewProc(pid)
			if err != nil {
				delete(killed, pid)
				continue
			}
			st, err := p.Stat()
			switch {
			case err != nil:
				delete(killed, pid)
			case st.PPID == self:
				var ws syscall.WaitStatus
				if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid || err != nil {
					delete(killed, pid)
				}
			case st.State == "Z" && !killed[st.PPID] && st.PPID != leader:
				delete(killed, pid)
			}
		}
		if len(killed) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

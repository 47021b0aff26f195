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

// Package supervise starts, adopts, watches and stops agent processes. It
// detects their exit from events, never by polling: a launched child is
// waited on, and an adopted process is watched through a pidfd. A process is
// known by its Identity (boot, PID and start time), so a reused PID is never
// mistaken for the process it replaced.
package supervise

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/prometheus/procfs"
)

// ErrNotRunning reports that no process with the wanted identity runs.
var ErrNotRunning = errors.New("process is not running")

// Identity names one process for the lifetime of the machine: a PID is
// reused, but not together with the same start time within one boot.
type Identity struct {
	// PID is the process ID.
	PID int
	// StartTicks is the process start time, in clock ticks since boot,
	// from field 22 of /proc/PID/stat.
	StartTicks int64
	// BootID is the kernel's boot_id; after a reboot no identity survives.
	BootID string
}

func (id Identity) String() string {
	return fmt.Sprintf("pid %d (start %d)", id.PID, id.StartTicks)
}

// ParseIdentityPrefix reads the Identity that s begins with, as String
// writes it (the Events of a process's end begin so), with false when s
// does not begin with one.
func ParseIdentityPrefix(s string) (Identity, bool) {
	var id Identity
	if n, err := fmt.Sscanf(s, "pid %d (start %d)", &id.PID, &id.StartTicks); err != nil || n != 2 || id.PID <= 0 {
		return Identity{}, false
	}
	return id, true
}

// procRoot is where proc(5) is mounted; tests do not change it.
const procRoot = "/proc"

// BootID returns the kernel's boot ID. It is read once: it cannot change
// while this process runs, and every launch and watch asks for it.
func BootID() (string, error) { return bootID() }

var bootID = sync.OnceValues(func() (string, error) {
	data, err := os.ReadFile(procRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
})

// procStat is what supervise needs of /proc/PID/stat.
type procStat struct {
	state      byte
	startTicks int64
}

// procFS is proc(5) at procRoot, opened on first use.
var procFS = sync.OnceValues(func() (procfs.FS, error) { return procfs.NewFS(procRoot) })

// readStat reads the state and start time of pid from /proc/PID/stat.
func readStat(pid int) (procStat, error) {
	fs, err := procFS()
	if err != nil {
		return procStat{}, err
	}
	return readStatIn(fs, pid)
}

// readStatIn reads pid's /proc/PID/stat in the proc filesystem fs. A
// process that is gone, or goes while it is read, is ErrNotRunning.
func readStatIn(fs procfs.FS, pid int) (procStat, error) {
	stat, err := func() (procfs.ProcStat, error) {
		p, err := fs.Proc(pid)
		if err != nil {
			return procfs.ProcStat{}, err
		}
		return p.Stat()
	}()
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return procStat{}, fmt.Errorf("pid %d: %w", pid, ErrNotRunning)
	}
	if err != nil {
		return procStat{}, fmt.Errorf("reading the status of pid %d: %w", pid, err)
	}
	if len(stat.State) != 1 || stat.Starttime > math.MaxInt64 {
		return procStat{}, fmt.Errorf("malformed status of pid %d: state %q, start time %d", pid, stat.State, stat.Starttime)
	}
	return procStat{state: stat.State[0], startTicks: int64(stat.Starttime)}, nil
}

// Identify returns the identity of the running process pid.
func Identify(pid int) (Identity, error) {
	if pid <= 0 {
		return Identity{}, fmt.Errorf("pid %d: %w", pid, ErrNotRunning)
	}
	boot, err := BootID()
	if err != nil {
		return Identity{}, err
	}
	st, err := readStat(pid)
	if err != nil {
		return Identity{}, err
	}
	if st.state == 'Z' || st.state == 'X' {
		return Identity{}, fmt.Errorf("pid %d has exited: %w", pid, ErrNotRunning)
	}
	return Identity{PID: pid, StartTicks: st.startTicks, BootID: boot}, nil
}

// Alive reports whether the process id still runs: same boot, same PID,
// same start time, and not a zombie. A mismatch means the process died and
// its PID may have been reused.
func (id Identity) Alive() (bool, error) {
	current, err := Identify(id.PID)
	if errors.Is(err, ErrNotRunning) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return current == id, nil
}

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
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// procRoot is where proc(5) is mounted; tests do not change it.
const procRoot = "/proc"

// BootID returns the kernel's boot ID.
func BootID() (string, error) {
	data, err := os.ReadFile(procRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// procStat is what supervise needs of /proc/PID/stat.
type procStat struct {
	state      byte
	startTicks int64
}

// readStat parses /proc/PID/stat. The command name, field 2, is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return procStat{}, fmt.Errorf("pid %d: %w", pid, ErrNotRunning)
	}
	if err != nil {
		return procStat{}, err
	}
	return parseStat(data)
}

func parseStat(data []byte) (procStat, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("malformed /proc stat: %q", data)
	}
	// Fields after the command: state is field 3, starttime field 22.
	fields := strings.Fields(string(data[end+1:]))
	const stateField, startField = 0, 22 - 3
	if len(fields) <= startField || len(fields[stateField]) != 1 {
		return procStat{}, fmt.Errorf("malformed /proc stat: %q", data)
	}
	ticks, err := strconv.ParseInt(fields[startField], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed start time in /proc stat: %w", err)
	}
	return procStat{state: fields[stateField][0], startTicks: ticks}, nil
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

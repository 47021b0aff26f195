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

package testsupport

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Announcement is one process of a StartLog announcing itself.
type Announcement struct {
	// PID is the process that started.
	PID int
	// At is when the announcement was read.
	At time.Time
}

// StartLog is a FIFO that the processes of a restart benchmark write their
// PID to as their first act, so that "the new process runs" is timed the
// same way for tether and for the fork+exec floor, by the process itself.
type StartLog struct {
	// Path is the FIFO.
	Path string
	// Starts receives one Announcement per announcement.
	Starts <-chan Announcement
}

// NewStartLog makes a FIFO in a temporary directory and reads it until the
// test ends. It is opened for reading and writing, so that a writer never
// blocks and the reader never sees the end of the file.
func NewStartLog(tb testing.TB) *StartLog {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "starts")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = f.Close() })
	starts := make(chan Announcement, 1024)
	go func() {
		s := bufio.NewScanner(f)
		for s.Scan() {
			at := time.Now()
			if pid, err := strconv.Atoi(strings.TrimSpace(s.Text())); err == nil {
				starts <- Announcement{PID: pid, At: at}
			}
		}
	}()
	return &StartLog{Path: path, Starts: starts}
}

// Command is an argv that announces its PID on the log, then becomes
// `sleep seconds` in the same process.
func (l *StartLog) Command(seconds int) []string {
	return []string{"sh", "-c", `echo $$ > "$0"; exec sleep ` + strconv.Itoa(seconds), l.Path}
}

// Next returns the next announcement of a process other than notPID.
func (l *StartLog) Next(tb testing.TB, notPID int) Announcement {
	tb.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s := <-l.Starts:
			if s.PID != notPID {
				return s
			}
		case <-timeout:
			tb.Fatal("no process announced its start within 30s")
		}
	}
}

// ForkExecRestarts measures the floor of a restart on this machine, for a
// benchmark to print beside its own figures from the same run: the
// hack/forkexec program supervises l.Command, which is killed n times;
// each duration is from a kill to the new process's announcement.
func ForkExecRestarts(tb testing.TB, l *StartLog, n int) []time.Duration {
	tb.Helper()
	sup := exec.Command(BuildTool(tb, "forkexec"), l.Command(100000)...)
	if err := sup.Start(); err != nil {
		tb.Fatal(err)
	}
	child := l.Next(tb, 0)
	defer func() {
		_ = sup.Process.Kill()
		_ = sup.Wait()
		_ = syscall.Kill(child.PID, syscall.SIGKILL)
	}()
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := syscall.Kill(child.PID, syscall.SIGKILL); err != nil {
			tb.Fatal(err)
		}
		child = l.Next(tb, child.PID)
		out = append(out, child.At.Sub(start))
	}
	return out
}

// Percentile is the p-th percentile of d in milliseconds, 0 for none.
func Percentile(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return float64(s[i].Microseconds()) / 1000
}

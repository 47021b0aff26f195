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

// Command peakrss runs a command, with its own standard streams, and then
// writes the command's peak resident set size and wall time to standard
// error, as its last line: "peakrss: 12345 KiB, 67890 ns, starter 2300
// KiB". It exits with the command's status.
//
// A benchmark cannot read a child's peak RSS from wait4 itself: Go starts
// a child with vfork (CLONE_VM), and the kernel counts the memory the
// child shared with its parent until exec in the child's peak, so every
// command a large test process starts seems as large as the test. Started
// from this small program instead, a command's figure is off by at most
// this program's own few MiB, which it writes as well (starter).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peakrss COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	fmt.Fprintf(os.Stderr, "peakrss: %d KiB, %d ns, starter %d KiB\n", cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, wall.Nanoseconds(), self.Maxrss)
	os.Exit(cmd.ProcessState.ExitCode())
}

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

package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestDescendantsFindsEveryLevel starts a child whose command name holds
// ") " (the /proc/PID/stat field that may confuse a parser) and that has
// a child of its own: both are found, and this process's own entry is
// read with its real parent.
func TestDescendantsFindsEveryLevel(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "a) b")
	if err := os.Symlink("/bin/sh", odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var got []int
	for range 200 {
		if got = descendants(os.Getpid()); len(got) >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Contains(got, cmd.Process.Pid) || len(got) < 2 {
		t.Fatalf("descendants = %v, want the child %d and its sleep", got, cmd.Process.Pid)
	}
	// One reading of /proc: another process starting or ending between
	// two readings would shift the index.
	procs := processes()
	self := slices.IndexFunc(procs, func(p process) bool { return p.pid == os.Getpid() })
	if self < 0 || procs[self].ppid != os.Getppid() {
		t.Fatalf("this process's entry is missing or has the wrong parent")
	}
}

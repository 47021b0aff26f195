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
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// fakeT records what a cleanup reports, so a test can run another's end.
type fakeT struct {
	testing.TB
	cleanups []func()
	failed   bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// A detached grandchild that writes after its parent exited is waited for,
// and one that outlives the timeout is killed and fails the test.
func TestTagProcessesWaitsForDetachedProcesses(t *testing.T) {
	cases := []struct {
		name string
		// release lets the child go on to write once it has been listed;
		// otherwise it waits until killed.
		release  bool
		timeout  time.Duration
		wantFail bool
	}{
		{name: "ends within the timeout", release: true, timeout: 20 * time.Second},
		{name: "outlives the timeout", timeout: 300 * time.Millisecond, wantFail: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			marker, release := filepath.Join(dir, "written"), filepath.Join(dir, "release")
			ft := &fakeT{TB: t}
			tag := TagProcesses(ft, tc.timeout)
			// The shell exits at once; its background child waits for the
			// release file (however slow the machine, it is still running
			// when listed), then writes.
			cmd := exec.Command("sh", "-c", "(while [ ! -e "+release+" ]; do sleep 0.05; done; echo done > "+marker+") </dev/null >/dev/null 2>&1 &")
			cmd.Env = append(os.Environ(), tag)
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			if len(TaggedProcesses(tag)) == 0 {
				t.Fatal("the detached child is not listed")
			}
			if tc.release {
				if err := os.WriteFile(release, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			ft.end()
			if ft.failed != tc.wantFail {
				t.Errorf("failed %v, want %v", ft.failed, tc.wantFail)
			}
			if left := TaggedProcesses(tag); len(left) != 0 {
				t.Errorf("processes %v left after the end", left)
			}
			if _, err := os.Stat(marker); (err == nil) == tc.wantFail {
				t.Errorf("marker: %v after %s; the child should have written it only if waited for", err, time.Since(start))
			}
		})
	}
}

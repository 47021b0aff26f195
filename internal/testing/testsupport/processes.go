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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// ProcessTagEnv is the environment variable TagProcesses sets.
const ProcessTagEnv = "TETHER_TEST_PROCESS_TAG"

var tagSeq atomic.Int64

// TagProcesses returns an environment entry, NAME=VALUE, unique to t. Every
// process started with it, and every process those start, detached or not,
// inherits it. When t ends, before any directory t made earlier is removed,
// a cleanup waits up to timeout for all of them to exit; the ones left are
// killed and the test fails. Without it, a background process of the binary
// (a checkpoint finished after its hook answered) could still be writing in
// a test's directory while the testing package removes it.
func TagProcesses(t testing.TB, timeout time.Duration) string {
	t.Helper()
	tag := ProcessTagEnv + "=" + fmt.Sprintf("%d-%d", os.Getpid(), tagSeq.Add(1))
	t.Cleanup(func() {
		deadline := time.Now().Add(timeout)
		for {
			left := TaggedProcesses(tag)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				for _, pid := range left {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				for end := time.Now().Add(5 * time.Second); len(TaggedProcesses(tag)) > 0 && time.Now().Before(end); {
					time.Sleep(20 * time.Millisecond)
				}
				t.Errorf("processes %v this test started were still running %s after it ended; killed", left, timeout)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return tag
}

// TaggedProcesses lists the running processes whose environment holds the
// entry tag. A zombie has no readable environment, so it is not listed.
func TaggedProcesses(tag string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	want := []byte(tag)
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

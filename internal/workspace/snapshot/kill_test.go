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

package snapshot_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

const killChildEnv = "TETHER_SNAPSHOT_KILL_CHILD"

// TestKillChild is the child process of TestKillNineLeavesNoBrokenRef: it
// captures in a loop until it is killed.
func TestKillChild(t *testing.T) {
	spec := os.Getenv(killChildEnv)
	if spec == "" {
		t.Skip("runs only as the child of TestKillNineLeavesNoBrokenRef")
	}
	dir, base, _ := strings.Cut(spec, ",")
	seq, err := strconv.ParseInt(base, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); ; i++ {
		// Each capture has something new to write, so objects are written too.
		if err := os.WriteFile(fmt.Sprintf("%s/gen-%d-%d.txt", dir, seq, i), []byte(strings.Repeat("data ", int(i%50)+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := snapshot.Capture(context.Background(), dir, opts(seq+i)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKillNineLeavesNoBrokenRef kills a capturing process with SIGKILL at
// random moments, 100 times: every checkpoint ref that exists must point
// at a complete commit, and capturing must still work.
func TestKillNineLeavesNoBrokenRef(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 100 processes")
	}
	dir := newRepo(t)
	for i := range 200 {
		write(t, dir, fmt.Sprintf("src/f%03d.txt", i), strings.Repeat("line\n", i))
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "files")
	rng := rand.New(rand.NewPCG(1, 2))
	const kills = 100
	for k := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", killChildEnv, dir, (k+1)*100000))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Start-up takes some milliseconds; captures follow each other after that.
		time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	out := gitT(t, dir, "for-each-ref", "--format=%(refname)", snapshot.RefPrefix)
	refs := strings.Fields(out)
	if len(refs) == 0 {
		t.Fatal("no capture completed before its kill; the test proves nothing")
	}
	assertRefsComplete(t, dir)
	t.Logf("%d kills, %d refs, all complete", kills, len(refs))
	before := stateOf(t, dir)
	if _, err := snapshot.Capture(context.Background(), dir, opts(1)); err != nil {
		t.Fatalf("capture after the kills: %v", err)
	}
	if after := stateOf(t, dir); before.status != after.status || string(before.index) != string(after.index) {
		t.Error("the kills and the capture after them changed the user's state")
	}
}

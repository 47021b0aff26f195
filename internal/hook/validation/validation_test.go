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

package validation_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/validation"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func sh(script string, timeout time.Duration) v1.ValidationCommand {
	c := v1.ValidationCommand{Command: []string{"sh", "-c", script}}
	if timeout > 0 {
		c.Timeout = &metav1.Duration{Duration: timeout}
	}
	return c
}

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		cmds      []v1.ValidationCommand
		wantCodes []int
		wantOut   []string
		wantErr   []string
		timedOut  int // index of the command expected to time out, or -1
	}{
		{
			name:      "all pass",
			cmds:      []v1.ValidationCommand{sh("echo one", 0), sh("printf two >&2", 0)},
			wantCodes: []int{0, 0},
			wantOut:   []string{"one\n", ""},
			wantErr:   []string{"", "two"},
			timedOut:  -1,
		},
		{
			name:      "stops at the first failure",
			cmds:      []v1.ValidationCommand{sh("echo ok", 0), sh("echo bad >&2; exit 3", 0), sh("echo never", 0)},
			wantCodes: []int{0, 3},
			wantOut:   []string{"ok\n", ""},
			wantErr:   []string{"", "bad\n"},
			timedOut:  -1,
		},
		{
			name:      "missing program",
			cmds:      []v1.ValidationCommand{{Command: []string{"./no-such-program"}}},
			wantCodes: []int{validation.ExitNotStarted},
			wantOut:   []string{""},
			wantErr:   []string{""},
			timedOut:  -1,
		},
		{
			name:      "timeout kills",
			cmds:      []v1.ValidationCommand{sh("echo started; sleep 30", 200*time.Millisecond), sh("echo never", 0)},
			wantCodes: []int{validation.ExitKilled},
			wantOut:   []string{"started\n"},
			wantErr:   []string{""},
			timedOut:  0,
		},
		{
			name:      "large output is hashed in full",
			cmds:      []v1.ValidationCommand{sh("yes line | head -n 100000", 0)},
			wantCodes: []int{0},
			wantOut:   []string{strings.Repeat("line\n", 100000)},
			wantErr:   []string{""},
			timedOut:  -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results, err := validation.Run(context.Background(), t.TempDir(), tt.cmds, validation.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != len(tt.wantCodes) {
				t.Fatalf("%d results, want %d: %+v", len(results), len(tt.wantCodes), results)
			}
			for i, r := range results {
				if r.ExitCode != tt.wantCodes[i] {
					t.Errorf("result %d: exit %d, want %d (err %v)", i, r.ExitCode, tt.wantCodes[i], r.Err)
				}
				if r.StdoutSHA256 != sum(tt.wantOut[i]) || r.StderrSHA256 != sum(tt.wantErr[i]) {
					t.Errorf("result %d: output hashes do not match %q / %q", i, tt.wantOut[i], tt.wantErr[i])
				}
				if r.TimedOut != (i == tt.timedOut) {
					t.Errorf("result %d: timedOut %v", i, r.TimedOut)
				}
				if r.Passed() != (tt.wantCodes[i] == 0) {
					t.Errorf("result %d: Passed() = %v", i, r.Passed())
				}
				if r.FinishedAt.Before(r.StartedAt) || r.Duration <= 0 {
					t.Errorf("result %d: times %v..%v, duration %v", i, r.StartedAt, r.FinishedAt, r.Duration)
				}
				if strings.Join(r.Command, " ") != strings.Join(tt.cmds[i].Command, " ") {
					t.Errorf("result %d: command %q", i, r.Command)
				}
			}
		})
	}
}

func TestRunsInWorkspace(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "marker"), []byte("here"), 0o600); err != nil {
		t.Fatal(err)
	}
	results, err := validation.Run(context.Background(), ws, []v1.ValidationCommand{{Command: []string{"cat", "marker"}}}, validation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].ExitCode != 0 || results[0].StdoutSHA256 != sum("here") {
		t.Fatalf("cat marker in the workspace: %+v", results[0])
	}
}

func TestBadInputRunsNothing(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	tests := []struct {
		name      string
		workspace string
		cmds      []v1.ValidationCommand
		want      string
	}{
		{"missing workspace", filepath.Join(ws, "absent"), []v1.ValidationCommand{sh("touch "+marker, 0)}, "workspace"},
		{"empty argv", ws, []v1.ValidationCommand{sh("touch "+marker, 0), {}}, "validate[1].command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validation.Run(context.Background(), tt.workspace, tt.cmds, validation.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one naming %s", err, tt.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("a command ran despite the bad input")
			}
		})
	}
}

// waitGone waits until the pid written to file no longer exists.
func waitGone(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("descendant %d survived the process-group kill", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	ws := t.TempDir()
	pidFile := filepath.Join(ws, "grandchild.pid")
	script := "sleep 60 & echo $! > grandchild.pid; wait"
	start := time.Now()
	results, err := validation.Run(context.Background(), ws, []v1.ValidationCommand{sh(script, 300*time.Millisecond)}, validation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("timeout took %v", elapsed)
	}
	if !results[0].TimedOut || results[0].ExitCode != validation.ExitKilled {
		t.Fatalf("result %+v, want a timed-out kill", results[0])
	}
	waitGone(t, pidFile)
}

func TestCancelKillsTheProcessGroupAndReturnsTheError(t *testing.T) {
	ws := t.TempDir()
	pidFile := filepath.Join(ws, "grandchild.pid")
	ctx, cancel := context.WithCancel(context.Background())
	started := 0
	opts := validation.Options{OnStart: func(i int, _ v1.ValidationCommand) {
		started++
		if i == 1 {
			go func() {
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
						break
					}
				}
				cancel()
			}()
		}
	}}
	cmds := []v1.ValidationCommand{sh("true", 0), sh("sleep 60 & echo $! > grandchild.pid; wait", 0), sh("true", 0)}
	results, err := validation.Run(ctx, ws, cmds, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if len(results) != 1 || started != 2 {
		t.Fatalf("%d results after %d starts, want the first command's only", len(results), started)
	}
	waitGone(t, pidFile)
}

// TestSetsidDescendantsAreKilled: a descendant that leaves the process group
// with setsid (and so escapes a group kill) is killed with the command, and
// does not hold the command's output open: the timeout is honoured within a
// margin well below WaitDelay, and a command that exits returns at once.
func TestSetsidDescendantsAreKilled(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatalf("setsid(1) is needed: %v", err)
	}
	const timeout = 500 * time.Millisecond
	const margin = 10 * time.Second
	opts := validation.Options{WaitDelay: time.Minute}
	tests := []struct {
		name     string
		script   string
		timedOut bool
		maxTime  time.Duration
	}{
		{"at the timeout", "setsid sleep 30 & echo $! > grandchild.pid; sleep 30", true, timeout + margin},
		{"when the command exits", "setsid sleep 30 & echo $! > grandchild.pid; echo done", false, margin},
		{"a double fork into a new session", "setsid sh -c 'sleep 30 & echo $! > grandchild.pid; wait' & sleep 30", true, timeout + margin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			start := time.Now()
			results, err := validation.Run(context.Background(), ws, []v1.ValidationCommand{sh(tt.script, timeout)}, opts)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if results[0].TimedOut != tt.timedOut {
				t.Errorf("timed out %v, want %v: %+v", results[0].TimedOut, tt.timedOut, results[0])
			}
			if elapsed > tt.maxTime {
				t.Errorf("Run took %v, want at most %v", elapsed, tt.maxTime)
			}
			pidFile := filepath.Join(ws, "grandchild.pid")
			for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(pidFile); err == nil || time.Now().After(deadline) {
					break
				}
			}
			waitGone(t, pidFile)
		})
	}
}

// TestValidationDiesWithItsParent SIGKILLs a process running a validation
// (this test binary, re-executed) and requires every process of the
// validation to die with it: the leader, a background child in its group,
// and a grandchild that left the group with setsid.
func TestValidationDiesWithItsParent(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatalf("setsid(1) is needed: %v", err)
	}
	const script = "echo $$ > leader.pid; sleep 30 & echo $! > child.pid; " +
		"setsid sh -c 'echo $$ > session.pid; sleep 30' & sleep 30 & wait"
	pidFiles := []string{"leader.pid", "child.pid", "session.pid"}
	if ws := os.Getenv("VALIDATION_PARENT_WORKSPACE"); ws != "" {
		_, _ = validation.Run(context.Background(), ws, []v1.ValidationCommand{sh(script, time.Minute)}, validation.Options{})
		return
	}
	ws := t.TempDir()
	parent := exec.Command(os.Args[0], "-test.run=^TestValidationDiesWithItsParent$")
	parent.Env = append(os.Environ(), "VALIDATION_PARENT_WORKSPACE="+ws)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range pidFiles {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if data, err := os.ReadFile(filepath.Join(ws, f)); err == nil && strings.HasSuffix(string(data), "\n") {
				break
			}
			if time.Now().After(deadline) {
				_ = parent.Process.Kill()
				t.Fatalf("the validation did not write %s", f)
			}
		}
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for _, f := range pidFiles {
		waitGone(t, filepath.Join(ws, f))
	}
}

// zombie reports whether pid has exited and waits to be reaped: a test
// process that ran a validation is a subreaper, and the children of a
// killed helper process end up as its zombies.
func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(data), ") ")
	return ok && strings.HasPrefix(after, "Z")
}

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

package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"plain", "with space", "it's", `"$HOME"`, "", "a'b'c", "`x`"} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh read %q back as %q (%v)", s, out, err)
		}
	}
}

func TestLaunchTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	// A private server socket keeps the test away from a person's tmux.
	t.Setenv("TMUX_TMPDIR", t.TempDir())
	t.Setenv("TMUX", "")
	dir := t.TempDir()
	log := filepath.Join(dir, "it's logs", "w.log")
	session := fmt.Sprintf("tether-test-%d", os.Getpid())
	id, err := LaunchTmux(session, LaunchSpec{
		Command: []string{"sh", "-c", `echo "agent $GREETING"; exec sleep 1000`},
		Dir:     dir,
		Env:     []string{"GREETING=hello"},
		LogFile: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = KillTmuxSession(session) })
	if alive, err := id.Alive(); err != nil || !alive {
		t.Fatalf("the pane's process is not alive: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if data, _ := os.ReadFile(log); strings.Contains(string(data), "agent hello") {
			break
		}
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(log)
			t.Fatalf("the pane's output never reached the log: %q", data)
		}
	}
	exits, stop, err := Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := syscall.Kill(id.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if e := waitExit(t, exits, 5*time.Second); e.Identity != id {
		t.Fatalf("exit = %+v", e)
	}
	if err := KillTmuxSession(session); err != nil {
		t.Fatal(err)
	}
	if err := KillTmuxSession(session); err != nil {
		t.Errorf("killing a gone session: %v", err)
	}
	if _, err := LaunchTmux(session, LaunchSpec{}); err == nil {
		t.Error("launching no command succeeded")
	}
	t.Setenv("PATH", dir)
	if _, err := LaunchTmux(session, LaunchSpec{Command: []string{"true"}}); !errors.Is(err, ErrNoTmux) {
		t.Errorf("without tmux on PATH: %v, want ErrNoTmux", err)
	}
}

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

package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestQuickstart runs the README's Quickstart with the built binary first
// in $PATH (its `make build` line aside), then checks that `tether events`
// lists every transition it made, each naming its actor.
func TestQuickstart(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Quickstart\n")
	steps := tutorialSteps(section)
	if !ok || len(steps) == 0 {
		t.Fatal("README.md has no Quickstart shell block")
	}
	var script []string
	for _, l := range strings.Split(steps[0].script, "\n") {
		if strings.HasPrefix(l, "make build") {
			continue
		}
		script = append(script, l)
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-e", "-c", strings.Join(script, "\n")+"\ntether events\nkill %1\n")
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(tetherBin)+":"+os.Getenv("PATH"), "TMPDIR="+tmp, "HOME="+tmp,
		"TETHER_HOME="+filepath.Join(tmp, "tether-home"), "TETHER_ACTOR=", "LC_ALL=C.UTF-8")
	sh.Dir = tmp
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sh.Cancel = func() error { return syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) }
	out, err := sh.CombinedOutput()
	_ = syscall.Kill(-sh.Process.Pid, syscall.SIGTERM)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(tmp, "tether-run.log"))
		t.Fatalf("the Quickstart failed: %v\n%s\ntether run's log:\n%s", err, out, log)
	}
	_, events, _ := strings.Cut(string(out), "LAST SEEN")
	for _, want := range []string{
		"Initialized ... Hook/build-script ... initialize by tether-hook-controller",
		`StepBegun ... Hook/build-script ... begin by tether step begin ... step "script" (1/2)`,
		"ValidationStarted ... Hook/build-script ... validate by tether step done",
		`ValidationPassed ... Hook/build-script ... pass by tether step done ... step "docs" (2/2)`,
		`StepBegun ... Hook/build-script ... begin by tether step begin ... step "docs" (2/2)`,
		"Completed ... Hook/build-script ... pass by tether step done",
		"CheckpointTaken ... Hook/build-script ... validation_pass checkpoint ... by tether step done",
	} {
		found := false
		for _, l := range strings.Split(events, "\n") {
			if matchLine(want, l) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("tether events after the Quickstart lacks %q:\n%s", want, events)
		}
	}
}

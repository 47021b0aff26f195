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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestQuickstart runs the README's Quickstart with the built binary first
// in $PATH (its `make build` line aside), then checks that `tether events`
// lists every transition it made, each naming its actor: one Event per
// entry of the Hook's history, whoever wrote it.
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
		// tether run initializes the Hook unless the first step begin comes
		// first; either way the Event names whoever did.
		"Initialized ... Hook/build-script ... initialize by tether",
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
	get := exec.Command(tetherBin, "get", "hook", "build-script", "-o", "json")
	get.Env, get.Dir = sh.Env, tmp
	data, err = get.Output()
	if err != nil {
		t.Fatalf("tether get hook build-script: %v", err)
	}
	var hook v1.Hook
	if err := json.Unmarshal(data, &hook); err != nil {
		t.Fatal(err)
	}
	if len(hook.Status.History) == 0 {
		t.Fatal("the Hook has no history")
	}
	for _, e := range hook.Status.History {
		from := e.From
		if from == "" {
			from = v1.HookInitializing
		}
		want := fmt.Sprintf("Hook/build-script ... %s by %s: %s → %s", e.Event, e.Actor, from, e.To)
		if !slices.ContainsFunc(strings.Split(events, "\n"), func(l string) bool { return matchLine(want, l) }) {
			t.Errorf("history entry %s by %s (%s → %s) has no Event %q:\n%s", e.Event, e.Actor, from, e.To, want, events)
		}
	}
}

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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHandEditedStateIsNotBelieved edits `status.state: completed` into
// the store file of a running Hook while tether run serves the store: the
// edit is adopted, but not believed. describe shows HistoryConsistent=False
// naming the field, Ready=False and a Warning; recover says the field is
// not to be trusted. Putting the state back clears it.
func TestHandEditedStateIsNotBelieved(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("edited", 3, 0, step("one", 0, "true"), step("two", 0, "true"))
	e.startRun()
	e.waitGet("edited", 20*time.Second, "{.status.state}", "step_pending")
	e.ok("step", "begin", "edited")
	ready := `{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="HistoryConsistent")].status}`
	e.waitGet("edited", 20*time.Second, ready, "True True")

	path := filepath.Join(e.store, "hooks", "default", "edited.yaml")
	stateLine := regexp.MustCompile(`(?m)^  state: step_running$`)
	edit := func(from *regexp.Regexp, to string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !from.Match(data) {
			t.Fatalf("%s has no line %s:\n%s", path, from, data)
		}
		if err := os.WriteFile(path, from.ReplaceAll(data, []byte(to)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	edit(stateLine, "  state: completed")
	e.waitGet("edited", 20*time.Second, "{.status.state} "+ready, "completed False False")

	out := e.ok("describe", "hook", "edited")
	for _, want := range []string{"HistoryConsistent", "HistoryMismatch", "status.state is completed; history says step_running", "not to be trusted"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe does not show %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`Warning\s+HistoryMismatch`).MatchString(out) {
		t.Errorf("describe shows no HistoryMismatch Warning Event:\n%s", out)
	}
	rec := e.ok("recover", "edited")
	for _, want := range []string{"## WARNING: the status disagrees with its history", "`status.state` is completed; history says step_running", "Do not trust them"} {
		if !strings.Contains(rec, want) {
			t.Errorf("recover does not say %q:\n%s", want, rec)
		}
	}
	file, err := os.ReadFile(filepath.Join(e.store, "recovery", "default", "edited.md"))
	if err != nil || !strings.Contains(string(file), "`status.state` is completed") {
		t.Errorf("the recovery file tether run keeps does not name status.state (%v):\n%s", err, file)
	}

	edit(regexp.MustCompile(`(?m)^  state: completed$`), "  state: step_running")
	e.waitGet("edited", 20*time.Second, "{.status.state} "+ready, "step_running True True")
}

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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/retry"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
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

// TestForgedStatusNeverDrivesTheNextAction forges, one field of each kind
// per Hook, the status of running Hooks while tether run serves the store:
// the state (by editing the store file, as in issue 27), the current step,
// the current attempt, a later step's phase and a passed step's attempts.
// For each: get and top mark it, the recovery file, the SessionStart
// context and the Stop continuation tell the agent to stop and ask a
// person instead of following the status, every transition is refused
// (fail and abandon too) naming tether repair, and doctor suggests it.
// tether repair rebuilds the status from the history with a StatusRebuilt
// Event, a second repair changes nothing, and the work goes on.
func TestForgedStatusNeverDrivesTheNextAction(t *testing.T) {
	e := newAgentEnv(t)
	forgeries := []struct {
		name  string
		field string
		edit  func(st *v1.HookStatus)
	}{
		{"forged-state", "status.state", nil},
		{"forged-step", "status.currentStep.index", func(st *v1.HookStatus) {
			st.CurrentStep.Index, st.CurrentStep.Name, st.Steps[0].Phase = 1, "two", v1.StepPassed
		}},
		{"forged-attempt", "status.currentStep.attempt", func(st *v1.HookStatus) { st.CurrentStep.Attempt = 2 }},
		{"forged-phase", "status.steps[1].phase", func(st *v1.HookStatus) { st.Steps[1].Phase = v1.StepPassed }},
		{"forged-attempts", "status.steps[0].attempts", func(st *v1.HookStatus) { st.Steps[0].Attempts = 3 }},
	}
	e.createHook("clean", 3, 0, step("one", 0, "true"), step("two", 0, "true"))
	for _, f := range forgeries {
		e.createHook(f.name, 3, 0, step("one", 0, "true"), step("two", 0, "true"))
	}
	e.startRun()
	consistent := `{.status.state} {.status.conditions[?(@.type=="HistoryConsistent")].status}`
	for _, name := range []string{"clean", "forged-state", "forged-step", "forged-attempt", "forged-phase", "forged-attempts"} {
		e.waitGet(name, 20*time.Second, "{.status.state}", "step_pending")
		e.ok("step", "begin", name)
		e.waitGet(name, 20*time.Second, consistent, "step_running True")
	}
	for _, f := range forgeries {
		if f.edit == nil {
			path := filepath.Join(e.store, "hooks", "default", f.name+".yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			state := regexp.MustCompile(`(?m)^  state: step_running$`)
			if !state.Match(data) {
				t.Fatalf("%s has no state line:\n%s", path, data)
			}
			if err := os.WriteFile(path, state.ReplaceAll(data, []byte("  state: completed")), 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			h := e.hook(f.name)
			f.edit(&h.Status)
			return e.client.Status().Update(context.Background(), h)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range forgeries {
		e.waitGet(f.name, 20*time.Second, `{.status.conditions[?(@.type=="HistoryConsistent")].status}`, "False")
	}

	get := e.ok("get", "hooks")
	top := e.ok("top", "--once")
	doctor, _, code := e.tether("doctor")
	if code != 1 {
		t.Errorf("doctor exit %d, want 1:\n%s", code, doctor)
	}
	for _, line := range strings.Split(get, "\n") {
		if strings.HasPrefix(line, "clean ") && strings.Contains(line, "HistoryMismatch") {
			t.Errorf("get hooks marks a Hook that agrees with its history:\n%s", get)
		}
	}
	for _, f := range forgeries {
		t.Run(f.name, func(t *testing.T) {
			if !regexp.MustCompile(`(?m)^` + f.name + ` .*HistoryMismatch`).MatchString(get) {
				t.Errorf("get hooks does not mark it:\n%s", get)
			}
			if !regexp.MustCompile(`(?m)^` + f.name + ` .*\(history mismatch\)`).MatchString(top) {
				t.Errorf("top --once does not mark it:\n%s", top)
			}
			repair := "`tether repair " + f.name + "`"
			if !strings.Contains(doctor, "tether repair "+f.name) {
				t.Errorf("doctor does not suggest tether repair %s:\n%s", f.name, doctor)
			}
			rec := e.ok("recover", f.name)
			if next := section(t, rec, "## What to do now"); !strings.Contains(next, "stop and ask a person") || !strings.Contains(next, repair) || !strings.Contains(next, f.field) {
				t.Errorf("the recovery file's next action does not say to stop, name %s and %s:\n%s", f.field, repair, next)
			}
			if strings.Contains(rec, "nothing: every step passed") {
				t.Errorf("the recovery file says there is nothing to do:\n%s", rec)
			}
			env := "TETHER_HOOK=" + f.name
			out, _ := e.okHook(map[string]any{"hook_event_name": "SessionStart", "source": "startup", "session_id": f.name}, env)
			if ctx := sessionContext(t, out); !strings.Contains(ctx, "stop and ask a person") || strings.Contains(ctx, "nothing is left to do") {
				t.Errorf("SessionStart context:\n%s", ctx)
			}
			out, _ = e.okHook(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false, "session_id": f.name}, env)
			var block struct{ Decision, Reason string }
			if err := json.Unmarshal([]byte(out), &block); err != nil || block.Decision != "block" || !strings.Contains(block.Reason, "stop and ask a person") || !strings.Contains(block.Reason, repair) {
				t.Errorf("Stop: %q (%v), want a continuation telling the agent to stop and ask a person", out, err)
			}
			verbs := [][]string{{"step", "done", f.name}, {"resume", f.name}}
			if f.edit == nil {
				verbs = [][]string{{"fail", f.name, "--reason", "give up"}, {"abandon", f.name}, {"step", "done", f.name}}
			}
			for _, verb := range verbs {
				if _, stderr, code := e.tether(verb...); code != 1 || !strings.Contains(stderr, "disagrees with its history") || !strings.Contains(stderr, "tether repair "+f.name) {
					t.Errorf("tether %s: exit %d, stderr %q; want 1, naming tether repair", strings.Join(verb, " "), code, stderr)
				}
			}

			out = e.ok("repair", f.name)
			if !strings.Contains(out, "repaired from its history") || !strings.Contains(out, f.field+": ") || !strings.Contains(out, "next: work on step \"one\" (1/2), attempt 1") {
				t.Errorf("repair printed:\n%s", out)
			}
			if out := e.ok("repair", f.name); !strings.Contains(out, "unchanged") {
				t.Errorf("a second repair printed:\n%s", out)
			}
			e.waitGet(f.name, 20*time.Second, consistent, "step_running True")
			if events := e.ok("events", "--for", "hook/"+f.name); !regexp.MustCompile(`StatusRebuilt .*status rebuilt from the history by agent-1: ` + regexp.QuoteMeta(f.field) + ` was `).MatchString(events) {
				t.Errorf("no StatusRebuilt Event naming %s:\n%s", f.field, events)
			}
			if rec := e.ok("recover", f.name); strings.Contains(rec, "WARNING: the status disagrees") || !strings.Contains(section(t, rec, "## What to do now"), "then run `tether step done "+f.name+"`") {
				t.Errorf("recover after the repair:\n%s", rec)
			}
			e.ok("step", "done", f.name)
			e.waitGet(f.name, 20*time.Second, consistent, "step_pending True")
		})
	}

	// A damaged history proves nothing: repair refuses it, writing
	// nothing, and the Hook can still be given up.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := e.hook("clean")
		h.Status.History[1].To = v1.HookStepValidating
		return e.client.Status().Update(context.Background(), h)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitGet("clean", 20*time.Second, `{.status.conditions[?(@.type=="HistoryConsistent")].status}`, "False")
	before := e.hook("clean").ResourceVersion
	if _, stderr, code := e.tether("repair", "clean"); code != 1 || !strings.Contains(stderr, "the history itself is damaged") {
		t.Errorf("repair of a damaged history: exit %d, stderr %q; want 1, saying the history is damaged", code, stderr)
	}
	if rec := e.ok("recover", "clean"); !strings.Contains(rec, "The history itself is damaged") || !strings.Contains(section(t, rec, "## What to do now"), "a person checks the work and decides") {
		t.Errorf("recover of a damaged history:\n%s", rec)
	}
	if after := e.hook("clean").ResourceVersion; after != before {
		t.Errorf("the refused repair wrote the Hook: resourceVersion %s -> %s", before, after)
	}
	e.ok("fail", "clean", "--reason", "the history was damaged")
}

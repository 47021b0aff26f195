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

package hookfsm_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// TestHistoryLimitMatchesTheCRD keeps the constant and the schema's bound
// on status.history in step.
func TestHistoryLimitMatchesTheCRD(t *testing.T) {
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Names.Kind != "Hook" {
			continue
		}
		for _, v := range c.Spec.Versions {
			history := v.Schema.OpenAPIV3Schema.Properties["status"].Properties["history"]
			if history.MaxItems == nil || *history.MaxItems != v1.HookHistoryLimit {
				t.Errorf("%s: status.history maxItems = %v, want %d", v.Name, history.MaxItems, v1.HookHistoryLimit)
			}
		}
		return
	}
	t.Fatal("no Hook CRD")
}

// TestLifecycleDocMatchesAllowed checks the transition table of
// docs/lifecycle.md: a cell is "–" exactly when Apply rejects the event.
func TestLifecycleDocMatchesAllowed(t *testing.T) {
	f, err := os.Open("../../../docs/lifecycle.md")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	cells := func(line string) []string {
		parts := strings.Split(strings.Trim(line, "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	var events []string
	rows := map[v1.HookState]bool{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "| state | initialize |") {
			events = cells(line)[1:]
			continue
		}
		if events == nil {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break // the table ends at its first non-table line
		}
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		row := cells(line)
		state := v1.HookState(row[0])
		if len(row) != len(events)+1 {
			t.Fatalf("row %s has %d cells, want %d", state, len(row)-1, len(events))
		}
		rows[state] = true
		for i, e := range events {
			if allowed := hookfsm.Allowed(state, hookfsm.Event(e)); allowed == (row[i+1] == "–") {
				t.Errorf("(%s, %s): the doc says %q, Allowed says %v", state, e, row[i+1], allowed)
			}
		}
	}
	if len(events) != len(hookfsm.Events()) {
		t.Fatalf("the table has events %v, want %v", events, hookfsm.Events())
	}
	for i, e := range hookfsm.Events() {
		if events[i] != string(e) {
			t.Errorf("column %d is %s, want %s", i, events[i], e)
		}
	}
	for _, s := range hookfsm.States() {
		if !rows[s] {
			t.Errorf("the table has no row for %s", s)
		}
	}
}

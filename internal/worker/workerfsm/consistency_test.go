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

package workerfsm_test

import (
	"os"
	"strings"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// docTable is the phase table of docs/workers.md: its events (the header
// after "phase") and, per phase, the cells in the events' order.
type docTable struct {
	events []string
	rows   map[v1.WorkerPhase][]string
	order  []v1.WorkerPhase
}

// parseDocTable reads the table whose header starts "| phase | started |"
// from doc, to its first non-table line; a row "(none)" is the phase "".
func parseDocTable(t *testing.T, doc string) docTable {
	t.Helper()
	cells := func(line string) []string {
		parts := strings.Split(strings.Trim(line, "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	tab := docTable{rows: map[v1.WorkerPhase][]string{}}
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "| phase | started |"):
			tab.events = cells(line)[1:]
		case tab.events == nil || strings.HasPrefix(line, "|---"):
		case !strings.HasPrefix(line, "| "):
			return tab
		default:
			row := cells(line)
			phase := v1.WorkerPhase(row[0])
			if row[0] == "(none)" {
				phase = ""
			}
			if len(row) != len(tab.events)+1 {
				t.Fatalf("docs/workers.md:%d: row %s has %d cells, want %d", i+1, row[0], len(row)-1, len(tab.events))
			}
			if _, dup := tab.rows[phase]; dup {
				t.Fatalf("docs/workers.md:%d: a second row for %s", i+1, row[0])
			}
			tab.rows[phase], tab.order = row[1:], append(tab.order, phase)
		}
	}
	return tab
}

// TestWorkersDocMatchesTheTable holds the phase table of docs/workers.md to
// the code's: the same events and phases in the same order, and in every
// cell the phase Next gives, "=" where it keeps the phase, "–" where it
// refuses the pair.
func TestWorkersDocMatchesTheTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/workers.md")
	if err != nil {
		t.Fatal(err)
	}
	tab := parseDocTable(t, string(doc))
	if tab.events == nil {
		t.Fatal("docs/workers.md has no table whose header starts \"| phase | started |\"")
	}
	events := workerfsm.Events()
	if strings.Join(tab.events, " ") != strings.Join(eventNames(events), " ") {
		t.Fatalf("the doc's events are %v, the code's %v", tab.events, events)
	}
	phases := workerfsm.Phases()
	if len(tab.order) != len(phases) {
		t.Fatalf("the doc has rows %q, the code phases %q", tab.order, phases)
	}
	for i, p := range phases {
		if tab.order[i] != p {
			t.Errorf("row %d is %q, want %q", i, tab.order[i], p)
		}
		for j, e := range events {
			var want string
			to, err := workerfsm.Next(p, e)
			switch {
			case err != nil:
				want = "–"
			case to == p:
				want = "="
			default:
				want = string(to)
			}
			if got := tab.rows[p][j]; got != want {
				t.Errorf("(%q, %s): the doc says %q, the code %q", p, e, got, want)
			}
		}
	}
}

func eventNames(events []workerfsm.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e)
	}
	return out
}

// TestParseDocTableFindsDifferences checks that the parse sees what the
// consistency test compares: a changed cell reaches the rows.
func TestParseDocTableFindsDifferences(t *testing.T) {
	doc := "text\n\n| phase | started | alive |\n|---|---|---|\n| (none) | Running | – |\n| Pending | = | Running |\n\nmore\n| x |\n"
	tab := parseDocTable(t, doc)
	if strings.Join(tab.events, ",") != "started,alive" || len(tab.order) != 2 || tab.order[0] != "" ||
		strings.Join(tab.rows[""], ",") != "Running,–" || strings.Join(tab.rows[v1.WorkerPending], ",") != "=,Running" {
		t.Fatalf("parsed %+v", tab)
	}
}

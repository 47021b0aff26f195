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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rewriteInPlace saves content over path as many editors do: the same
// file truncated, then written gap later.
func rewriteInPlace(t *testing.T, path, content string, gap time.Duration) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	time.Sleep(gap)
	_, err = f.WriteString(content)
	must(t, err)
	must(t, f.Close())
}

// lineOf is the 1-based line of the first line of content holding s.
func lineOf(t *testing.T, content, s string) int {
	t.Helper()
	for i, l := range strings.Split(content, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %q in\n%s", s, content)
	return 0
}

// TestRefusedHandEditsSayWhy rewrites a store file in place under tether
// run with each kind of bad content and checks that the InvalidEdit Event
// names the file, the line and the field of the final content (never the
// empty file seen midway), that the file is kept as written, and that the
// last valid version stays in effect. An edit of metadata.name or
// metadata.namespace, which the store once dropped without a word by
// rewriting the file, is refused the same way.
func TestRefusedHandEditsSayWhy(t *testing.T) {
	cases := []struct {
		name string
		// edit turns the store's form of the Hook into the bad content.
		edit func(string) string
		// at is text on the line the Event must name; want what it must say.
		at   string
		want []string
		// gap is the time between the truncate and the write; 50 ms
		// when zero.
		gap time.Duration
	}{
		{name: "tab", edit: func(s string) string { return strings.Replace(s, "\n  goal: ", "\n\tgoal: ", 1) },
			at: "\tgoal: ", want: []string{"found character that cannot start any token"}},
		{name: "slow", edit: func(s string) string { return strings.Replace(s, "\n  goal: ", "\n\tgoal: ", 1) },
			at: "\tgoal: ", want: []string{"found character that cannot start any token"}, gap: 700 * time.Millisecond},
		{name: "deep", edit: func(s string) string {
			return strings.Replace(s, "\nspec:\n", "\nspec:\n  deep: "+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)+"\n", 1)
		}, at: "deep: [", want: []string{"exceeded max depth"}},
		{name: "state", edit: func(s string) string { return strings.Replace(s, "\n  state: step_pending\n", "\n  state: bogus\n", 1) },
			at: "state: bogus", want: []string{"status.state", `"bogus"`}},
		{name: "duration", edit: func(s string) string {
			return strings.Replace(s, "\nspec:\n", "\nspec:\n  staleAfter: 99999999999999999999h\n", 1)
		}, at: "staleAfter:", want: []string{"spec.staleAfter"}},
		{name: "steps", edit: func(s string) string {
			i := strings.Index(s, "\n  steps:\n")
			j := strings.Index(s[i+1:], "\nstatus:\n")
			return s[:i] + "\n  steps: one" + s[i+1+j:]
		}, at: "steps: one", want: []string{"spec.steps", "array"}},
		{name: "name", edit: func(s string) string { return strings.Replace(s, "\n  name: name\n", "\n  name: renamed\n", 1) },
			at: "name: renamed", want: []string{"metadata.name", `"renamed"`, "Hook default/name"}},
		{name: "namespace", edit: func(s string) string {
			return strings.Replace(s, "\n  namespace: default\n", "\n  namespace: elsewhere\n", 1)
		}, at: "namespace: elsewhere", want: []string{"metadata.namespace", `"elsewhere"`, "Hook default/namespace"}},
	}
	e := newAgentEnv(t)
	e.startRun()
	for _, c := range cases {
		if code, stderr := e.applyHook(c.name); code != 0 {
			t.Fatalf("apply %s: exit %d: %s", c.name, code, stderr)
		}
	}
	for _, c := range cases {
		e.waitGet(c.name, 30*time.Second, "{.status.state}", "step_pending")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(e.store, "hooks", "default", c.name+".yaml")
			data, err := os.ReadFile(path)
			must(t, err)
			bad := c.edit(string(data))
			if bad == string(data) {
				t.Fatalf("the edit changed nothing in\n%s", data)
			}
			gap := c.gap
			if gap == 0 {
				gap = 50 * time.Millisecond
			}
			rewriteInPlace(t, path, bad, gap)
			where := fmt.Sprintf("%s:%d:", path, lineOf(t, bad, c.at))
			deadline := time.Now().Add(20 * time.Second)
			var events string
			for {
				events = e.ok("events", "--for", "hook/"+c.name)
				if strings.Contains(events, "InvalidEdit") && strings.Contains(events, where) || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !strings.Contains(events, where) || strings.Contains(events, "holds no object") {
				t.Fatalf("tether events --for hook/%s:\n%s\nwant an InvalidEdit naming %s, not the empty file", c.name, events, where)
			}
			for _, w := range c.want {
				if !strings.Contains(events, w) {
					t.Errorf("tether events --for hook/%s:\n%s\nwant it to say %s", c.name, events, w)
				}
			}
			// The watcher has judged the file; give it a moment to do
			// anything else it would.
			time.Sleep(300 * time.Millisecond)
			got, err := os.ReadFile(path)
			must(t, err)
			if string(got) != bad {
				t.Errorf("the refused file was changed; it holds\n%s", got)
			}
			if goal := e.ok("get", "hook", c.name, "-o", "jsonpath={.spec.goal}"); goal != "trust nothing on disk" {
				t.Errorf("goal %q, want the last valid version's", goal)
			}
		})
	}
}

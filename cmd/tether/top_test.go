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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// topSection returns the lines of a tether top frame under title, up to the
// next blank line.
func topSection(frame, title string) []string {
	_, rest, ok := strings.Cut(frame, "\n"+title+"\n")
	if !ok {
		return nil
	}
	body, _, _ := strings.Cut(rest, "\n\n")
	return strings.Split(body, "\n")
}

// TestTopShowsACrash runs a Worker whose command exits with 7 under a real
// tether run: tether top --once lists it as Crashed and its WorkerCrashed
// Warning Event among the alerts, as plain text.
func TestTopShowsACrash(t *testing.T) {
	e := newWorkerEnv(t)
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "flaky"}}
	w.Spec.Command = []string{"sh", "-c", "sleep 1; exit 7"}
	e.create(w)
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "fix-login"}}
	h.Spec.Goal = "Fix the login form"
	h.Spec.Steps = []v1.Step{{Name: "reproduce"}, {Name: "fix"}}
	e.create(h)

	out, stderr, code := e.tether("top", "--once")
	if code != 0 || !strings.Contains(out, "No warnings.") {
		t.Fatalf("top --once before tether run: exit %d, stderr %q:\n%s", code, stderr, out)
	}

	e.startRun()
	e.waitFor(20*time.Second, "the crash record", func() bool { return len(e.worker("flaky").Status.Crashes) > 0 })
	var alerts []string
	e.waitFor(10*time.Second, "the crash among tether top's alerts", func() bool {
		out, stderr, code = e.tether("top", "--once")
		if code != 0 {
			t.Fatalf("top --once: exit %d, stderr %q", code, stderr)
		}
		alerts = topSection(out, "ALERTS")
		for _, l := range alerts {
			if strings.Contains(l, "worker/flaky") && strings.Contains(l, "WorkerCrashed") && strings.Contains(l, "exited with code 7") {
				return true
			}
		}
		return false
	})
	if strings.Contains(out, "\x1b") {
		t.Errorf("top --once printed escape sequences:\n%q", out)
	}
	var workerRow string
	for _, l := range topSection(out, "WORKERS") {
		if strings.HasPrefix(l, "flaky ") {
			workerRow = l
		}
	}
	if f := strings.Fields(workerRow); len(f) < 5 || f[1] != string(v1.WorkerCrashed) || f[4] != "1/3" {
		t.Errorf("worker row %q; want flaky Crashed with 1/3 crashes in the window:\n%s", workerRow, out)
	}
	if hooks := topSection(out, "HOOKS"); len(hooks) != 2 || !strings.HasPrefix(hooks[1], "fix-login ") || !strings.Contains(hooks[1], "step_pending") {
		t.Errorf("hooks section %q; want fix-login pending:\n%s", hooks, out)
	}

	// -A adds the namespace column; without --once, top wants a terminal.
	out, _, code = e.tether("top", "--once", "-A")
	alerts = topSection(out, "ALERTS")
	if code != 0 || !strings.Contains(out, "all namespaces") || len(alerts) < 2 ||
		!strings.HasPrefix(alerts[0], "NAMESPACE ") || !strings.HasPrefix(alerts[1], "default ") || !strings.Contains(alerts[1], "worker/flaky") {
		t.Errorf("top --once -A: exit %d; want the alert with its namespace:\n%s", code, out)
	}
	if _, stderr, code := e.tether("top"); code != 1 || !strings.Contains(stderr, "--once") {
		t.Errorf("top without a terminal: exit %d, stderr %q; want 1 pointing at --once", code, stderr)
	}
}

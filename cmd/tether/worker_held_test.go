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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestWorkerEndsHoldingAFinishedHook runs, under one `tether run`, agents
// that claim a Hook, take it with the agent verbs to completed, failed,
// abandoned or awaiting_human, and then either exit 0 or keep running. An
// agent that exits is no crash of its task: the Hook keeps its state and
// history, its assignee is released, and `tether run` logs no reconciler
// error. Deleting each Worker, exited or running, completes within
// seconds.
func TestWorkerEndsHoldingAFinishedHook(t *testing.T) {
	e := newWorkerEnv(t)
	verbs := map[v1.HookState]string{
		v1.HookCompleted:     `"$T" step begin "$H" --files a && "$T" step done "$H"`,
		v1.HookFailed:        `"$T" step begin "$H" --files a && "$T" fail "$H" --reason "cannot be done"`,
		v1.HookAbandoned:     `"$T" abandon "$H" --reason "not needed"`,
		v1.HookAwaitingHuman: `"$T" step begin "$H" --files a && "$T" await "$H" --reason "which database?"`,
	}
	type agentCase struct {
		name  string
		state v1.HookState
		exits bool
	}
	var cases []agentCase
	for state, verb := range verbs {
		for _, exits := range []bool{true, false} {
			c := agentCase{name: strings.ReplaceAll(string(state), "_", "-") + "-running", state: state, exits: exits}
			then := "exec sleep 100009"
			if exits {
				c.name, then = strings.TrimSuffix(c.name, "running")+"exits", "exit 0"
			}
			cases = append(cases, c)
			h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: c.name}}
			h.Spec.Goal = "end as " + string(state)
			h.Spec.Steps = []v1.Step{{Name: "only"}}
			e.create(h)
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: c.name}}
			w.Spec.Command = []string{"sh", "-c", fmt.Sprintf(`T=%q H=%q; "$T" claim "$H" --worker "$TETHER_WORKER" && %s && echo done; %s`,
				tetherBin, c.name, verb, then)}
			e.create(w)
		}
	}
	e.startRun()

	for _, c := range cases {
		e.waitFor(30*time.Second, c.name+": the agent to take its hook to "+string(c.state), func() bool {
			out, _, _ := e.tether("logs", "worker/"+c.name)
			return e.hook(c.name).Status.State == c.state && strings.Contains(out, "done")
		})
	}
	for _, c := range cases {
		if !c.exits {
			continue
		}
		e.waitFor(20*time.Second, c.name+": the worker to stop and its hook to be released", func() bool {
			return e.worker(c.name).Status.Phase == v1.WorkerStopped && e.hook(c.name).Spec.Assignee == ""
		})
	}
	for _, c := range cases {
		h := e.hook(c.name)
		last := h.Status.History[len(h.Status.History)-1]
		if h.Status.State != c.state || last.To != c.state || last.Actor != "worker/"+c.name || h.Status.Recovery != nil {
			t.Errorf("%s: state %s, last history entry %+v, recovery %+v; want %s by the agent, no recovery", c.name, h.Status.State, last, h.Status.Recovery, c.state)
		}
		start := time.Now()
		out, stderr, code := e.tether("delete", "worker", c.name, "--timeout", "30s")
		if took := time.Since(start); code != 0 || took > 10*time.Second {
			t.Errorf("%s: tether delete worker took %s, exit %d: %q %q; want done within 10s", c.name, took.Round(time.Millisecond), code, out, stderr)
		}
		if h := e.hook(c.name); h.Spec.Assignee != "" || h.Status.State != c.state {
			t.Errorf("%s: after the delete the hook is %s held by %q; want %s and released", c.name, h.Status.State, h.Spec.Assignee, c.state)
		}
	}
	e.stopRun()
	if log := e.out.String(); strings.Contains(log, "Reconciler error") {
		t.Fatalf("tether run logged reconciler errors:\n%s", log)
	}
}

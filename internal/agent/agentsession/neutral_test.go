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

package agentsession_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/agentsession"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// serve is e.try with a neutral event, as any agent's adapter sends it.
func (e *env) serve(ev agentevent.Event) agentsession.Result {
	e.t.Helper()
	if ev.CWD == "" {
		ev.CWD = e.ws
	}
	if ev.SessionID == "" {
		ev.SessionID = "c1"
	}
	e.now = e.now.Add(e.step)
	now := e.now
	res, err := agentsession.Serve(context.Background(), ev, agentsession.Options{
		Client: e.c, Namespace: "default", Recorder: e.rec, Now: func() time.Time { return now },
		Limits: agentevent.Limits{MaxConsecutive: 3, MaxPerHook: 5}, Capabilities: e.caps,
	})
	if err != nil {
		e.t.Fatalf("%s: %v", ev.Kind, err)
	}
	return res
}

// TestServeNeutralEvents drives the handler with neutral events only: the
// agent and its version are recorded, a failed shell call with a commit
// takes its checkpoint, PostCompact counts the compaction and answers the
// anchor, and TurnEnd continues with the next action.
func TestServeNeutralEvents(t *testing.T) {
	e := newEnv(t)
	key := e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
	agent := func(ev agentevent.Event) agentevent.Event {
		ev.Agent, ev.AgentVersion = "codex", "0.171.0"
		return ev
	}

	res := e.serve(agent(agentevent.Event{Kind: agentevent.SessionStart, Source: agentevent.SourceStartup}))
	if !strings.Contains(res.Reply.Context, "# Recovery file: hook task") || res.Reply.Continue {
		t.Fatalf("SessionStart reply %+v", res.Reply)
	}
	s := e.hook(key).Status.AgentSession
	if s == nil || s.Agent != "codex" || s.AgentVersion != "0.171.0" || s.Source != v1.SessionStartup || s.SessionID != "c1" {
		t.Fatalf("session %+v", s)
	}

	git(t, e.ws, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "work")
	if res := e.serve(agent(agentevent.Event{Kind: agentevent.ToolDone, Tool: "shell", ToolFailed: true, Shell: "git commit -qm work && false"})); !res.Reply.IsZero() {
		t.Fatalf("ToolDone reply %+v", res.Reply)
	}
	if lc := e.hook(key).Status.LastCheckpoint; lc == nil || lc.Trigger != v1.TriggerGitCommit {
		t.Fatalf("failed shell call with a commit: last checkpoint %+v", lc)
	}
	if res := e.serve(agent(agentevent.Event{Kind: agentevent.ToolDone, Tool: "apply_patch"})); !res.Reply.IsZero() {
		t.Fatalf("non-shell ToolDone reply %+v", res.Reply)
	}

	e.serve(agent(agentevent.Event{Kind: agentevent.PreCompact, Trigger: "manual"}))
	res = e.serve(agent(agentevent.Event{Kind: agentevent.PostCompact, Trigger: "manual"}))
	if !strings.HasPrefix(res.Reply.Context, "tether context for hook default/task") || !strings.Contains(res.Reply.Context, "# Your context was just compacted") {
		t.Fatalf("PostCompact reply:\n%s", res.Reply.Context)
	}
	if s := e.hook(key).Status.AgentSession; s.Compactions != 1 || s.Source != v1.SessionCompact {
		t.Fatalf("after PostCompact: %+v", s)
	}

	res = e.serve(agent(agentevent.Event{Kind: agentevent.TurnEnd}))
	if !res.Reply.Continue || !strings.Contains(res.Reply.Reason, "tether step done") {
		t.Fatalf("TurnEnd reply %+v", res.Reply)
	}
	if res = e.serve(agent(agentevent.Event{Kind: agentevent.TurnEnd, Continued: true})); res.Reply.Continue {
		t.Fatalf("TurnEnd with no progress continued: %+v", res.Reply)
	}
	e.serve(agent(agentevent.Event{Kind: agentevent.SessionEnd, Reason: "exit"}))
	if s := e.hook(key).Status.AgentSession; s.EndedAt == nil || s.EndReason != "exit" || s.Agent != "codex" {
		t.Fatalf("after SessionEnd: %+v", s)
	}
}

// TestServePromptStartsTheCountAgain: an agent whose every end of turn is
// Continued (Gemini CLI) reaches the cap of continuations in a row only
// without a person's prompt in between; its own continuation submitted as a
// prompt (Continued) does not start the count again.
func TestServePromptStartsTheCountAgain(t *testing.T) {
	e := newEnv(t)
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"}, Spec: v1.HookSpec{Goal: "g", Workspace: e.ws}}
	for i := range 8 {
		h.Spec.Steps = append(h.Spec.Steps, v1.Step{Name: fmt.Sprintf("s%d", i)})
	}
	if err := e.c.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(h)
	e.apply(key, hookfsm.Initialize)
	e.apply(key, hookfsm.Begin)
	turnEnd := func() agentevent.Answer {
		return e.serve(agentevent.Event{Kind: agentevent.TurnEnd, Continued: true, Agent: "gemini"}).Reply
	}
	progress := func() { // the next step
		e.apply(key, hookfsm.Validate)
		e.apply(key, hookfsm.Pass)
		e.apply(key, hookfsm.Begin)
	}
	e.serve(agentevent.Event{Kind: agentevent.SessionStart, Source: agentevent.SourceStartup, Agent: "gemini"})
	continued := func(n int) {
		t.Helper()
		for i := 1; i <= n; i++ {
			if a := turnEnd(); !a.Continue {
				t.Fatalf("turn end %d: not continued (%+v)", i, a)
			}
			e.serve(agentevent.Event{Kind: agentevent.Prompt, Prompt: "tether: hook task is not finished", Continued: true, Agent: "gemini"})
			progress()
		}
	}
	e.serve(agentevent.Event{Kind: agentevent.Prompt, Prompt: "work on the task", Agent: "gemini"})
	continued(1)
	e.serve(agentevent.Event{Kind: agentevent.Prompt, Prompt: "go on", Agent: "gemini"})
	if s := e.hook(key).Status.AgentSession; s.Continuations != 0 {
		t.Fatalf("count after a person's prompt: %d, want 0", s.Continuations)
	}
	continued(3)
	if a := turnEnd(); a.Continue {
		t.Fatalf("past MaxConsecutive 3: continued")
	}
	if c := meta.FindStatusCondition(e.hook(key).Status.Conditions, v1.ConditionAgentLoop); c == nil || c.Reason != string(agentevent.EndConsecutiveCap) {
		t.Fatalf("after the cap: condition %+v", c)
	}
}

// TestServePreCompactThatCompacts: an agent with no event after its
// compaction (Gemini CLI) has it counted at PreCompact; one that reports it
// later is counted then, not twice.
func TestServePreCompactThatCompacts(t *testing.T) {
	e := newEnv(t)
	key := e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
	e.serve(agentevent.Event{Kind: agentevent.SessionStart, Source: agentevent.SourceStartup, Agent: "gemini"})
	e.serve(agentevent.Event{Kind: agentevent.PreCompact, Trigger: "auto", Agent: "claude"})
	if s := e.hook(key).Status.AgentSession; s.Compactions != 0 {
		t.Fatalf("a PreCompact that may give up counted: %+v", s)
	}
	e.serve(agentevent.Event{Kind: agentevent.PreCompact, Trigger: "auto", Compacts: true, Agent: "gemini"})
	if s := e.hook(key).Status.AgentSession; s.Compactions != 1 || s.LastCompactedAt == nil {
		t.Fatalf("after a PreCompact that compacts: %+v", s)
	}
	if lc := e.hook(key).Status.LastCheckpoint; lc == nil || lc.Trigger != v1.TriggerPreCompact {
		t.Fatalf("last checkpoint %+v, want pre_compact", lc)
	}
}

// TestServeDeferredAnchor: an agent with no event after a compaction
// (Gemini CLI's capabilities) has the anchor of a compaction that happens
// given once, by the session's next event whose answer reaches the model;
// a session start answers the recovery file instead and clears it.
func TestServeDeferredAnchor(t *testing.T) {
	gemini := agentevent.Capabilities{NoCompactStart: true, ContextKinds: []agentevent.Kind{agentevent.SessionStart, agentevent.Prompt, agentevent.ToolDone}}
	compacts := agentevent.Event{Kind: agentevent.PreCompact, Trigger: "auto", Compacts: true}
	tool := agentevent.Event{Kind: agentevent.ToolDone, Tool: "run_shell_command", Shell: "ls"}
	prompt := agentevent.Event{Kind: agentevent.Prompt, Prompt: "go on"}
	for _, tc := range []struct {
		name  string
		caps  agentevent.Capabilities
		fresh bool // events within MaxHeartbeatInterval: only the anchor writes
		evs   []agentevent.Event
		// anchor[i] is whether the answer to evs[i] is the anchor.
		anchor  []bool
		pending int32
	}{
		{name: "tool call after the compaction", caps: gemini, evs: []agentevent.Event{compacts, tool, tool}, anchor: []bool{false, true, false}},
		{name: "while the heartbeat is fresh", caps: gemini, fresh: true, evs: []agentevent.Event{compacts, tool, tool}, anchor: []bool{false, true, false}},
		{name: "next prompt", caps: gemini, evs: []agentevent.Event{compacts, prompt, prompt}, anchor: []bool{false, true, false}},
		{name: "end of turn carries none", caps: gemini, evs: []agentevent.Event{compacts, {Kind: agentevent.TurnEnd, Continued: true}, {Kind: agentevent.SessionEnd, Reason: "exit"}}, anchor: []bool{false, false, false}, pending: 1},
		{name: "then the next turn", caps: gemini, evs: []agentevent.Event{compacts, {Kind: agentevent.TurnEnd, Continued: true}, prompt}, anchor: []bool{false, false, true}},
		{name: "resume clears it", caps: gemini, evs: []agentevent.Event{compacts, {Kind: agentevent.SessionStart, Source: agentevent.SourceResume}, tool}, anchor: []bool{false, false, false}},
		{name: "another session", caps: gemini, evs: []agentevent.Event{compacts, {Kind: agentevent.ToolDone, SessionID: "c2", Tool: "x"}}, anchor: []bool{false, false}},
		{name: "second compaction", caps: gemini, evs: []agentevent.Event{compacts, compacts}, anchor: []bool{false, false}, pending: 2},
		{name: "pre-compact that may give up", caps: gemini, evs: []agentevent.Event{{Kind: agentevent.PreCompact, Trigger: "auto"}, tool}, anchor: []bool{false, false}},
		{name: "agent with a start event after compactions", evs: []agentevent.Event{compacts, tool, prompt}, anchor: []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.caps = tc.caps
			key := e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
			e.serve(agentevent.Event{Kind: agentevent.SessionStart, Source: agentevent.SourceStartup})
			if tc.fresh {
				e.step = time.Second
			}
			for i, ev := range tc.evs {
				rv := e.hook(key).ResourceVersion
				res := e.serve(ev)
				got := strings.Contains(res.Reply.Context, "# Your context was just compacted")
				if got != tc.anchor[i] {
					t.Fatalf("event %d (%s): anchor %v, want %v; reply %+v", i, ev.Kind, got, tc.anchor[i], res.Reply)
				}
				if got {
					mustHave(t, res.Reply.Context, `- Current step: "build" (1/2), attempt 1`, "- Last checkpoint:", "- Next:")
				}
				if tc.fresh && ev.Kind == agentevent.ToolDone && !got && e.hook(key).ResourceVersion != rv {
					t.Fatalf("event %d: a fresh tool call without the anchor wrote the status", i)
				}
			}
			if s := e.hook(key).Status.AgentSession; s.AnchorPending != tc.pending {
				t.Fatalf("anchorPending %d, want %d (%+v)", s.AnchorPending, tc.pending, s)
			}
		})
	}
}

func mustHave(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("no %q in:\n%s", sub, s)
		}
	}
}

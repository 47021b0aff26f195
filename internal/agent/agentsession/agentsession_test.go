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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/agentsession"
	"github.com/tether-dev/tether/internal/agent/claudehook"
	"github.com/tether-dev/tether/internal/agent/githooks"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// recorder keeps the Events recorded.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(_ runtime.Object, _ runtime.Object, typ, reason, action, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+" "+reason+" "+action+": "+fmt.Sprintf(note, args...))
}

type env struct {
	t    *testing.T
	c    client.Client
	ws   string
	rec  *recorder
	now  time.Time
	step time.Duration
	env  map[string]string
	caps agentevent.Capabilities
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	git(t, ws, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init")
	return &env{t: t, c: testsupport.Store(t, "").Client(), ws: ws, rec: &recorder{}, now: time.Now(), step: agentsession.MaxHeartbeatInterval + time.Second, env: map[string]string{}}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (e *env) createHook(name, workspace string, events ...hookfsm.Event) client.ObjectKey {
	e.t.Helper()
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.HookSpec{Goal: "g", Workspace: workspace, Steps: []v1.Step{{Name: "build"}, {Name: "test"}}},
	}
	if err := e.c.Create(context.Background(), h); err != nil {
		e.t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(h)
	for _, ev := range events {
		e.apply(key, ev)
	}
	return key
}

func (e *env) apply(key client.ObjectKey, ev hookfsm.Event) {
	e.t.Helper()
	in := hookfsm.Input{Event: ev, Message: "because"}
	if ev == hookfsm.Begin {
		in.Files, in.WorkingOn = []string{"main.go"}, "the parser"
	}
	if _, _, err := hookwrite.Transition(context.Background(), e.c, key, hookwrite.Input(in), hookwrite.Options{Actor: "test"}); err != nil {
		e.t.Fatalf("%s: %v", ev, err)
	}
}

func (e *env) hook(key client.ObjectKey) *v1.Hook {
	e.t.Helper()
	h := &v1.Hook{}
	if err := e.c.Get(context.Background(), key, h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *env) handle(ev claudehook.Event) agentsession.Result {
	e.t.Helper()
	res, err := e.try(ev)
	if err != nil {
		e.t.Fatalf("%s: %v", ev.HookEventName, err)
	}
	return res
}

func (e *env) try(ev claudehook.Event) (agentsession.Result, error) {
	if ev.CWD == "" {
		ev.CWD = e.ws
	}
	if ev.SessionID == "" {
		ev.SessionID = "s1"
	}
	e.now = e.now.Add(e.step)
	now := e.now
	return agentsession.Handle(context.Background(), ev, agentsession.Options{
		Client: e.c, Namespace: "default", Getenv: func(k string) string { return e.env[k] },
		Recorder: e.rec, Now: func() time.Time { return now },
		Limits: claudehook.Limits{MaxConsecutive: 3, MaxPerHook: 5},
	})
}

// context returns the additionalContext of a SessionStart answer.
func additionalContext(t *testing.T, a claudehook.Answer) string {
	t.Helper()
	if len(a.Stdout) == 0 {
		return ""
	}
	var out struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(a.Stdout, &out); err != nil {
		t.Fatalf("%v: %s", err, a.Stdout)
	}
	return out.HookSpecificOutput.AdditionalContext
}

func decision(t *testing.T, a claudehook.Answer) (string, string) {
	t.Helper()
	if len(a.Stdout) == 0 {
		return "", ""
	}
	var out struct{ Decision, Reason string }
	if err := json.Unmarshal(a.Stdout, &out); err != nil {
		t.Fatalf("%v: %s", err, a.Stdout)
	}
	return out.Decision, out.Reason
}

func TestResolution(t *testing.T) {
	cases := []struct {
		name  string
		setup func(e *env)
		cwd   func(e *env) string
		want  string // the Hook, or "" for none
		via   string
		notes string
		ctx   string // a substring of the SessionStart context
	}{
		{name: "workspace", setup: func(e *env) { e.createHook("one", e.ws) }, want: "one", via: agentsession.ViaWorkspace},
		{name: "workspace from a subdirectory", setup: func(e *env) {
			e.createHook("one", e.ws)
			_ = os.MkdirAll(filepath.Join(e.ws, "sub", "dir"), 0o755)
		}, cwd: func(e *env) string { return filepath.Join(e.ws, "sub", "dir") }, want: "one", via: agentsession.ViaWorkspace},
		{name: "terminal hooks do not count", setup: func(e *env) {
			e.createHook("done", e.ws, hookfsm.Initialize, hookfsm.Abandon)
			e.createHook("live", e.ws)
		}, want: "live", via: agentsession.ViaWorkspace},
		{name: "no hook", setup: func(e *env) { e.createHook("elsewhere", filepath.Join(e.t.TempDir(), "elsewhere")) }, notes: "no Hook for"},
		{name: "ambiguous", setup: func(e *env) {
			e.createHook("a", e.ws)
			e.createHook("b", e.ws)
		}, notes: "2 non-terminal Hooks", ctx: "tether agent bind HOOK"},
		{name: "binding settles ambiguity", setup: func(e *env) {
			e.createHook("a", e.ws)
			e.createHook("b", e.ws)
			if _, err := agentsession.WriteBinding(e.ws, agentsession.Binding{Namespace: "default", Hook: "b"}); err != nil {
				e.t.Fatal(err)
			}
		}, want: "b", via: agentsession.ViaBinding},
		{name: "env wins over binding", setup: func(e *env) {
			e.createHook("a", e.ws)
			e.createHook("b", e.ws)
			_, _ = agentsession.WriteBinding(e.ws, agentsession.Binding{Namespace: "default", Hook: "b"})
			e.env[config.HookEnv] = "a"
		}, want: "a", via: agentsession.ViaEnv},
		{name: "env names a missing hook", setup: func(e *env) { e.env[config.HookEnv] = "gone" }, notes: `hook "gone"`},
		{name: "garbage binding warns and falls back", setup: func(e *env) {
			e.createHook("one", e.ws)
			path, _ := agentsession.BindingPath(e.ws)
			_ = os.MkdirAll(filepath.Dir(path), 0o700)
			_ = os.WriteFile(path, []byte("{\"hook\":\"../../etc\""), 0o600)
		}, want: "one", via: agentsession.ViaWorkspace, notes: "binding file"},
		{name: "symlinked binding is refused", setup: func(e *env) {
			e.createHook("one", e.ws)
			path, _ := agentsession.BindingPath(e.ws)
			_ = os.MkdirAll(filepath.Dir(path), 0o700)
			other := filepath.Join(e.t.TempDir(), "b")
			_ = os.WriteFile(other, []byte(`{"namespace":"default","hook":"zzz"}`), 0o600)
			_ = os.Symlink(other, path)
		}, want: "one", via: agentsession.ViaWorkspace, notes: "symbolic link"},
		{name: "binding outside git", setup: func(e *env) {
			dir := filepath.Join(e.t.TempDir(), "plain")
			_ = os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
			e.createHook("one", dir)
			e.createHook("two", dir)
			if _, err := agentsession.WriteBinding(dir, agentsession.Binding{Namespace: "default", Hook: "two"}); err != nil {
				e.t.Fatal(err)
			}
			e.ws = filepath.Join(dir, "sub")
		}, want: "two", via: agentsession.ViaBinding},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.setup(e)
			cwd := ""
			if c.cwd != nil {
				cwd = c.cwd(e)
			}
			res := e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, Source: "startup", CWD: cwd})
			if res.Target.Key.Name != c.want || res.Target.Via != c.via {
				t.Errorf("target %+v, want %q via %q (notes %q)", res.Target, c.want, c.via, res.Notes)
			}
			if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, c.notes) || (c.notes == "" && notes != "") {
				t.Errorf("notes %q, want %q", notes, c.notes)
			}
			if got := additionalContext(t, res.Answer); !strings.Contains(got, c.ctx) {
				t.Errorf("context lacks %q:\n%s", c.ctx, got)
			}
			if c.want != "" && !strings.Contains(additionalContext(t, res.Answer), "# Recovery file: hook "+c.want) {
				t.Errorf("SessionStart did not inject %s's recovery file:\n%s", c.want, res.Answer.Stdout)
			}
		})
	}
}

func TestBindingFile(t *testing.T) {
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	path, err := agentsession.WriteBinding(ws, agentsession.Binding{Namespace: "team-a", Hook: "fix"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(ws, ".git", "tether", "binding"); path != want {
		t.Errorf("binding at %s, want %s", path, want)
	}
	b, _, err := agentsession.ReadBinding(ws)
	if err != nil || b == nil || b.Hook != "fix" || b.Namespace != "team-a" {
		t.Fatalf("read %+v, %v", b, err)
	}
	for _, bad := range []agentsession.Binding{{Namespace: "default", Hook: "../x"}, {Namespace: "a/b", Hook: "x"}, {Namespace: "default", Hook: ""}} {
		if _, err := agentsession.WriteBinding(ws, bad); err == nil {
			t.Errorf("WriteBinding(%+v) accepted", bad)
		}
	}
	for name, content := range map[string]string{"truncated": `{"namespace":"de`, "garbage": "\x00\x01", "unknown field": `{"hook":"x","evil":1}`, "empty": "",
		"trailing garbage": `{"namespace":"default","hook":"x"}garbage`, "a second object": `{"hook":"x"} {"hook":"y"}`} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := agentsession.ReadBinding(ws); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err %v, want one naming %s", name, err, path)
		}
	}
	// A binding directory that is a link is never written through.
	outside := t.TempDir()
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if _, err := agentsession.WriteBinding(ws, agentsession.Binding{Namespace: "default", Hook: "x"}); err == nil {
		t.Error("wrote through a linked binding directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside the binding directory: %v", entries)
	}
	// Nor read through: a valid binding behind the link is refused.
	if err := os.WriteFile(filepath.Join(outside, "binding"), []byte(`{"namespace":"default","hook":"planted"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _, err := agentsession.ReadBinding(ws); b != nil || err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("read through a linked binding directory: %+v, %v", b, err)
	}
	_ = os.Remove(filepath.Join(outside, "binding"))
	// Unbind.
	_ = os.Remove(filepath.Dir(path))
	if _, err := agentsession.WriteBinding(ws, agentsession.Binding{Namespace: "default", Hook: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, removed, err := agentsession.RemoveBinding(ws); err != nil || !removed {
		t.Fatalf("RemoveBinding: %v, %v", removed, err)
	}
	if b, _, err := agentsession.ReadBinding(ws); b != nil || err != nil {
		t.Errorf("after unbind: %+v, %v", b, err)
	}
}

func TestWorktreeBindingIsPerCheckout(t *testing.T) {
	main := t.TempDir()
	git(t, main, "init", "-q")
	git(t, main, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, main, "worktree", "add", "-q", wt)
	p1, _ := agentsession.BindingPath(main)
	p2, err := agentsession.BindingPath(wt)
	if err != nil || p1 == p2 || !strings.Contains(p2, filepath.Join(".git", "worktrees")) {
		t.Errorf("main %s, worktree %s (%v): want distinct, the worktree's in .git/worktrees", p1, p2, err)
	}
}

func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t)
	key := e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)

	e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, Source: "startup", TranscriptPath: "transcripts/s1.jsonl"})
	s := e.hook(key).Status.AgentSession
	if s == nil || s.SessionID != "s1" || s.Source != v1.SessionStartup || s.TranscriptPath != "transcripts/s1.jsonl" || s.StartedAt == nil {
		t.Fatalf("after SessionStart: %+v", s)
	}

	before := e.hook(key).Status.LastHeartbeat
	res := e.handle(claudehook.Event{HookEventName: claudehook.PostToolUse, ToolName: "Read"})
	if len(res.Answer.Stdout) != 0 {
		t.Errorf("PostToolUse answered %s", res.Answer.Stdout)
	}
	h := e.hook(key)
	if h.Status.LastHeartbeat == nil || (before != nil && !h.Status.LastHeartbeat.After(before.Time)) {
		t.Errorf("PostToolUse did not heartbeat: %v -> %v", before, h.Status.LastHeartbeat)
	}
	if !h.Status.AgentSession.LastSeen.Equal(h.Status.LastHeartbeat) {
		t.Errorf("lastSeen %v, lastHeartbeat %v", h.Status.AgentSession.LastSeen, h.Status.LastHeartbeat)
	}
	e.handle(claudehook.Event{HookEventName: claudehook.UserPromptSubmit, Prompt: "go on"})

	// PreCompact checkpoints; the compaction counts only when it happened,
	// at SessionStart source compact (the client may give up after PreCompact).
	e.handle(claudehook.Event{HookEventName: claudehook.PreCompact, Trigger: "auto"})
	h = e.hook(key)
	if h.Status.AgentSession.Compactions != 0 || h.Status.LastCheckpoint == nil || h.Status.LastCheckpoint.Trigger != v1.TriggerPreCompact {
		t.Errorf("PreCompact: session %+v, last checkpoint %+v", h.Status.AgentSession, h.Status.LastCheckpoint)
	}

	ctx := additionalContext(t, e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, Source: "compact"}).Answer)
	if h = e.hook(key); h.Status.AgentSession.Compactions != 1 || h.Status.AgentSession.LastCompactedAt == nil {
		t.Errorf("SessionStart compact did not count the compaction: %+v", h.Status.AgentSession)
	}
	for _, want := range []string{"# Your context was just compacted", `Current step: "build" (1/2), attempt 1`, "Files touched: main.go", "Last checkpoint: task-1 (pre_compact", "# Recovery file: hook task"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("compact context lacks %q:\n%s", want, ctx)
		}
	}
	if strings.Index(ctx, "compacted") > strings.Index(ctx, "# Recovery file") {
		t.Error("the compaction anchor does not lead")
	}

	e.handle(claudehook.Event{HookEventName: claudehook.SessionEnd, Reason: "logout"})
	h = e.hook(key)
	s = h.Status.AgentSession
	if s.EndedAt == nil || s.EndReason != "logout" || s.EndedInStep != "build" || s.EndedInState != v1.HookStepRunning {
		t.Fatalf("after SessionEnd: %+v", s)
	}

	// Another session ending changes nothing.
	e.handle(claudehook.Event{HookEventName: claudehook.SessionEnd, SessionID: "other", Reason: "clear"})
	if got := e.hook(key).Status.AgentSession; got.SessionID != "s1" || got.EndReason != "logout" {
		t.Errorf("another session's end was recorded: %+v", got)
	}

	// A new session after that is a resumption and is told where the last one ended.
	ctx = additionalContext(t, e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, SessionID: "s2", Source: "startup"}).Answer)
	s = e.hook(key).Status.AgentSession
	if s.SessionID != "s2" || s.ResumedFrom != "s1" || s.EndedAt != nil {
		t.Errorf("new session: %+v", s)
	}
	if !strings.Contains(ctx, "resumed from `s1`") {
		t.Errorf("recovery file does not name the resumption:\n%s", ctx)
	}
}

// The next session's context says where the last one ended, whether it is
// a new session or the same one resumed (claude --continue sends source
// resume with the same session_id), and whether the last one ended with a
// SessionEnd or was killed without one (issue 25, item 2).
func TestSessionEndedMidStepReachesNextSession(t *testing.T) {
	cases := []struct {
		name      string
		ended     bool
		next      claudehook.Event
		wantFlag  bool
		wantCause string
	}{
		{"ended, resumed", true, claudehook.Event{SessionID: "s1", Source: "resume"}, true, "reason other"},
		{"ended, new session", true, claudehook.Event{SessionID: "s2", Source: "startup"}, true, "reason other"},
		{"killed, resumed", false, claudehook.Event{SessionID: "s1", Source: "resume"}, true, "killed or crashed"},
		{"killed, new session", false, claudehook.Event{SessionID: "s2", Source: "startup"}, true, "killed or crashed"},
		{"same session, compacted", false, claudehook.Event{SessionID: "s1", Source: "compact"}, false, ""},
		{"same session, cleared", false, claudehook.Event{SessionID: "s1", Source: "clear"}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
			e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, Source: "startup"})
			if tc.ended {
				e.handle(claudehook.Event{HookEventName: claudehook.SessionEnd, Reason: "other"})
			}
			tc.next.HookEventName = claudehook.SessionStart
			ctx := additionalContext(t, e.handle(tc.next).Answer)
			got := strings.Contains(ctx, `The last session ended during step "build"`)
			if got != tc.wantFlag || (tc.wantFlag && !strings.Contains(ctx, tc.wantCause)) {
				t.Errorf("flagged %v (want %v, cause %q):\n%s", got, tc.wantFlag, tc.wantCause, ctx)
			}
			// Said once, whichever part of the text says it.
			if n := strings.Count(ctx, "The last session ended during step"); n > 1 {
				t.Errorf("said %d times:\n%s", n, ctx)
			}
		})
	}
}

// Every context tether injects says in its first line that it supersedes
// the earlier ones, with the Hook's resourceVersion (issue 25, item 3).
func TestContextFirstLineSupersedes(t *testing.T) {
	for _, src := range []string{"startup", "resume", "clear", "compact"} {
		t.Run(src, func(t *testing.T) {
			e := newEnv(t)
			key := e.createHook("task", e.ws, hookfsm.Initialize)
			ctx := additionalContext(t, e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, Source: src}).Answer)
			first, _, _ := strings.Cut(ctx, "\n")
			rv := e.hook(key).ResourceVersion
			if !strings.Contains(first, "supersedes every earlier tether context") || !strings.Contains(first, "resourceVersion "+rv) {
				t.Errorf("first line %q: want the supersede mark with resourceVersion %s", first, rv)
			}
		})
	}
}

func TestSessionStartStates(t *testing.T) {
	cases := []struct {
		name   string
		events []hookfsm.Event
		pause  string
		want   []string
		reject []string
	}{
		{name: "terminal", events: []hookfsm.Event{hookfsm.Initialize, hookfsm.Abandon}, want: []string{"tether: hook task is abandoned"}, reject: []string{"# Recovery file"}},
		{name: "paused", events: []hookfsm.Event{hookfsm.Initialize}, pause: "waiting for the API review", want: []string{"is PAUSED: waiting for the API review", "# Recovery file"}},
		{name: "running", events: []hookfsm.Event{hookfsm.Initialize, hookfsm.Begin}, want: []string{"# Recovery file", "## What to do now"}, reject: []string{"PAUSED", "compacted"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			key := e.createHook("task", e.ws, c.events...)
			e.env[config.HookEnv] = "task"
			if c.pause != "" {
				h := e.hook(key)
				h.Spec.Suspend = true
				h.Annotations = map[string]string{v1.PauseReasonAnnotation: c.pause}
				if err := e.c.Update(context.Background(), h); err != nil {
					t.Fatal(err)
				}
			}
			ctx := additionalContext(t, e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, Source: "startup"}).Answer)
			for _, w := range c.want {
				if !strings.Contains(ctx, w) {
					t.Errorf("lacks %q:\n%s", w, ctx)
				}
			}
			for _, w := range c.reject {
				if strings.Contains(ctx, w) {
					t.Errorf("has %q:\n%s", w, ctx)
				}
			}
		})
	}
}

func TestStopLoop(t *testing.T) {
	type stop struct {
		active  bool
		advance bool   // make progress before this Stop
		session string // default s1
		block   bool
		end     claudehook.EndReason
	}
	cases := []struct {
		name   string
		events []hookfsm.Event
		stops  []stop
	}{
		{name: "terminal", events: []hookfsm.Event{hookfsm.Initialize, hookfsm.Abandon}, stops: []stop{{end: claudehook.EndTerminal}}},
		{name: "awaiting a person", events: []hookfsm.Event{hookfsm.Initialize, hookfsm.Begin, hookfsm.Await}, stops: []stop{{end: claudehook.EndAwaitingHuman}}},
		{name: "no progress ends the loop", events: []hookfsm.Event{hookfsm.Initialize}, stops: []stop{
			{block: true}, {active: true, end: claudehook.EndNoProgress},
		}},
		{name: "session cap", events: []hookfsm.Event{hookfsm.Initialize}, stops: []stop{
			{block: true}, {active: true, advance: true, block: true}, {active: true, advance: true, block: true},
			{active: true, advance: true, end: claudehook.EndConsecutiveCap},
			// a person spoke: the count starts again
			{active: false, advance: true, block: true},
		}},
		{name: "hook cap across sessions", events: []hookfsm.Event{hookfsm.Initialize}, stops: []stop{
			{block: true}, {active: true, advance: true, block: true}, {active: true, advance: true, block: true},
			{session: "s2", advance: true, block: true}, {session: "s2", active: true, advance: true, block: true},
			{session: "s3", advance: true, end: claudehook.EndHookCap},
		}},
		{name: "a new session after a crash gets a continuation", events: []hookfsm.Event{hookfsm.Initialize}, stops: []stop{
			{block: true}, {active: true, end: claudehook.EndNoProgress}, {session: "s2", block: true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			key := e.createHook("task", e.ws, c.events...)
			e.env[config.HookEnv] = "task"
			for i, s := range c.stops {
				if s.advance {
					// Progress: two transitions that come back to the same state.
					e.apply(key, hookfsm.Await)
					e.apply(key, hookfsm.Resume)
				}
				res := e.handle(claudehook.Event{HookEventName: claudehook.Stop, StopHookActive: s.active, SessionID: s.session})
				dec, reason := decision(t, res.Answer)
				h := e.hook(key)
				cond := meta.FindStatusCondition(h.Status.Conditions, v1.ConditionAgentLoop)
				if s.block {
					if dec != "block" || !strings.Contains(reason, "Next: ") || !strings.Contains(reason, "tether ") {
						t.Fatalf("stop %d: answer %q %q, want a block naming the next verb", i, dec, reason)
					}
					if cond == nil || cond.Status != metav1.ConditionTrue {
						t.Errorf("stop %d: condition %+v, want AgentLoop True", i, cond)
					}
					continue
				}
				if len(res.Answer.Stdout) != 0 {
					t.Fatalf("stop %d: answer %s, want none (end %s)", i, res.Answer.Stdout, s.end)
				}
				if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != string(s.end) {
					t.Errorf("stop %d: condition %+v, want AgentLoop False %s", i, cond, s.end)
				}
			}
			e.rec.mu.Lock()
			defer e.rec.mu.Unlock()
			ended := 0
			for _, c2 := range c.stops {
				if !c2.block {
					ended++
				}
			}
			if ended > 0 && len(e.rec.events) == 0 {
				t.Errorf("no Event says why the loop ended")
			}
			for _, ev := range e.rec.events {
				if !strings.Contains(ev, agentsession.ActionAgentLoop) {
					t.Errorf("event %q", ev)
				}
			}
		})
	}
}

func TestStopEventOncePerEnd(t *testing.T) {
	e := newEnv(t)
	e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Abandon)
	e.env[config.HookEnv] = "task"
	for range 3 {
		e.handle(claudehook.Event{HookEventName: claudehook.Stop})
	}
	if len(e.rec.events) != 1 || !strings.Contains(e.rec.events[0], "Normal HookTerminal AgentLoop") {
		t.Errorf("events %q, want one HookTerminal", e.rec.events)
	}
}

func TestGitActivityCheckpoints(t *testing.T) {
	e := newEnv(t)
	key := e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
	bash := func(command, stdout string) claudehook.Event {
		in, _ := json.Marshal(map[string]string{"command": command})
		out, _ := json.Marshal(map[string]string{"stdout": stdout})
		return claudehook.Event{HookEventName: claudehook.PostToolUse, ToolName: "Bash", ToolInput: in, ToolResponse: out}
	}
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.handle(bash("git add a.txt && git commit -m a", ""))
	e.handle(bash("gh pr create --fill", "https://example.com/o/r/pull/7\n"))
	e.handle(bash("echo git commit", ""))
	list := &v1.CheckpointList{}
	if err := e.c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	got := map[v1.CheckpointTrigger]string{}
	for _, cp := range list.Items {
		got[cp.Spec.Trigger] = cp.Spec.PullRequest
	}
	if len(list.Items) != 2 || got[v1.TriggerPRCreated] != "https://example.com/o/r/pull/7" {
		t.Errorf("checkpoints %v, want git_commit and pr_created with the URL", got)
	}
	if _, ok := got[v1.TriggerGitCommit]; !ok {
		t.Errorf("no git_commit checkpoint: %v", got)
	}
	_ = key
}

func TestMissingHookIsANote(t *testing.T) {
	e := newEnv(t)
	e.env[config.HookEnv] = "gone"
	for _, name := range []string{claudehook.SessionStart, claudehook.PostToolUse, claudehook.Stop, claudehook.PreCompact, claudehook.SessionEnd} {
		res, err := e.try(claudehook.Event{HookEventName: name})
		if err != nil || len(res.Answer.Stdout) != 0 || len(res.Notes) != 1 {
			t.Errorf("%s: %v, answer %s, notes %q", name, err, res.Answer.Stdout, res.Notes)
		}
	}
	e.env[config.HookEnv] = "Not_A_Name"
	if _, err := e.try(claudehook.Event{HookEventName: claudehook.Stop}); err == nil || !strings.Contains(err.Error(), config.HookEnv) {
		t.Errorf("an invalid $%s: %v", config.HookEnv, err)
	}
}

func TestStoreErrorsAreReturned(t *testing.T) {
	e := newEnv(t)
	e.createHook("task", e.ws)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := agentsession.Handle(ctx, claudehook.Event{HookEventName: claudehook.PostToolUse, CWD: e.ws, SessionID: "s"},
		agentsession.Options{Client: failing{e.c}, Namespace: "default"})
	if err == nil {
		t.Error("a failing store gave no error")
	}
}

// failing fails every read.
type failing struct{ client.Client }

func (failing) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("store unavailable")
}

func (failing) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("store unavailable")
}

func TestHeartbeatThrottle(t *testing.T) {
	e := newEnv(t)
	key := e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
	e.step = time.Second
	e.handle(claudehook.Event{HookEventName: claudehook.PostToolUse, ToolName: "Read"})
	rv := e.hook(key).ResourceVersion
	e.handle(claudehook.Event{HookEventName: claudehook.PostToolUse, ToolName: "Read"})
	if got := e.hook(key).ResourceVersion; got != rv {
		t.Errorf("a tool call 1s after the last one wrote the Hook (%s -> %s)", rv, got)
	}
	e.handle(claudehook.Event{HookEventName: claudehook.PostToolUse, ToolName: "Read", SessionID: "s2"})
	if got := e.hook(key).ResourceVersion; got == rv {
		t.Error("another session's tool call was not recorded")
	}
	rv = e.hook(key).ResourceVersion
	e.step = agentsession.MaxHeartbeatInterval
	e.handle(claudehook.Event{HookEventName: claudehook.PostToolUse, ToolName: "Read", SessionID: "s2"})
	if got := e.hook(key).ResourceVersion; got == rv {
		t.Errorf("a tool call %s after the last one did not heartbeat", agentsession.MaxHeartbeatInterval)
	}
}

func TestGitHooksInstalledTakeTheCommit(t *testing.T) {
	e := newEnv(t)
	e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
	// tether's git hooks (never run here: nothing is committed). They would
	// take the checkpoint, so the agent hook must not.
	if _, err := githooks.Install(context.Background(), githooks.Options{Dir: e.ws, Tether: filepath.Join(e.ws, "no-tether")}); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"command": "git commit -m x && git push"})
	e.handle(claudehook.Event{HookEventName: claudehook.PostToolUse, ToolName: "Bash", ToolInput: in})
	list := &v1.CheckpointList{}
	if err := e.c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d checkpoints taken although tether's git hooks are installed", len(list.Items))
	}
}

// TestForgedStatus edits a running Hook's status to completed, as a hand
// edit of the store would: SessionStart gives the recovery file, not
// "nothing is left to do", and its next action is to stop and ask a
// person; the Stop continues the agent once with that instruction, then
// lets it stop (AgentLoop HistoryMismatch, a Warning).
func TestForgedStatus(t *testing.T) {
	for _, forge := range []struct {
		name string
		edit func(st *v1.HookStatus)
	}{
		{"state completed", func(st *v1.HookStatus) { st.State = v1.HookCompleted }},
		{"a step skipped", func(st *v1.HookStatus) {
			st.CurrentStep.Index, st.CurrentStep.Name, st.Steps[0].Phase = 1, "test", v1.StepPassed
		}},
		{"an attempt forgiven", func(st *v1.HookStatus) { st.CurrentStep.Attempt, st.Steps[0].Attempts = 3, 3 }},
	} {
		t.Run(forge.name, func(t *testing.T) {
			e := newEnv(t)
			key := e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
			e.env[config.HookEnv] = "task"
			h := e.hook(key)
			forge.edit(&h.Status)
			if err := e.c.Status().Update(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			ctx := additionalContext(t, e.handle(claudehook.Event{HookEventName: claudehook.SessionStart, Source: "startup"}).Answer)
			for _, want := range []string{"## WARNING: the status disagrees with its history", "## What to do now\n\nstop and ask a person", "`tether repair task`"} {
				if !strings.Contains(ctx, want) {
					t.Errorf("SessionStart context lacks %q:\n%s", want, ctx)
				}
			}
			if strings.Contains(ctx, "nothing is left to do") || strings.Contains(ctx, "nothing: every step passed") {
				t.Errorf("SessionStart context says there is nothing to do:\n%s", ctx)
			}
			dec, reason := decision(t, e.handle(claudehook.Event{HookEventName: claudehook.Stop}).Answer)
			if dec != "block" || !strings.Contains(reason, "stop and ask a person") || !strings.Contains(reason, "`tether repair task`") {
				t.Fatalf("first Stop: %q %q, want a continuation telling the agent to stop and ask a person", dec, reason)
			}
			if res := e.handle(claudehook.Event{HookEventName: claudehook.Stop, StopHookActive: true}); len(res.Answer.Stdout) != 0 {
				t.Fatalf("second Stop: %s, want the agent let go", res.Answer.Stdout)
			}
			if c := meta.FindStatusCondition(e.hook(key).Status.Conditions, v1.ConditionAgentLoop); c == nil || c.Reason != string(claudehook.EndHistoryMismatch) {
				t.Errorf("condition %+v, want AgentLoop HistoryMismatch", c)
			}
			e.rec.mu.Lock()
			defer e.rec.mu.Unlock()
			if len(e.rec.events) != 1 || !strings.Contains(e.rec.events[0], "Warning HistoryMismatch AgentLoop") {
				t.Errorf("events %q, want one Warning HistoryMismatch", e.rec.events)
			}
		})
	}
}

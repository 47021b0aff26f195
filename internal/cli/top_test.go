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

package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/top"
)

// topEnv is a local store with Hooks and a Worker, and the live view of
// it with the actions tether top gives its keys, driven through Bubble
// Tea's test harness.
type topEnv struct {
	t  *testing.T
	b  *Backend
	tm *teatest.TestModel
}

func newTopEnv(t *testing.T) *topEnv {
	t.Helper()
	t.Setenv(config.HomeEnv, t.TempDir())
	t.Setenv(ActorEnv, "")
	g := NewGlobalOptions()
	g.Store = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b, err := g.Backend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	e := &topEnv{t: t, b: b}

	// alpha runs its first step; beta waits for a person.
	for name, events := range map[string][]hookfsm.Event{
		"alpha": {hookfsm.Initialize, hookfsm.Begin},
		"beta":  {hookfsm.Initialize, hookfsm.Begin, hookfsm.Await},
	} {
		h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.HookSpec{Goal: "goal of " + name, Steps: []v1.Step{{Name: "one"}, {Name: "two"}}}}
		if err := b.Client.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			in := hookfsm.Input{Event: ev, Message: "which database?"}
			if _, _, err := hookwrite.Transition(ctx, b.Client, client.ObjectKeyFromObject(h), hookwrite.Input(in), hookwrite.Options{Actor: "agent"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent-1", Namespace: "default"}, Spec: v1.WorkerSpec{Command: []string{"agent"}}}
	if err := b.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	w.Status.Phase = v1.WorkerCrashLoop
	if err := b.Client.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}

	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	src, err := top.NewSource(b.Client, "default")
	if err != nil {
		t.Fatal(err)
	}
	src.Start(ctx)
	if err := src.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	m := top.New(ctx, src, top.Options{Namespace: "default", Config: cfg,
		Actions: &topActions{b: b, cfg: cfg, actor: actorOr(TopActor)}})
	e.tm = teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 50))
	t.Cleanup(func() { _ = e.tm.Quit() })
	e.waitOutput("beta")
	return e
}

// key presses k, a key name such as "j" or "enter".
func (e *topEnv) key(k string) {
	switch k {
	case "enter":
		e.tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	case "esc":
		e.tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	default:
		e.tm.Type(k)
	}
}

// waitOutput waits until a full repaint of the screen shows want. The
// renderer writes only the cells that changed, so the test asks for a
// whole repaint (tea.ClearScreen) until one holds want.
func (e *topEnv) waitOutput(want string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.tm.Send(tea.ClearScreen())
		time.Sleep(20 * time.Millisecond)
		screen, err := io.ReadAll(e.tm.Output())
		if err != nil {
			e.t.Fatal(err)
		}
		if bytes.Contains(screen, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the screen never showed %q; last output:\n%q", want, screen)
		}
	}
}

// waitHook waits until the stored Hook satisfies cond.
func (e *topEnv) waitHook(name, what string, cond func(*v1.Hook) bool) *v1.Hook {
	e.t.Helper()
	h := &v1.Hook{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := e.b.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			e.t.Fatal(err)
		}
		if cond(h) {
			return h
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("hook %s: timed out waiting for %s; status %+v", name, what, h.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTopKeysActThroughTheVerbs drives the live view with key presses:
// select a Hook, resume it, pause and unpause it, open describe and the
// recovery file, restart a Worker, and checks each change in the store,
// made by the verbs' writers with tether top as the actor.
func TestTopKeysActThroughTheVerbs(t *testing.T) {
	e := newTopEnv(t)
	ctx := context.Background()

	// The first row, alpha, is selected: resume is refused by the state
	// machine and nothing changes.
	e.key("u")
	e.waitOutput(`hook "alpha": state is step_running`)
	if h := e.waitHook("alpha", "step_running", func(h *v1.Hook) bool { return true }); h.Status.State != v1.HookStepRunning {
		t.Fatalf("resume of a running hook changed it to %s", h.Status.State)
	}

	e.key("j")
	e.key("u")
	h := e.waitHook("beta", "resume", func(h *v1.Hook) bool { return h.Status.State == v1.HookStepRunning })
	last := h.Status.History[len(h.Status.History)-1]
	if last.Event != string(hookfsm.Resume) || last.Actor != TopActor {
		t.Fatalf("last history entry %+v; want resume by %q", last, TopActor)
	}
	e.waitOutput("next: work on step")

	e.key("p")
	e.waitHook("beta", "pause", func(h *v1.Hook) bool { return h.Spec.Suspend })
	e.waitOutput("(paused)")
	e.key("p")
	e.waitHook("beta", "unpause", func(h *v1.Hook) bool { return !h.Spec.Suspend })
	e.waitOutput("beta unpaused")

	e.key("enter")
	e.waitOutput("goal of beta")
	e.key("esc")
	e.key("r")
	e.waitOutput("# Recovery file: hook beta")
	e.key("esc")

	e.key("j")
	e.key("R")
	w := &v1.Worker{}
	deadline := time.Now().Add(10 * time.Second)
	for w.Status.Phase != v1.WorkerRestarting {
		if err := e.b.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "agent-1"}, w); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker restart: phase %s, want Restarting", w.Status.Phase)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if w.Status.WindowStart == nil {
		t.Fatal("worker restart did not reset the crash window")
	}

	e.key("q")
	e.tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	// The Events say who acted: tether top, through the CLI's recorder,
	// which Close flushes.
	e.b.flushEvents()
	events := &corev1.EventList{}
	if err := e.b.Client.List(ctx, events, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var byTop []string
	for _, ev := range events.Items {
		if ev.InvolvedObject.Name == "beta" && strings.Contains(ev.Message, TopActor) {
			byTop = append(byTop, ev.Reason)
		}
	}
	for _, want := range []string{"Resumed", "Paused", "Unpaused"} {
		if !strings.Contains(strings.Join(byTop, " "), want) {
			t.Errorf("no %s Event naming %q on beta; Events by it: %v", want, TopActor, byTop)
		}
	}
}

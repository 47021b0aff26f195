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

package top_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/top"
)

// model is a view of a file store seeded with fixtures, on the fixed clock.
func model(t *testing.T, c client.WithWatch, namespace string, fixtures []fixture) *top.Model {
	t.Helper()
	seed(t, c, fixtures)
	src, err := top.NewSource(c, namespace)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	src.Start(ctx)
	if err := src.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	return top.New(ctx, src, top.Options{Namespace: namespace, Now: func() time.Time { return now }})
}

func press(m tea.Model, keys string) tea.Model {
	for _, k := range keys {
		m, _ = m.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	return m
}

// TestViewFrames renders the interactive frames: colours (amber near
// staleAfter, red when stale, dead Workers and alerts), the selected row
// in reverse video, the filters and a narrow terminal, as golden files
// whose escape sequences the harness spells out.
func TestViewFrames(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fixtures      []fixture
		keys          string
		width, height int
	}{
		{"busy", busy(), "", 120, 40},
		{"third-row-selected", busy(), "jj", 120, 40},
		{"running-only", busy(), "sss", 120, 40},
		{"crash", crash(), "j", 120, 40},
		{"narrow", crash(), "", 60, 30},
		{"short", busy(), "jjjjj", 120, 22},
		{"full-help", busy(), "?", 120, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m tea.Model = model(t, testsupport.Store(t, "").Client(), "default", tc.fixtures)
			m, _ = m.Update(tea.WindowSizeMsg{Width: tc.width, Height: tc.height})
			m = press(m, tc.keys)
			view := m.View()
			if !view.AltScreen {
				t.Error("the view does not take the whole screen")
			}
			golden.RequireEqual(t, view.Content)
		})
	}
}

// TestKeysRefusedOnTheWrongRow: a key for a Hook on a Worker row, or any
// action in a view without actions, says so and changes nothing.
func TestKeysRefusedOnTheWrongRow(t *testing.T) {
	for _, tc := range []struct {
		name, keys, want string
	}{
		{"restart on a Hook", "R", "worker restart: select a Worker"},
		{"resume on a Worker", "jjjjjju", "resume: select a Hook"},
		{"recover on a Worker", "jjjjjjr", "recover: select a Hook"},
		{"describe without actions", "d", "describe: this view takes no action"},
		{"namespace filter when watching one", "n", "watching namespace default only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m tea.Model = model(t, testsupport.Store(t, "").Client(), "default", busy())
			m = press(m, tc.keys)
			if got := top.Plain(m.View().Content); !strings.Contains(got, tc.want) {
				t.Errorf("the view does not say %q:\n%s", tc.want, got)
			}
		})
	}
}

// TestNamespaceFilter cycles through the namespaces of a view of every
// namespace, then back to all of them.
func TestNamespaceFilter(t *testing.T) {
	c := testsupport.Store(t, "").Client()
	other := hook("other-task", 1, nil)
	other.obj.SetNamespace("team-a")
	var m tea.Model = model(t, c, "", append(busy(), other))
	for _, want := range []struct {
		keys     string
		shows    string
		hides    string
		selected string
	}{
		{"", "team-a", "", "add-tests"},
		{"n", "showing default", "other-task", "add-tests"},
		{"n", "other-task", "fix-login", "other-task"},
		{"n", "fix-login", "", "other-task"},
	} {
		m = press(m, want.keys)
		got := top.Plain(m.View().Content)
		if !strings.Contains(got, want.shows) || want.hides != "" && strings.Contains(got, want.hides) {
			t.Fatalf("after %q: want %q shown and %q hidden:\n%s", want.keys, want.shows, want.hides, got)
		}
		if sel, _ := m.(*top.Model).Selected(); sel.Key.Name != want.selected {
			t.Fatalf("after %q: selected %s, want %s", want.keys, sel.Key.Name, want.selected)
		}
	}
}

// waitScreen waits until a full repaint of tm's screen shows want. The
// renderer writes only the cells that changed, so the test asks for a
// whole repaint (tea.ClearScreen) until one holds want.
func waitScreen(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tm.Send(tea.ClearScreen())
		time.Sleep(20 * time.Millisecond)
		screen, err := io.ReadAll(tm.Output())
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(screen, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q; last output:\n%q", want, screen)
		}
	}
}

// TestLiveUpdates drives the program with Bubble Tea's test harness: a
// Hook written after the view started appears, deleted ones go, and the
// selection stays on the object it was on.
func TestLiveUpdates(t *testing.T) {
	c := testsupport.Store(t, "").Client()
	tm := teatest.NewTestModel(t, model(t, c, "default", busy()), teatest.WithInitialTermSize(120, 40))
	waitScreen(t, tm, "hooks 6")
	tm.Type("j") // fix-login
	seed(t, c, []fixture{hook("a-new-task", 1, nil)})
	waitScreen(t, tm, "hooks 7")
	for _, name := range []string{"release", "add-tests"} {
		if err := c.Delete(context.Background(), &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	waitScreen(t, tm, "hooks 5")
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*top.Model)
	if sel, _ := final.Selected(); sel.Kind != top.KindHook || sel.Key.Name != "fix-login" {
		t.Fatalf("selected %+v after the lists changed; want hook fix-login", sel)
	}
	got := top.Plain(final.View().Content)
	if strings.Contains(got, "release") || strings.Contains(got, "add-tests") || !strings.Contains(got, "a-new-task") {
		t.Fatalf("the last frame does not show the changes:\n%s", got)
	}
}

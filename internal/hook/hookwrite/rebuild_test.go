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

package hookwrite_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestRebuildStatus forges a running Hook's status to completed in the
// store: transitions are refused (fail and abandon too), RebuildStatus
// puts the status back as the history says with one Event naming what it
// was, and a second rebuild changes nothing. A damaged history is refused
// and left as it is.
func TestRebuildStatus(t *testing.T) {
	ctx := context.Background()
	cl := testsupport.Store(t, "").Client()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	opts := hookwrite.Options{Actor: "tester", Now: func() time.Time { return now }}
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"},
		Spec: v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}, {Name: "two"}}}}
	if err := cl.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(h)
	for _, ev := range []hookfsm.Event{hookfsm.Initialize, hookfsm.Begin} {
		if _, _, err := hookwrite.Transition(ctx, cl, key, hookwrite.Input(hookfsm.Input{Event: ev}), opts); err != nil {
			t.Fatal(err)
		}
	}
	// A forged status is written around hookwrite, which refuses a state
	// changed outside a transition.
	forge := func(edit func(st *v1.HookStatus)) {
		t.Helper()
		h := &v1.Hook{}
		if err := cl.Get(ctx, key, h); err != nil {
			t.Fatal(err)
		}
		edit(&h.Status)
		if err := cl.Status().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	forge(func(st *v1.HookStatus) { st.State, st.TerminalAt = v1.HookCompleted, &metav1.Time{Time: now} })

	for _, in := range []hookfsm.Input{{Event: hookfsm.Fail, Message: "x"}, {Event: hookfsm.Abandon}, {Event: hookfsm.Validate}} {
		_, _, err := hookwrite.Transition(ctx, cl, key, hookwrite.Input(in), opts)
		var se *hookfsm.StatusError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), `runs "tether repair task"`) {
			t.Errorf("%s on a forged status: %v, want a StatusError naming tether repair", in.Event, err)
		}
	}

	rec := events.NewFakeRecorder(4)
	opts.Recorder = rec
	got, ds, err := hookwrite.RebuildStatus(ctx, cl, key, opts)
	if err != nil {
		t.Fatal(err)
	}
	if fields := hookfsm.Fields(ds); len(fields) != 1 || fields[0] != "status.state" {
		t.Errorf("corrected %q, want status.state", fields)
	}
	if got.Status.State != v1.HookStepRunning || got.Status.TerminalAt != nil || len(got.Status.History) != 2 {
		t.Errorf("rebuilt to %s, terminalAt %v, %d history entries; want step_running, none, the 2 there were", got.Status.State, got.Status.TerminalAt, len(got.Status.History))
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionHistoryConsistent); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "tester") {
		t.Errorf("HistoryConsistent condition %+v", c)
	}
	select {
	case e := <-rec.Events:
		want := `Normal StatusRebuilt status rebuilt from the history by tester: status.state was completed, now step_running; now step "one" (1/2) running, attempt 1`
		if e != want {
			t.Errorf("event\n%s\nwant\n%s", e, want)
		}
	default:
		t.Error("no Event")
	}
	if _, _, err := hookwrite.Transition(ctx, cl, key, hookwrite.Input(hookfsm.Input{Event: hookfsm.Validate}), opts); err != nil {
		t.Errorf("validate after the rebuild: %v", err)
	}
	<-rec.Events

	before := &v1.Hook{}
	if err := cl.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}
	again, ds, err := hookwrite.RebuildStatus(ctx, cl, key, opts)
	if err != nil || len(ds) != 0 || again.ResourceVersion != before.ResourceVersion || len(rec.Events) != 0 {
		t.Errorf("a second rebuild: %v, %d disagreements, resourceVersion %s → %s, %d Events; want nothing changed", err, len(ds), before.ResourceVersion, again.ResourceVersion, len(rec.Events))
	}

	forge(func(st *v1.HookStatus) { st.State, st.History[1].To = v1.HookCompleted, v1.HookFailed })
	if err := cl.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}
	_, _, err = hookwrite.RebuildStatus(ctx, cl, key, opts)
	after := &v1.Hook{}
	if getErr := cl.Get(ctx, key, after); getErr != nil {
		t.Fatal(getErr)
	}
	if !errors.Is(err, hookfsm.ErrHistoryDamaged) || after.ResourceVersion != before.ResourceVersion || len(rec.Events) != 0 {
		t.Errorf("rebuild of a damaged history: %v, resourceVersion %s → %s, %d Events; want refused, nothing written", err, before.ResourceVersion, after.ResourceVersion, len(rec.Events))
	}
}

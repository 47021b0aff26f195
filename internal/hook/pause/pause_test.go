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

package pause_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/pause"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

func TestPauseAndUnpause(t *testing.T) {
	type step struct {
		op          string // pause or unpause
		reason      string
		wantChanged bool
		wantSuspend bool
		wantReason  string
		wantEvent   string // prefix of the recorded Event; empty: none
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"pause with a reason, then unpause", []step{
			{op: "pause", reason: "reviewing\n the  plan", wantChanged: true, wantSuspend: true, wantReason: "reviewing the plan", wantEvent: "Normal Paused paused by tester: reviewing the plan"},
			{op: "unpause", wantChanged: true, wantEvent: "Normal Unpaused unpaused by tester"},
		}},
		{"pausing twice is unchanged", []step{
			{op: "pause", reason: "lunch", wantChanged: true, wantSuspend: true, wantReason: "lunch", wantEvent: "Normal Paused"},
			{op: "pause", reason: "lunch", wantSuspend: true, wantReason: "lunch"},
		}},
		{"a new reason replaces the old one", []step{
			{op: "pause", reason: "lunch", wantChanged: true, wantSuspend: true, wantReason: "lunch", wantEvent: "Normal Paused"},
			{op: "pause", reason: "meeting", wantChanged: true, wantSuspend: true, wantReason: "meeting", wantEvent: "Normal Paused paused by tester: meeting"},
			{op: "pause", wantChanged: true, wantSuspend: true, wantEvent: "Normal Paused paused by tester"},
		}},
		{"unpausing a running hook is unchanged", []step{
			{op: "unpause"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cl := testsupport.Store(t, "").Client()
			h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"},
				Spec: v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}}}
			if err := cl.Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(h)
			for i, s := range c.steps {
				rec := events.NewFakeRecorder(4)
				opts := pause.Options{Actor: "tester", Reason: s.reason, Recorder: rec}
				do := pause.Pause
				if s.op == "unpause" {
					do = pause.Unpause
				}
				res, err := do(ctx, cl, key, opts)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if res.Changed != s.wantChanged {
					t.Errorf("step %d: changed %t, want %t", i, res.Changed, s.wantChanged)
				}
				got := &v1.Hook{}
				if err := cl.Get(ctx, key, got); err != nil {
					t.Fatal(err)
				}
				if got.Spec.Suspend != s.wantSuspend || got.Annotations[v1.PauseReasonAnnotation] != s.wantReason || pause.Reason(got) != s.wantReason {
					t.Errorf("step %d: suspend %t, reason %q; want %t, %q", i, got.Spec.Suspend, got.Annotations[v1.PauseReasonAnnotation], s.wantSuspend, s.wantReason)
				}
				if _, ok := got.Annotations[v1.PauseReasonAnnotation]; ok && s.wantReason == "" {
					t.Errorf("step %d: annotation left behind", i)
				}
				var event string
				select {
				case event = <-rec.Events:
				default:
				}
				if (s.wantEvent == "") != (event == "") || !strings.HasPrefix(event, s.wantEvent) {
					t.Errorf("step %d: event %q, want prefix %q", i, event, s.wantEvent)
				}
			}
		})
	}
}

func TestPauseRefusesTerminalAndMissingHooks(t *testing.T) {
	ctx := context.Background()
	cl := testsupport.Store(t, "").Client()
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "done", Namespace: "default"},
		Spec: v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}}}
	if err := cl.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	h.Status.State = v1.HookCompleted
	if err := cl.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	for _, do := range []func(context.Context, client.Client, client.ObjectKey, pause.Options) (pause.Result, error){pause.Pause, pause.Unpause} {
		_, err := do(ctx, cl, client.ObjectKeyFromObject(h), pause.Options{})
		var terminal *pause.TerminalError
		if !errors.As(err, &terminal) || !strings.Contains(err.Error(), "hook done is completed") {
			t.Errorf("terminal hook: err %v, want a TerminalError naming it", err)
		}
	}
	if _, err := pause.Pause(ctx, cl, client.ObjectKey{Namespace: "default", Name: "nope"}, pause.Options{}); err == nil {
		t.Error("pausing a missing hook succeeded")
	}
}

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

package stepdone_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/stepdone"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// newStore opens a file store in a temporary directory.
func newStore(t *testing.T) client.Client {
	t.Helper()
	return testsupport.Store(t, "").Client()
}

// TestRun drives `step done` in-process against a file store: a running
// step's validations pass, fail, or are interrupted by a signal.
func TestRun(t *testing.T) {
	tests := []struct {
		name string
		// commands are the step's validate commands.
		commands [][]string
		// signal, when set, is sent once the validation runs.
		signal     bool
		wantErr    string
		wantState  v1.HookState
		wantPhase  v1.StepPhase
		wantSigned int
		wantEvents []string
	}{
		{name: "pass", commands: [][]string{{"true"}, {"sh", "-c", "echo checked"}},
			wantState: v1.HookCompleted, wantPhase: v1.StepPassed, wantSigned: 2,
			wantEvents: []string{"Normal ValidationStarted validate by agent-7", "Normal Completed pass by agent-7"}},
		{name: "fail", commands: [][]string{{"true"}, {"false"}, {"true"}},
			wantErr: `failed validation: "false" exited 1`, wantState: v1.HookStepRunning, wantPhase: v1.StepRunning, wantSigned: 2,
			wantEvents: []string{"Normal ValidationStarted validate by agent-7", "Warning ValidationFailed fail_validation by agent-7"}},
		{name: "interrupted", commands: [][]string{{"sleep", "30"}}, signal: true,
			wantErr: "validation interrupted", wantState: v1.HookRecovering, wantPhase: v1.StepValidating,
			wantEvents: []string{"Normal ValidationStarted validate by agent-7", "Warning ValidationInterrupted interrupt by agent-7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newStore(t)
			hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"}}
			hook.Spec.Goal = "in-process step done"
			hook.Spec.Workspace = t.TempDir()
			step := v1.Step{Name: "build"}
			for _, cmd := range tt.commands {
				step.Validate = append(step.Validate, v1.ValidationCommand{Command: cmd})
			}
			hook.Spec.Steps = []v1.Step{step}
			if err := c.Create(ctx, hook); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(hook)
			rec := events.NewFakeRecorder(10)
			write := hookwrite.Options{Actor: "agent-7", Recorder: rec}
			if _, _, err := hookwrite.Transition(ctx, c, key, hookwrite.Input(hookfsm.Input{Event: hookfsm.Begin}), write); err != nil {
				t.Fatal(err)
			}
			// No reconciler initialized the Hook: the begin records both.
			for _, want := range []string{"Normal Initialized initialize by agent-7", "Normal StepBegun begin by agent-7"} {
				if e := <-rec.Events; !strings.HasPrefix(e, want) {
					t.Fatalf("event %q, want one starting %q", e, want)
				}
			}

			keys := &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "keys")}
			out := &syncBuffer{}
			opts := stepdone.Options{Client: c, Key: key, Write: write, Keys: keys, Out: out, Signals: []os.Signal{syscall.SIGUSR1}}
			if tt.signal {
				// Validation output goes to out; the signal follows the first "+ " line.
				go func() {
					deadline := time.Now().Add(10 * time.Second)
					for time.Now().Before(deadline) && !strings.Contains(out.String(), "+ sleep") {
						time.Sleep(5 * time.Millisecond)
					}
					_ = syscall.Kill(os.Getpid(), syscall.SIGUSR1)
				}()
			}
			res, err := stepdone.Run(ctx, opts)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Run error = %v, want %q", err, tt.wantErr)
			}
			if res == nil {
				t.Fatal("no outcome recorded")
			}
			got := &v1.Hook{}
			if err := c.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.State != tt.wantState || got.Status.Steps[0].Phase != tt.wantPhase || res.Hook.ResourceVersion != got.ResourceVersion {
				t.Fatalf("state %s, phase %s (outcome at rv %s, stored %s); want %s, %s",
					got.Status.State, got.Status.Steps[0].Phase, res.Hook.ResourceVersion, got.ResourceVersion, tt.wantState, tt.wantPhase)
			}
			if res.Passed != (tt.wantErr == "") {
				t.Errorf("Passed = %v", res.Passed)
			}
			rs := got.Status.Steps[0].Receipts
			if len(rs) != tt.wantSigned {
				t.Fatalf("%d receipts, want %d", len(rs), tt.wantSigned)
			}
			pub, err := keys.PublicKey(ctx, got)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rs {
				if err := receipts.Verify(got, "build", &rs[i], pub); err != nil {
					t.Errorf("receipt %d: %v", i, err)
				}
			}
			if tt.signal && got.Status.Recovery.CrashType != v1.CrashValidationInterrupted {
				t.Errorf("crash type %s, want validation_interrupted", got.Status.Recovery.CrashType)
			}
			for _, want := range tt.wantEvents {
				select {
				case e := <-rec.Events:
					if !strings.HasPrefix(e, want) {
						t.Errorf("event %q, want one starting %q", e, want)
					}
				default:
					t.Errorf("no event, want %q", want)
				}
			}
		})
	}
}

// TestRunRefusesBeforeWriting checks that a Hook not running its step is
// refused without a key being created or anything written.
func TestRunRefusesBeforeWriting(t *testing.T) {
	ctx := context.Background()
	c := newStore(t)
	hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"}}
	hook.Spec.Goal = "not begun"
	hook.Spec.Steps = []v1.Step{{Name: "build"}}
	if err := c.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	keys := &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "keys")}
	res, err := stepdone.Run(ctx, stepdone.Options{Client: c, Key: client.ObjectKeyFromObject(hook), Keys: keys})
	if res != nil || err == nil || !strings.Contains(err.Error(), `cannot "step done"`) {
		t.Fatalf("Run = %v, %v; want a transition error", res, err)
	}
	if _, err := os.Stat(keys.Path()); !os.IsNotExist(err) {
		t.Fatalf("a key was created: %v", err)
	}
	got := &v1.Hook{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(hook), got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != hook.ResourceVersion {
		t.Fatalf("resourceVersion %s, want %s: something was written", got.ResourceVersion, hook.ResourceVersion)
	}
}

// syncBuffer is testsupport.SyncBuffer.
type syncBuffer = testsupport.SyncBuffer

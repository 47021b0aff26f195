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
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/stepdone"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// TestRunCheckpoints checks the checkpoints Run takes with
// Options.Checkpoints: validation_pass (with validations) and
// step_complete after a pass, none after a failure, and a warning, not an
// error, when the workspace cannot be snapshotted.
func TestRunCheckpoints(t *testing.T) {
	tests := []struct {
		name     string
		commands [][]string
		// noGit leaves the workspace outside git: no snapshot can be taken.
		noGit        bool
		wantTriggers []v1.CheckpointTrigger
		wantOut      []string
		wantErr      bool
	}{
		{name: "pass with validations", commands: [][]string{{"true"}, {"true"}},
			wantTriggers: []v1.CheckpointTrigger{v1.TriggerValidationPass, v1.TriggerStepComplete},
			wantOut:      []string{"checkpoint.agents.tether.dev/task-1 created (validation_pass, snapshot ", "checkpoint.agents.tether.dev/task-2 created (step_complete, snapshot "}},
		{name: "pass without validations",
			wantTriggers: []v1.CheckpointTrigger{v1.TriggerStepComplete},
			wantOut:      []string{"checkpoint.agents.tether.dev/task-1 created (step_complete, snapshot "}},
		{name: "failed validation", commands: [][]string{{"false"}}, wantErr: true},
		{name: "no git", commands: [][]string{{"true"}}, noGit: true,
			wantOut: []string{"warning: validation_pass checkpoint: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newStore(t)
			ws := t.TempDir()
			if !tt.noGit {
				gitInit(t, ws)
			}
			hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default"}}
			hook.Spec.Goal = "checkpoints after a pass"
			hook.Spec.Workspace = ws
			step := v1.Step{Name: "build"}
			for _, cmd := range tt.commands {
				step.Validate = append(step.Validate, v1.ValidationCommand{Command: cmd})
			}
			hook.Spec.Steps = []v1.Step{step, {Name: "ship"}}
			if err := c.Create(ctx, hook); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(hook)
			write := hookwrite.Options{Actor: "agent-7", Recorder: events.NewFakeRecorder(20)}
			if _, _, err := hookwrite.Transition(ctx, c, key, hookwrite.Input(hookfsm.Input{Event: hookfsm.Begin}), write); err != nil {
				t.Fatal(err)
			}
			out := &syncBuffer{}
			res, err := stepdone.Run(ctx, stepdone.Options{Client: c, Key: key, Write: write, Out: out, Checkpoints: true,
				Keys: &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "keys")}})
			if (err != nil) != tt.wantErr || res == nil {
				t.Fatalf("Run = %v, %v; want an error: %v", res, err, tt.wantErr)
			}
			var got []v1.CheckpointTrigger
			for _, cp := range res.Checkpoints {
				got = append(got, cp.Spec.Trigger)
			}
			if !slices.Equal(got, tt.wantTriggers) {
				t.Errorf("checkpoints %v, want %v", got, tt.wantTriggers)
			}
			list := &v1.CheckpointList{}
			if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != len(tt.wantTriggers) {
				t.Errorf("%d Checkpoints stored, want %d", len(list.Items), len(tt.wantTriggers))
			}
			for _, cp := range list.Items {
				if cp.Spec.Step != "build" {
					t.Errorf("checkpoint %s of step %q, want the step that passed, build", cp.Name, cp.Spec.Step)
				}
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestPassedTriggers(t *testing.T) {
	for n, want := range map[int][]v1.CheckpointTrigger{
		0: {v1.TriggerStepComplete},
		1: {v1.TriggerValidationPass, v1.TriggerStepComplete},
		3: {v1.TriggerValidationPass, v1.TriggerStepComplete},
	} {
		if got := stepdone.PassedTriggers(n); !slices.Equal(got, want) {
			t.Errorf("PassedTriggers(%d) = %v, want %v", n, got, want)
		}
	}
}

func gitInit(t testing.TB, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

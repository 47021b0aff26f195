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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// TestTablesOfFieldsPrintAsWholeObjects lists enough Hooks and Checkpoints
// that the store takes them from the journal, and checks that every table
// `tether get` prints from the fields its columns need is byte for byte
// the table of the whole objects, and that the other outputs, which read
// whole objects, are unchanged.
func TestTablesOfFieldsPrintAsWholeObjects(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	created := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	s := testsupport.Store(t, dir, func(o *filestore.Options) { o.Now = func() time.Time { return created } })
	c := s.Client()
	for i := range 300 {
		ns := "default"
		if i%10 == 3 {
			ns = "team"
		}
		h := &agentsv1alpha1.Hook{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("hook-%03d", i)},
			Spec: agentsv1alpha1.HookSpec{Goal: fmt.Sprintf("goal \"%d\" \u00e9\n", i), Steps: []agentsv1alpha1.Step{{Name: "one"}, {Name: "two"}},
				Assignee: map[bool]string{true: "agent-1"}[i%3 == 0], Suspend: i%7 == 0},
		}
		if i%4 == 0 {
			h.Labels = map[string]string{"team": fmt.Sprintf("t%d", i%3), "tier": "x"}
		}
		must(t, c.Create(ctx, h))
		if i%5 == 0 {
			continue // never initialized: no status
		}
		h.Status = agentsv1alpha1.HookStatus{
			State:         agentsv1alpha1.HookStepRunning,
			CurrentStep:   &agentsv1alpha1.CurrentStep{Index: 1, Name: "two", Attempt: int32(1 + i%4)},
			LastHeartbeat: &metav1.MicroTime{Time: created.Add(time.Duration(i) * time.Minute)},
		}
		if i%6 == 0 {
			h.Status.Conditions = []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Progressing", Message: "step two", LastTransitionTime: metav1.NewTime(created)},
				{Type: "HistoryConsistent", Status: metav1.ConditionFalse, Reason: "HistoryMismatch", LastTransitionTime: metav1.NewTime(created)},
			}
		}
		must(t, c.Status().Update(ctx, h))
	}
	for i := range 260 {
		cp := &agentsv1alpha1.Checkpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cp-%03d", i)},
			Spec:       agentsv1alpha1.CheckpointSpec{HookName: "hook-001", Trigger: agentsv1alpha1.TriggerManual, Seq: int64(i), Description: "d"},
		}
		must(t, c.Create(ctx, cp))
		if i%3 == 0 {
			cp.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionStatus([]string{"True", "False", "Unknown"}[i%9/3]), Reason: "Captured", LastTransitionTime: metav1.NewTime(created)}}
			must(t, c.Status().Update(ctx, cp))
		}
	}
	must(t, s.Close())
	// A hand edit, which a list reads from its YAML and adopts.
	edited := filepath.Join(dir, "hooks", "default", "hook-010.yaml")
	data, err := os.ReadFile(edited)
	must(t, err)
	must(t, os.WriteFile(edited, bytes.Replace(data, []byte("goal: "), []byte("goal: edited "), 1), 0o600))

	get := func(args ...string) string {
		t.Helper()
		root := NewRootCommand()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(append([]string{"--store", dir, "get"}, args...))
		if err := root.ExecuteContext(ctx); err != nil {
			t.Fatalf("get %v: %v\n%s", args, err, errOut.String())
		}
		return out.String() + "\nstderr:\n" + errOut.String()
	}
	for _, args := range [][]string{
		{"hooks"},
		{"hooks", "-o", "wide"},
		{"hooks", "-A"},
		{"hooks", "-A", "-o", "wide", "--show-labels"},
		{"hooks", "-L", "team,tier", "--show-kind"},
		{"hooks", "-l", "team=t1"},
		{"hooks", "-l", "team!=t1", "--no-headers"},
		{"hooks", "--field-selector", "metadata.name=hook-013", "-n", "team"},
		{"hooks", "--sort-by", ".status.currentStep.attempt"},
		{"hooks", "-o", "name"},
		{"hooks", "-o", "json"},
		{"hooks", "-o", "yaml", "-l", "tier=x"},
		{"hooks", "-o", "jsonpath={.items[*].spec.goal}"},
		{"hooks,checkpoints", "-o", "wide"},
		{"checkpoints"},
		{"all", "-A"},
		{"hooks", "-n", "nowhere"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			fromFields := get(args...)
			decodeTableFieldsOnly = false
			defer func() { decodeTableFieldsOnly = true }()
			whole := get(args...)
			if fromFields != whole {
				t.Errorf("from the fields:\n%s\nfrom whole objects:\n%s", fromFields, whole)
			}
			if len(fromFields) < 40 && args[len(args)-1] != "nowhere" {
				t.Errorf("printed almost nothing: %q", fromFields)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestColumnFields(t *testing.T) {
	tests := []struct {
		jsonPath string
		want     []string
	}{
		{".status.state", []string{"status.state"}},
		{".status.currentStep.name", []string{"status.currentStep.name"}},
		{`.status.conditions[?(@.reason=="HistoryMismatch")].reason`, []string{"status.conditions[].reason", "status.conditions[].reason"}},
		{`.status.conditions[?(@.type=="Ready")].status`, []string{"status.conditions[].type", "status.conditions[].status"}},
		{`.status.conditions[?(@.type=="Ready")].status.x`, []string{"status.conditions"}},
		{".spec.items[0].name", []string{"spec.items"}},
		{".spec.items[*]", []string{"spec.items"}},
		{"{.spec.goal}", nil},
		{".", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := columnFields(tt.jsonPath); !slices.Equal(got, tt.want) {
			t.Errorf("columnFields(%q) = %q, want %q", tt.jsonPath, got, tt.want)
		}
	}
}

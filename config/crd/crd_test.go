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

package crd_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/config/crd"
)

func load(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range crds {
		byKind[c.Spec.Names.Kind] = c
	}
	for _, kind := range []string{"Hook", "Worker", "Checkpoint"} {
		if byKind[kind] == nil {
			t.Fatalf("no CRD for %s", kind)
		}
	}
	return byKind
}

// TestCRDsAreValid runs the API server's own CRD validation, which also
// compiles the CEL rules and checks their cost against the budget.
func TestCRDsAreValid(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apiextensions.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for kind, c := range load(t) {
		internal := &apiextensions.CustomResourceDefinition{}
		if err := scheme.Convert(c, internal, nil); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		// The API server's create strategy records the stored version before validating.
		internal.Status.StoredVersions = []string{c.Spec.Versions[0].Name}
		if errs := validation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
			t.Errorf("%s: %v", kind, errs.ToAggregate())
		}
	}
}

// durationBound is the message of the CEL rule that bounds every duration
// field, and programNotEmpty that of the rule on every argv.
const (
	durationBound   = "must be a duration of at most 8760h (365 days)"
	programNotEmpty = "the program (the first element) may not be empty"
)

func TestCRDShape(t *testing.T) {
	type column struct {
		name     string
		path     string
		priority int32
	}
	tests := []struct {
		kind       string
		shortName  string
		columns    []column
		enums      map[string][]string
		defaults   map[string]string
		validation map[string]string
	}{
		{
			kind:      "Hook",
			shortName: "hk",
			columns: []column{
				{"State", ".status.state", 0}, {"Step", ".status.currentStep.name", 0},
				{"Attempt", ".status.currentStep.attempt", 0}, {"Assignee", ".spec.assignee", 0}, {"Paused", ".spec.suspend", 0},
				{"History", `.status.conditions[?(@.reason=="HistoryMismatch")].reason`, 0},
				{"Age", ".metadata.creationTimestamp", 0},
				{"Heartbeat", ".status.lastHeartbeat", 1}, {"Goal", ".spec.goal", 1},
			},
			enums: map[string][]string{
				"status.state": {"initializing", "step_pending", "step_running", "step_validating", "awaiting_human", "recovering", "completed", "failed", "abandoned"},
			},
			defaults: map[string]string{
				"spec.maxAttempts": "3", "spec.steps[].validate[].timeout": `"10m0s"`,
			},
			validation: map[string]string{
				"spec": "step names must be unique", "spec.steps[].validate[].command": programNotEmpty,
				"spec.staleAfter": durationBound, "spec.checkpointInterval": durationBound,
				"spec.steps[].validate[].timeout": durationBound, "spec.retention.completed": durationBound,
				"spec.retention.failed": durationBound, "spec.retention.abandoned": durationBound,
			},
		},
		{
			kind:      "Worker",
			shortName: "wk",
			columns: []column{
				{"Phase", ".status.phase", 0}, {"PID", ".status.pid", 0},
				{"Restarts", ".status.restarts", 0}, {"Age", ".metadata.creationTimestamp", 0},
				{"Host", ".status.host", 1},
				{"Pod", ".status.podName", 1},
			},
			enums: map[string][]string{
				"status.phase": {"Pending", "Running", "Restarting", "Crashed", "CrashLoop", "Stopped", "Lost"},
			},
			defaults: map[string]string{
				"spec.restart.auto": "false", "spec.restart.maxCrashes": "3", "spec.restart.window": `"10m0s"`,
				"spec.clearAssigneeOnCrash": "true",
			},
			validation: map[string]string{
				"spec": "command, adopt and template are mutually exclusive", "spec.command": programNotEmpty,
				"spec.heartbeatTimeout": durationBound, "spec.restart.window": durationBound,
			},
		},
		{
			kind:      "Checkpoint",
			shortName: "cp",
			columns: []column{
				{"Hook", ".spec.hookName", 0}, {"Trigger", ".spec.trigger", 0}, {"Step", ".spec.step", 0},
				{"Seq", ".spec.seq", 0}, {"Snapshot", ".spec.git.snapshotShort", 0},
				{"Ready", `.status.conditions[?(@.type=="Ready")].status`, 0}, {"Age", ".metadata.creationTimestamp", 0},
				{"Branch", ".spec.git.branch", 1}, {"Description", ".spec.description", 1},
			},
			enums: map[string][]string{
				"spec.trigger": {"git_commit", "git_push", "pr_created", "validation_pass", "step_complete", "interval", "manual", "pre_compact", "pre_restore"},
			},
			validation: map[string]string{"spec": "self == oldSelf"},
		},
	}
	crds := load(t)
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			c := crds[tt.kind]
			if c.Spec.Group != "agents.tether.dev" || c.Spec.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("group %q scope %q", c.Spec.Group, c.Spec.Scope)
			}
			if !slices.Equal(c.Spec.Names.ShortNames, []string{tt.shortName}) {
				t.Errorf("short names %v, want [%s]", c.Spec.Names.ShortNames, tt.shortName)
			}
			if !slices.Equal(c.Spec.Names.Categories, []string{"tether"}) {
				t.Errorf("categories %v, want [tether]", c.Spec.Names.Categories)
			}
			if len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Name != "v1alpha1" {
				t.Fatalf("versions %v", c.Spec.Versions)
			}
			v := c.Spec.Versions[0]
			if v.Subresources == nil || v.Subresources.Status == nil {
				t.Error("no status subresource")
			}
			var got []column
			for _, col := range v.AdditionalPrinterColumns {
				got = append(got, column{col.Name, col.JSONPath, col.Priority})
			}
			if !slices.Equal(got, tt.columns) {
				t.Errorf("printer columns\n got %v\nwant %v", got, tt.columns)
			}
			root := v.Schema.OpenAPIV3Schema
			for path, want := range tt.enums {
				var values []string
				for _, e := range at(t, root, path).Enum {
					values = append(values, string(e.Raw[1:len(e.Raw)-1]))
				}
				if !slices.Equal(values, want) {
					t.Errorf("%s enum %v, want %v", path, values, want)
				}
			}
			for path, want := range tt.defaults {
				d := at(t, root, path).Default
				if d == nil || string(d.Raw) != want {
					t.Errorf("%s default %v, want %s", path, d, want)
				}
			}
			for path, want := range tt.validation {
				found := false
				for _, rule := range at(t, root, path).XValidations {
					if rule.Message == want || rule.Rule == want {
						found = true
					}
				}
				if !found {
					t.Errorf("%s has no validation rule %q", path, want)
				}
			}
		})
	}
}

// at walks a dotted path through properties; "[]" steps into array items.
func at(t *testing.T, s *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	cur := s
	for _, part := range splitPath(path) {
		if part == "[]" {
			if cur.Items == nil || cur.Items.Schema == nil {
				t.Fatalf("%s: no items", path)
			}
			cur = cur.Items.Schema
			continue
		}
		next, ok := cur.Properties[part]
		if !ok {
			t.Fatalf("%s: no property %q", path, part)
		}
		cur = &next
	}
	return cur
}

func splitPath(path string) []string {
	var parts []string
	cur := ""
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '.':
			if cur != "" {
				parts = append(parts, cur)
			}
			cur = ""
		case path[i] == '[' && i+1 < len(path) && path[i+1] == ']':
			if cur != "" {
				parts = append(parts, cur)
			}
			parts = append(parts, "[]")
			cur = ""
			i++
		default:
			cur += string(path[i])
		}
	}
	if cur != "" {
		parts = append(parts, cur)
	}
	return parts
}

// TestEmbeddedMatchesBases checks that zz_generated.crds.pb, which Load
// decodes, holds what bases/*.yaml holds; `make manifests` regenerates it.
func TestEmbeddedMatchesBases(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != len(names) {
		t.Fatalf("Load returned %d CRDs, bases/ holds %d: run make manifests", len(crds), len(names))
	}
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !equality.Semantic.DeepEqual(crds[i], want) {
			t.Errorf("CRD %d of Load differs from %s: run make manifests", i, name)
		}
	}
}

func TestLoadReturnsCopies(t *testing.T) {
	first, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	first[0].Spec.Group = "changed"
	second, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	if second[0].Spec.Group == "changed" {
		t.Error("a change to one Load's CRDs shows in the next Load's")
	}
}

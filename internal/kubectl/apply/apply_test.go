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

package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/kubectl/apply"
	"github.com/tether-dev/tether/internal/kubectl/manifest"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

const hookYAML = `apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: h
  labels:
    team: web
spec:
  goal: first goal
  workspace: /src
  steps:
  - name: one
`

type fixture struct {
	applier *apply.Applier
	client  client.Client
	s       *filestore.Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store := testsupport.Store(t, t.TempDir())
	return &fixture{applier: &apply.Applier{Client: store.Client(), Mapper: store.RESTMapper()}, client: store.Client(), s: store}
}

func (f *fixture) apply(t *testing.T, yaml string, opts apply.Options) (apply.Result, error) {
	t.Helper()
	s, _ := scheme.New()
	opts.Namespace = "default"
	outcomes, err := f.applier.ApplyFile(context.Background(), apply.Source{Name: "h.yaml", Data: []byte(yaml)}, s, opts)
	if err != nil {
		return "", err
	}
	return outcomes[0].Result, outcomes[0].Err
}

func (f *fixture) hook(t *testing.T) *agentsv1alpha1.Hook {
	t.Helper()
	h := &agentsv1alpha1.Hook{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "h"}, h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestThreeWayMerge checks kubectl's client-side apply semantics: the file
// wins for the fields it sets or stops setting, other writers keep the rest.
func TestThreeWayMerge(t *testing.T) {
	for _, tt := range []struct {
		name   string
		other  func(h *agentsv1alpha1.Hook) // a change by another writer after the first apply
		second string
		want   apply.Result
		check  func(t *testing.T, h *agentsv1alpha1.Hook)
	}{
		{
			name: "same file is unchanged", second: hookYAML, want: apply.Unchanged,
			check: func(t *testing.T, h *agentsv1alpha1.Hook) {
				if h.Generation != 1 {
					t.Errorf("generation %d", h.Generation)
				}
			},
		},
		{
			name:   "another writer's field and the defaults survive",
			other:  func(h *agentsv1alpha1.Hook) { h.Spec.Assignee = "w1" },
			second: strings.Replace(hookYAML, "first goal", "second goal", 1), want: apply.Configured,
			check: func(t *testing.T, h *agentsv1alpha1.Hook) {
				if h.Spec.Goal != "second goal" || h.Spec.Assignee != "w1" || h.Spec.MaxAttempts != 3 {
					t.Errorf("goal %q assignee %q maxAttempts %d", h.Spec.Goal, h.Spec.Assignee, h.Spec.MaxAttempts)
				}
			},
		},
		{
			name:   "a field the file stops setting is removed",
			second: strings.Replace(strings.Replace(hookYAML, "  workspace: /src\n", "", 1), "  labels:\n    team: web\n", "", 1), want: apply.Configured,
			check: func(t *testing.T, h *agentsv1alpha1.Hook) {
				if h.Spec.Workspace != "" || len(h.Labels) != 0 {
					t.Errorf("workspace %q labels %v, want both removed", h.Spec.Workspace, h.Labels)
				}
			},
		},
		{
			name:   "a field the file sets is restored after another writer changed it",
			other:  func(h *agentsv1alpha1.Hook) { h.Spec.Goal = "hijacked" },
			second: hookYAML, want: apply.Configured,
			check: func(t *testing.T, h *agentsv1alpha1.Hook) {
				if h.Spec.Goal != "first goal" {
					t.Errorf("goal %q", h.Spec.Goal)
				}
			},
		},
		{
			name:   "a label another writer added survives",
			other:  func(h *agentsv1alpha1.Hook) { h.Labels["owner"] = "me" },
			second: hookYAML, want: apply.Unchanged,
			check: func(t *testing.T, h *agentsv1alpha1.Hook) {
				if h.Labels["owner"] != "me" || h.Labels["team"] != "web" {
					t.Errorf("labels %v", h.Labels)
				}
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if res, err := f.apply(t, hookYAML, apply.Options{}); err != nil || res != apply.Created {
				t.Fatalf("first apply: %v %v", res, err)
			}
			if tt.other != nil {
				h := f.hook(t)
				tt.other(h)
				if err := f.client.Update(context.Background(), h); err != nil {
					t.Fatal(err)
				}
			}
			res, err := f.apply(t, tt.second, apply.Options{})
			if err != nil || res != tt.want {
				t.Fatalf("second apply: %v %v, want %v", res, err, tt.want)
			}
			h := f.hook(t)
			if h.Annotations[apply.LastAppliedAnnotation] == "" {
				t.Error("no last-applied annotation")
			}
			tt.check(t, h)
		})
	}
}

func TestApplyAdoptsAnObjectCreatedWithoutApply(t *testing.T) {
	f := newFixture(t)
	s, _ := scheme.New()
	docs, err := manifest.Decode("h.yaml", []byte(hookYAML), s)
	if err != nil {
		t.Fatal(err)
	}
	docs[0].Object.SetNamespace("default")
	if err := f.client.Create(context.Background(), docs[0].Object); err != nil {
		t.Fatal(err)
	}
	if res, err := f.apply(t, hookYAML, apply.Options{}); err != nil || res != apply.Configured {
		t.Fatalf("apply over a created object: %v %v, want configured (annotation added)", res, err)
	}
	if res, err := f.apply(t, hookYAML, apply.Options{}); err != nil || res != apply.Unchanged {
		t.Fatalf("second apply: %v %v", res, err)
	}
}

func TestDryRunsStoreNothing(t *testing.T) {
	for _, mode := range []apply.DryRun{apply.DryRunClient, apply.DryRunServer} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			if res, err := f.apply(t, hookYAML, apply.Options{DryRun: mode}); err != nil || res != apply.Created {
				t.Fatalf("dry-run create: %v %v", res, err)
			}
			err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "h"}, &agentsv1alpha1.Hook{})
			if !apierrors.IsNotFound(err) {
				t.Fatalf("dry run stored the object: %v", err)
			}
			if _, err := f.apply(t, hookYAML, apply.Options{}); err != nil {
				t.Fatal(err)
			}
			before := f.hook(t)
			if res, err := f.apply(t, strings.Replace(hookYAML, "first goal", "dry goal", 1), apply.Options{DryRun: mode}); err != nil || res != apply.Configured {
				t.Fatalf("dry-run update: %v %v", res, err)
			}
			if after := f.hook(t); after.ResourceVersion != before.ResourceVersion || after.Spec.Goal != "first goal" {
				t.Errorf("dry-run update changed the object: goal %q", after.Spec.Goal)
			}
		})
	}
}

func TestABadDocumentAppliesNothingFromItsFile(t *testing.T) {
	f := newFixture(t)
	second := strings.Replace(strings.Replace(hookYAML, "name: h", "name: h2", 1), "  goal: first goal\n", "  goal: x\n  maxAttempts: 0\n", 1)
	s, _ := scheme.New()
	_, err := f.applier.ApplyFile(context.Background(), apply.Source{Name: "two.yaml", Data: []byte(hookYAML + "---\n" + second)}, s, apply.Options{Namespace: "default"})
	var ae *apply.Error
	if !errors.As(err, &ae) || ae.Index != 1 || ae.NothingApplied != "two.yaml" || !strings.Contains(err.Error(), "spec.maxAttempts") || !strings.Contains(err.Error(), "two.yaml:21 (document 2)") {
		t.Fatalf("error %v, want document 2 of two.yaml naming spec.maxAttempts", err)
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "h"}, &agentsv1alpha1.Hook{}); !apierrors.IsNotFound(err) {
		t.Errorf("document 1 was applied: %v", err)
	}
}

// TestApplyRefusesWhatKubectlRefuses: a generateName without a name, and a
// resourceVersion older than the live object's, are refused, changing nothing.
func TestApplyRefusesWhatKubectlRefuses(t *testing.T) {
	f := newFixture(t)
	if _, err := f.apply(t, hookYAML, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	first := f.hook(t).ResourceVersion
	if _, err := f.apply(t, strings.Replace(hookYAML, "first goal", "second goal", 1), apply.Options{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, yaml, want string
		line             int
		conflict         bool
	}{
		{
			name: "generateName", yaml: strings.Replace(hookYAML, "  name: h\n", "  generateName: h-\n", 1),
			want: "metadata.generateName: from h-: cannot use generate name with apply", line: 4,
		},
		{
			name: "generateName and a name", yaml: strings.Replace(strings.Replace(hookYAML, "  name: h\n", "  name: h\n  generateName: h-\n", 1), "first goal", "second goal", 1),
		},
		{
			name: "stale resourceVersion", yaml: strings.Replace(strings.Replace(hookYAML, "  name: h\n", "  name: h\n  resourceVersion: \""+first+"\"\n", 1), "first goal", "stale goal", 1),
			want: "the object has been modified", conflict: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.hook(t)
			_, err := f.apply(t, tt.yaml, apply.Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if tt.conflict != apierrors.IsConflict(err) {
				t.Errorf("conflict %v, want %v: %v", apierrors.IsConflict(err), tt.conflict, err)
			}
			var ae *apply.Error
			if tt.line != 0 && (!errors.As(err, &ae) || ae.Line != tt.line) {
				t.Errorf("error %v, want it at line %d", err, tt.line)
			}
			if after := f.hook(t); after.ResourceVersion != before.ResourceVersion || after.Spec.Goal != "second goal" {
				t.Errorf("the refused apply changed the hook: goal %q, resourceVersion %s -> %s", after.Spec.Goal, before.ResourceVersion, after.ResourceVersion)
			}
		})
	}
}

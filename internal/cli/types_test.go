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
	"errors"
	"slices"
	"testing"

	"github.com/tether-dev/tether/config/crd"
)

func testTypes(t *testing.T) *Types {
	t.Helper()
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	return NewTypes(crds)
}

func TestTypesResolve(t *testing.T) {
	types := testTypes(t)
	tests := []struct {
		name string
		want []string
	}{
		{"hooks", []string{"hooks"}},
		{"hook", []string{"hooks"}},
		{"hk", []string{"hooks"}},
		{"Hook", []string{"hooks"}},
		{"HK", []string{"hooks"}},
		{"hooks.agents.tether.dev", []string{"hooks"}},
		{"hook.agents.tether.dev", []string{"hooks"}},
		{"hooks.v1alpha1.agents.tether.dev", []string{"hooks"}},
		{"wk", []string{"workers"}},
		{"worker", []string{"workers"}},
		{"cp", []string{"checkpoints"}},
		{"checkpoints", []string{"checkpoints"}},
		{"ev", []string{"events"}},
		{"events", []string{"events"}},
		{"events.v1", []string{"events"}},
		{"all", []string{"checkpoints", "hooks", "workers"}},
		{"tether", []string{"checkpoints", "hooks", "workers"}},
		{"hk,wk", []string{"hooks", "workers"}},
		{"hk,hooks", []string{"hooks"}},
		{"all,ev", []string{"checkpoints", "hooks", "workers", "events"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := types.Resolve(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			var plurals []string
			for _, rt := range got {
				plurals = append(plurals, rt.Plural)
			}
			if !slices.Equal(plurals, tt.want) {
				t.Fatalf("Resolve(%q) = %v, want %v", tt.name, plurals, tt.want)
			}
		})
	}
}

func TestTypesResolveUnknown(t *testing.T) {
	types := testTypes(t)
	for _, name := range []string{"", "pods", "hooks.apps", "hk,pods", "hooks.v2.agents.tether.dev", "hooksx"} {
		_, err := types.Resolve(name)
		var unknown *UnknownTypeError
		if !errors.As(err, &unknown) {
			t.Errorf("Resolve(%q) error = %v, want UnknownTypeError", name, err)
		}
	}
}

func TestParseTargets(t *testing.T) {
	types := testTypes(t)
	tests := []struct {
		args    []string
		want    map[string][]string
		order   []string
		wantErr bool
	}{
		{args: []string{"hk"}, order: []string{"hooks"}, want: map[string][]string{"hooks": nil}},
		{args: []string{"hk", "a", "b"}, order: []string{"hooks"}, want: map[string][]string{"hooks": {"a", "b"}}},
		{args: []string{"hk/a", "wk/w", "hook/b"}, order: []string{"hooks", "workers"}, want: map[string][]string{"hooks": {"a", "b"}, "workers": {"w"}}},
		{args: []string{"hk,wk", "x"}, order: []string{"hooks", "workers"}, want: map[string][]string{"hooks": {"x"}, "workers": {"x"}}},
		{args: nil, wantErr: true},
		{args: []string{"hk/a", "b"}, wantErr: true},
		{args: []string{"hk", "wk/b"}, wantErr: true},
		{args: []string{"hk/"}, wantErr: true},
		{args: []string{"all/x"}, wantErr: true},
		{args: []string{"nope/x"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := types.ParseTargets(tt.args)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParseTargets(%q) succeeded, want an error", tt.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseTargets(%q): %v", tt.args, err)
		}
		var order []string
		for _, target := range got {
			order = append(order, target.Type.Plural)
			if !slices.Equal(target.Names, tt.want[target.Type.Plural]) {
				t.Errorf("ParseTargets(%q) names of %s = %v, want %v", tt.args, target.Type.Plural, target.Names, tt.want[target.Type.Plural])
			}
		}
		if !slices.Equal(order, tt.order) {
			t.Errorf("ParseTargets(%q) types = %v, want %v", tt.args, order, tt.order)
		}
	}
}

func TestResourceTypeQualified(t *testing.T) {
	types := testTypes(t)
	hooks, _ := types.Resolve("hk")
	events, _ := types.Resolve("ev")
	if got := hooks[0].Qualified(); got != "hook.agents.tether.dev" {
		t.Errorf("hook Qualified() = %q", got)
	}
	if got := events[0].Qualified(); got != "event" {
		t.Errorf("event Qualified() = %q", got)
	}
	if hooks[0].Version() == nil || events[0].Version() != nil {
		t.Error("Version() should be set for CRD types only")
	}
}

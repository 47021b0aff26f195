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

package kinds_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tether-dev/tether/internal/kinds"
)

func TestLoad(t *testing.T) {
	reg, err := kinds.Load()
	if err != nil {
		t.Fatal(err)
	}
	const group, version = "agents.tether.dev", "v1alpha1"
	tests := []struct {
		kind      string
		group     string
		plural    string
		singular  string
		short     string
		qualified string
		custom    bool
	}{
		{kind: "Checkpoint", group: group, plural: "checkpoints", singular: "checkpoint", short: "cp", qualified: "checkpoint.agents.tether.dev", custom: true},
		{kind: "Hook", group: group, plural: "hooks", singular: "hook", short: "hk", qualified: "hook.agents.tether.dev", custom: true},
		{kind: "Worker", group: group, plural: "workers", singular: "worker", short: "wk", qualified: "worker.agents.tether.dev", custom: true},
		{kind: "Event", plural: "events", singular: "event", short: "ev", qualified: "event"},
	}
	mapper := reg.RESTMapper()
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			v := version
			if !tt.custom {
				v = "v1"
			}
			gvk := schema.GroupVersionKind{Group: tt.group, Version: v, Kind: tt.kind}
			k, ok := reg.ForGVK(gvk)
			if !ok {
				t.Fatalf("ForGVK(%v) found nothing", gvk)
			}
			if k.Plural != tt.plural || k.Singular != tt.singular || !slices.Contains(k.ShortNames, tt.short) || k.Qualified() != tt.qualified {
				t.Fatalf("kind %+v, want plural %q, singular %q, short name %q, qualified %q", k, tt.plural, tt.singular, tt.short, tt.qualified)
			}
			if !k.Namespaced || !k.Storage {
				t.Fatalf("kind %v: namespaced %v, storage %v; want both", gvk, k.Namespaced, k.Storage)
			}
			if got := (k.CRD != nil); got != tt.custom {
				t.Fatalf("kind %v has a CRD: %v, want %v", gvk, got, tt.custom)
			}
			if got := slices.Contains(reg.Custom(), gvk); got != tt.custom {
				t.Fatalf("Custom() holds %v: %v, want %v", gvk, got, tt.custom)
			}
			if tt.custom && (k.Version() == nil || !k.Status || !slices.Contains(k.Categories, "tether")) {
				t.Fatalf("kind %v: version %v, status %v, categories %v", gvk, k.Version(), k.Status, k.Categories)
			}
			if list, ok := reg.ForGVK(k.ListGVK()); !ok || list.GVK != gvk {
				t.Fatalf("ForGVK(%v) = %v, %v; want %v", k.ListGVK(), list.GVK, ok, gvk)
			}
			for _, mapped := range []schema.GroupVersionKind{gvk, k.ListGVK()} {
				m, err := mapper.RESTMapping(mapped.GroupKind(), mapped.Version)
				if err != nil {
					t.Fatal(err)
				}
				if m.Resource != k.GroupVersionResource() || m.Scope.Name() != meta.RESTScopeNameNamespace {
					t.Fatalf("RESTMapping(%v) = %v %v, want %v, namespaced", mapped, m.Resource, m.Scope.Name(), k.GroupVersionResource())
				}
			}
		})
	}
}

func TestAllOrder(t *testing.T) {
	reg, err := kinds.Load()
	if err != nil {
		t.Fatal(err)
	}
	all := reg.All()
	if len(all) == 0 || all[len(all)-1].GVK != kinds.Event.GVK {
		t.Fatalf("All() does not end with Event: %v", all)
	}
	custom := all[:len(all)-1]
	if !slices.IsSortedFunc(custom, func(a, b kinds.Kind) int { return strings.Compare(a.Plural, b.Plural) }) {
		t.Fatalf("custom kinds are not sorted by plural: %v", custom)
	}
	if _, ok := reg.ForGVK(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}); ok {
		t.Fatal("ForGVK found a kind that is not served")
	}
}

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
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tether-dev/tether/internal/kinds"
)

// CategoryAll is the CRD category that `all` expands to, as kubectl expands
// `all` to the resources in the "all" category.
const CategoryAll = "tether"

// ResourceType is one kind of object the CLI handles.
type ResourceType = kinds.Kind

// Types resolves the names users give resource types.
type Types struct {
	all []ResourceType
}

// NewTypes returns the stored versions of the kinds of crds, plus core/v1
// Events.
func NewTypes(crds []*apiextensionsv1.CustomResourceDefinition) *Types {
	t := &Types{}
	for _, k := range kinds.FromCRDs(crds).All() {
		if k.Storage {
			t.all = append(t.all, k)
		}
	}
	return t
}

// All returns every type, in a stable order.
func (t *Types) All() []ResourceType { return slices.Clone(t.all) }

// ForGVK returns the type of a kind.
func (t *Types) ForGVK(gvk schema.GroupVersionKind) (ResourceType, error) {
	for _, rt := range t.all {
		if rt.GVK == gvk {
			return rt, nil
		}
	}
	return ResourceType{}, &UnknownTypeError{Name: gvk.String()}
}

// UnknownTypeError reports a resource type name that matches nothing.
type UnknownTypeError struct {
	// Name is what the user typed.
	Name string
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q", e.Name)
}

// Resolve maps one type name to the types it means. It accepts the plural,
// singular, short name and kind, each optionally qualified with the group
// (`hooks.agents.tether.dev`) or version and group
// (`hooks.v1alpha1.agents.tether.dev`); a category (`all`, `tether`); and a
// comma-separated list of any of these. Matching is case-insensitive.
func (t *Types) Resolve(name string) ([]ResourceType, error) {
	var out []ResourceType
	seen := map[schema.GroupVersionKind]bool{}
	for _, part := range strings.Split(name, ",") {
		matches, err := t.resolveOne(part)
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			if !seen[m.GVK] {
				seen[m.GVK] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

func (t *Types) resolveOne(name string) ([]ResourceType, error) {
	lower := strings.ToLower(strings.TrimSpace(name))
	if lower == "" {
		return nil, &UnknownTypeError{Name: name}
	}
	if lower == "all" || lower == CategoryAll {
		var out []ResourceType
		for _, rt := range t.all {
			if slices.Contains(rt.Categories, CategoryAll) {
				out = append(out, rt)
			}
		}
		return out, nil
	}
	resource, qualifier, _ := strings.Cut(lower, ".")
	for _, rt := range t.all {
		if !matchesQualifier(rt, qualifier) {
			continue
		}
		if resource == rt.Plural || resource == rt.Singular || resource == strings.ToLower(rt.GVK.Kind) || slices.Contains(rt.ShortNames, resource) {
			return []ResourceType{rt}, nil
		}
	}
	return nil, &UnknownTypeError{Name: name}
}

// matchesQualifier tells whether q, the part of a type name after the
// first dot, names rt's group or version and group.
func matchesQualifier(rt ResourceType, q string) bool {
	group := strings.ToLower(rt.GVK.Group)
	switch q {
	case "", group, strings.ToLower(rt.GVK.Version) + "." + group:
		return true
	}
	return group == "" && q == strings.ToLower(rt.GVK.Version)
}

// Target is one type and the names of its objects that a command acts on;
// no names means every object.
type Target struct {
	// Type is the resource type.
	Type ResourceType
	// Names are the object names, in the order given.
	Names []string
}

// ParseTargets reads kubectl-style arguments: either `TYPE [NAME...]`, or
// one or more `TYPE/NAME`. Targets of the same type are merged, keeping
// the order of first appearance.
func (t *Types) ParseTargets(args []string) ([]Target, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("you must specify the type of resource to get, for example \"hooks\"; valid types: %s", t.validNames())
	}
	if strings.Contains(args[0], "/") {
		var out []Target
		for _, arg := range args {
			typ, name, ok := strings.Cut(arg, "/")
			if !ok || name == "" || typ == "" {
				return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'tether get hook/NAME'): %q", arg)
			}
			types, err := t.Resolve(typ)
			if err != nil {
				return nil, err
			}
			if len(types) != 1 {
				return nil, fmt.Errorf("%q names several types; name one type before the slash", typ)
			}
			out = appendTarget(out, types[0], name)
		}
		return out, nil
	}
	types, err := t.Resolve(args[0])
	if err != nil {
		return nil, err
	}
	names := args[1:]
	for _, n := range names {
		if strings.Contains(n, "/") {
			return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name: %q", n)
		}
	}
	out := make([]Target, 0, len(types))
	for _, rt := range types {
		out = append(out, Target{Type: rt, Names: slices.Clone(names)})
	}
	return out, nil
}

func appendTarget(out []Target, rt ResourceType, name string) []Target {
	for i := range out {
		if out[i].Type.GVK == rt.GVK {
			out[i].Names = append(out[i].Names, name)
			return out
		}
	}
	return append(out, Target{Type: rt, Names: []string{name}})
}

func (t *Types) validNames() string {
	names := make([]string, 0, len(t.all)+1)
	names = append(names, "all")
	for _, rt := range t.all {
		names = append(names, rt.Plural)
	}
	return strings.Join(names, ", ")
}

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

// Package kinds is the registry of the kinds tether serves, derived once
// from the CustomResourceDefinitions of config/crd plus the core/v1 Event:
// for each, its group, version and kind, list kind, plural, singular and
// short names, categories, scope and status subresource. The CLI resolves
// type names with it, the file store serves and maps exactly these kinds,
// and `tether run --manifests` syncs its custom kinds.
package kinds

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tether-dev/tether/config/crd"
)

// Kind is one served version of one kind.
type Kind struct {
	// GVK is the group, version and kind.
	GVK schema.GroupVersionKind
	// Plural is the resource name, as in URLs: "hooks".
	Plural string
	// Singular is the lower-case singular name: "hook".
	Singular string
	// ShortNames are the abbreviations: "hk".
	ShortNames []string
	// Categories are the groupings the kind belongs to, such as "tether".
	Categories []string
	// Namespaced is true for namespaced kinds.
	Namespaced bool
	// Status is true when the kind has a status subresource.
	Status bool
	// Storage is true for the version objects are stored in.
	Storage bool
	// CRD is the kind's definition; nil for built-in kinds such as Event.
	CRD *apiextensionsv1.CustomResourceDefinition
}

// ListGVK is the kind of a list of these objects: "HookList".
func (k Kind) ListGVK() schema.GroupVersionKind {
	return k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List")
}

// GroupResource is the kind's group and plural resource name.
func (k Kind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.GVK.Group, Resource: k.Plural}
}

// GroupVersionResource is the kind's group, version and plural resource name.
func (k Kind) GroupVersionResource() schema.GroupVersionResource {
	return k.GVK.GroupVersion().WithResource(k.Plural)
}

// Qualified is the name kubectl prints before an object's name:
// "hook.agents.tether.dev", or "event" for the core group.
func (k Kind) Qualified() string {
	if k.GVK.Group == "" {
		return strings.ToLower(k.GVK.Kind)
	}
	return strings.ToLower(k.GVK.Kind) + "." + k.GVK.Group
}

// Version returns the CRD version served for k, or nil for built-in kinds.
func (k Kind) Version() *apiextensionsv1.CustomResourceDefinitionVersion {
	if k.CRD == nil {
		return nil
	}
	for i := range k.CRD.Spec.Versions {
		if k.CRD.Spec.Versions[i].Name == k.GVK.Version {
			return &k.CRD.Spec.Versions[i]
		}
	}
	return nil
}

// Event is the core/v1 Event, the one built-in kind tether serves.
var Event = Kind{
	GVK:        corev1.SchemeGroupVersion.WithKind("Event"),
	Plural:     "events",
	Singular:   "event",
	ShortNames: []string{"ev"},
	Namespaced: true,
	Storage:    true,
}

// Registry is a set of kinds.
type Registry struct {
	// all holds the custom kinds sorted by plural, then Event.
	all []Kind
}

// FromCRDs returns the registry of every served version of crds, plus
// core/v1 Events.
func FromCRDs(crds []*apiextensionsv1.CustomResourceDefinition) *Registry {
	r := &Registry{}
	for _, c := range crds {
		for _, v := range c.Spec.Versions {
			if !v.Served {
				continue
			}
			r.all = append(r.all, Kind{
				GVK:        schema.GroupVersionKind{Group: c.Spec.Group, Version: v.Name, Kind: c.Spec.Names.Kind},
				Plural:     c.Spec.Names.Plural,
				Singular:   c.Spec.Names.Singular,
				ShortNames: c.Spec.Names.ShortNames,
				Categories: c.Spec.Names.Categories,
				Namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped,
				Status:     v.Subresources != nil && v.Subresources.Status != nil,
				Storage:    v.Storage,
				CRD:        c,
			})
		}
	}
	slices.SortStableFunc(r.all, func(a, b Kind) int { return strings.Compare(a.Plural, b.Plural) })
	r.all = append(r.all, Event)
	return r
}

// Load returns the registry of the CRDs embedded in config/crd.
func Load() (*Registry, error) {
	crds, err := crd.Load()
	if err != nil {
		return nil, err
	}
	return FromCRDs(crds), nil
}

// All returns every kind: the custom kinds sorted by plural, then Event.
func (r *Registry) All() []Kind { return slices.Clone(r.all) }

// Custom returns the group, version and kind of every custom kind.
func (r *Registry) Custom() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, k := range r.all {
		if k.CRD != nil {
			out = append(out, k.GVK)
		}
	}
	return out
}

// ForGVK returns the kind gvk, or the kind of the list kind gvk
// ("HookList" gives Hook).
func (r *Registry) ForGVK(gvk schema.GroupVersionKind) (Kind, bool) {
	for _, k := range r.all {
		if k.GVK == gvk || k.ListGVK() == gvk {
			return k, true
		}
	}
	return Kind{}, false
}

// RESTMapper maps every kind, and its list kind, to its resource and back.
func (r *Registry) RESTMapper() meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, k := range r.all {
		scope := meta.RESTScopeRoot
		if k.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		plural := k.GroupVersionResource()
		singular := k.GVK.GroupVersion().WithResource(strings.ToLower(k.GVK.Kind))
		mapper.AddSpecific(k.GVK, plural, singular, scope)
		mapper.AddSpecific(k.ListGVK(), plural, singular, scope)
	}
	return mapper
}

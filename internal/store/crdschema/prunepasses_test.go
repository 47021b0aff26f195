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

package crdschema_test

import (
	"reflect"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/store/crdschema"
)

var gadgetGVK = schema.GroupVersionKind{Group: "test.tether.dev", Version: "v1", Kind: "Gadget"}

// gadgetCRD has what tether's own CRDs lack: an embedded resource (the
// coercion pass's only work below the root), a nullable field and a
// field with a default beside non-nullable ones, at several depths.
func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.test.tether.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gadgetGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"apiVersion": str, "kind": str, "metadata": {Type: "object"},
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"plain":     str,
							"nullable":  {Type: "string", Nullable: true},
							"defaulted": {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"d"`)}},
							"items": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
								Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": str, "note": str},
							}}},
							"template": {Type: "object", XEmbeddedResource: true, Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"apiVersion": str, "kind": str, "metadata": {Type: "object"},
								"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": str}},
							}},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"state": str,
							"list":  {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
						}},
					},
				}},
			}},
		},
	}
}

// TestPrunePassesSkippedOnlyWhereIdle: Prune skips the pass that drops
// nulls when the object holds none, and the coercion of embedded
// resources when the schema has none. Whatever the object, the result
// and the reported paths are those of every pass run on the whole
// object (PruneWhole), for a schema with an embedded resource and for
// tether's own.
func TestPrunePassesSkippedOnlyWhereIdle(t *testing.T) {
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	v, err := crdschema.New(append(crds, gadgetCRD()))
	if err != nil {
		t.Fatal(err)
	}
	gadget := `{"apiVersion": "test.tether.dev/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "default"}, "spec": {"plain": "p"}}`
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		yaml   string
		mutate []func(*testing.T, map[string]interface{})
		// reported must be among Prune's paths; gone must be removed.
		reported, gone []string
	}{
		{name: "nothing to prune", gvk: gadgetGVK, yaml: gadget},
		{name: "a null in a non-nullable field, deep in a list", gvk: gadgetGVK, yaml: gadget,
			mutate: []func(*testing.T, map[string]interface{}){set("spec.items", `[{"name": "a", "note": "n"}, {"name": "b", "note": null}]`)}},
		{name: "nulls kept where nullable or defaulted", gvk: gadgetGVK, yaml: gadget,
			mutate: []func(*testing.T, map[string]interface{}){set("spec.nullable", `null`), set("spec.defaulted", `null`)}},
		{name: "a null status", gvk: gadgetGVK, yaml: gadget,
			mutate: []func(*testing.T, map[string]interface{}){set("status", `null`)}, gone: []string{"status"}},
		{name: "a null in a status list", gvk: gadgetGVK, yaml: gadget,
			mutate: []func(*testing.T, map[string]interface{}){set("status", `{"state": "s", "list": ["a", null]}`)}},
		{name: "unknown metadata in an embedded resource", gvk: gadgetGVK, yaml: gadget,
			mutate:   []func(*testing.T, map[string]interface{}){set("spec.template", `{"apiVersion": "v1", "kind": "K", "metadata": {"name": "t", "foo": 1, "labels": {"a": "b"}}, "spec": {"x": "y"}}`)},
			reported: []string{"spec.template.metadata.foo"}, gone: []string{"spec.template.metadata.foo"}},
		{name: "an embedded resource's metadata of the wrong shape", gvk: gadgetGVK, yaml: gadget,
			mutate: []func(*testing.T, map[string]interface{}){set("spec.template", `{"apiVersion": "v1", "kind": "K", "metadata": {"name": 5}}`)}},
		{name: "an embedded resource with a null", gvk: gadgetGVK, yaml: gadget,
			mutate:   []func(*testing.T, map[string]interface{}){set("spec.template", `{"apiVersion": "v1", "kind": "K", "metadata": {"name": "t", "bar": true}, "spec": {"x": null}}`)},
			reported: []string{"spec.template.metadata.bar"}, gone: []string{"spec.template.spec.x"}},
		{name: "a Hook with no null", gvk: hookGVK, yaml: hookYAML},
		{name: "a Hook with nulls and unknown fields", gvk: hookGVK, yaml: hookYAML,
			mutate:   []func(*testing.T, map[string]interface{}){set("spec.workspace", `null`), set("spec.extra", `1`), set("metadata.creationTimestamp", `null`), set("status", `{"state": null}`)},
			reported: []string{"spec.extra"}, gone: []string{"spec.workspace", "spec.extra", "status.state"}},
		{name: "a Worker's schemaless template with nulls", gvk: workerGVK, yaml: workerYAML,
			mutate: []func(*testing.T, map[string]interface{}){unset("spec.command"), set("spec.template", `{"metadata": {"labels": null}, "spec": {"anything": [null]}}`)}},
		{name: "a Checkpoint's status alone", gvk: checkpointGVK, yaml: `{"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Checkpoint", "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "R", "message": null, "lastTransitionTime": "2026-11-30T00:00:00Z"}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.yaml)
			for _, m := range tt.mutate {
				m(t, obj)
			}
			whole := unstructured.Unstructured{Object: obj}
			want := whole.DeepCopy().Object
			wantPaths := crdschema.PruneWhole(v, tt.gvk, want)

			got := v.Prune(tt.gvk, obj)
			if !slices.Equal(got, wantPaths) {
				t.Errorf("Prune reported %q; every pass run whole reports %q", got, wantPaths)
			}
			if !reflect.DeepEqual(obj, want) {
				t.Errorf("Prune left\n%v\nevery pass run whole leaves\n%v", obj, want)
			}
			for _, p := range tt.reported {
				if !slices.Contains(got, p) {
					t.Errorf("%s not reported: %q", p, got)
				}
			}
			for _, p := range tt.gone {
				if hasPath(obj, p) {
					t.Errorf("%s was not removed", p)
				}
			}
		})
	}
}

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

package filestore

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestStoreFormNames checks the start-up scan's shortcut: it may only
// answer true for a body whose decoded metadata names the object, and
// should for the store's form of an ordinary object.
func TestStoreFormNames(t *testing.T) {
	storeForm := func(namespace, name string) string {
		u := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Hook",
			"metadata": map[string]interface{}{
				"name": name, "namespace": namespace, "uid": "u", "generation": int64(1),
				"annotations": map[string]interface{}{"note": "name: other\nnamespace: other\n", "name": "other"},
				"finalizers":  []interface{}{"name: other"},
			},
			"spec": map[string]interface{}{"goal": "g", "name": "other"},
		}}
		if namespace == "" {
			unstructured.RemoveNestedField(u.Object, "metadata", "namespace")
		}
		js, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		body, err := yaml.JSONToYAML(js)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	cases := []struct {
		name, body, namespace, object string
		want                          bool
	}{
		{name: "store form", body: storeForm("default", "hook-00001"), namespace: "default", object: "hook-00001", want: true},
		{name: "cluster-scoped", body: storeForm("", "hook-00001"), object: "hook-00001", want: true},
		{name: "other name", body: storeForm("default", "hook-00002"), namespace: "default", object: "hook-00001"},
		{name: "other namespace", body: storeForm("team", "hook-00001"), namespace: "default", object: "hook-00001"},
		{name: "namespace on a cluster-scoped path", body: storeForm("default", "hook-00001"), object: "hook-00001"},
		{name: "no namespace on a namespaced path", body: storeForm("", "hook-00001"), namespace: "default", object: "hook-00001"},
		{name: "number name", body: storeForm("default", "123"), namespace: "default", object: "123"},
		{name: "hex name", body: "metadata:\n  name: 0x1f\n  namespace: default\n", namespace: "default", object: "0x1f"},
		{name: "bool name", body: "metadata:\n  name: yes\n  namespace: default\n", namespace: "default", object: "yes"},
		{name: "null namespace", body: "metadata:\n  name: a\n  namespace: null\n", namespace: "null", object: "a"},
		{name: "quoted name", body: "metadata:\n  name: \"a\"\n  namespace: default\n", namespace: "default", object: "a"},
		{name: "repeated name", body: "metadata:\n  name: a\n  name: a\n  namespace: default\n", namespace: "default", object: "a"},
		{name: "flow metadata", body: "metadata: {name: a, namespace: default}\n", namespace: "default", object: "a"},
		{name: "name outside metadata", body: "metadata:\n  uid: u\nspec:\n  name: a\n  namespace: default\n", namespace: "default", object: "a"},
		{name: "comment after the name", body: "metadata:\n  name: a # b\n  namespace: default\n", namespace: "default", object: "a"},
		{name: "no metadata", body: "spec:\n  goal: g\n", namespace: "default", object: "a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := storeFormNames([]byte(tc.body), tc.namespace, tc.object)
			if got != tc.want {
				t.Errorf("storeFormNames = %v, want %v for\n%s", got, tc.want, tc.body)
			}
			if !got {
				return
			}
			obj := map[string]interface{}{}
			if err := yaml.UnmarshalStrict([]byte(tc.body), &obj); err != nil {
				t.Fatalf("the shortcut passed a body that does not decode: %v", err)
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetName() != tc.object || u.GetNamespace() != tc.namespace {
				t.Errorf("the shortcut passed a body naming %s/%s", u.GetNamespace(), u.GetName())
			}
		})
	}
}

// TestPlainNameAgreesWithYAML compares plainName's shortcut with the YAML
// decoder on every string of up to three characters from the DNS name
// alphabet, on YAML's special words and on values that are not names.
func TestPlainNameAgreesWithYAML(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-."
	var names []string
	for _, a := range alphabet {
		names = append(names, string(a))
		for _, b := range alphabet {
			names = append(names, string(a)+string(b))
			for _, c := range alphabet {
				names = append(names, string(a)+string(b)+string(c))
			}
		}
	}
	names = append(names, "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "nul", "yess",
		"y", "n", "~", ".inf", ".nan", "0x1f", "0o17", "1e3", "1_000", "2026-11-26", "1:20", "a: b", "a #b",
		"a b", "a,b", "a[b", "A", "Yes", "NULL", "hook-00001", "h.1", "", " ", "a\n", "'a'", `"a"`)
	for _, name := range names {
		if got, want := plainName(name), yamlReadsAsItself(name); got != want {
			t.Errorf("plainName(%q) = %v, YAML reads it as itself: %v", name, got, want)
		}
	}
}

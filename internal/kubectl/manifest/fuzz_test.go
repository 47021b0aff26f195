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

package manifest_test

import (
	"errors"
	"testing"

	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

// FuzzDecode checks that no input panics the decoder and that every failure
// is a located *manifest.Error.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(validHook))
	f.Add([]byte("---\n" + validHook + "---\nkind: Worker\n"))
	f.Add([]byte("apiVersion: agents.tether.dev/v1alpha1\nkind: Checkpoint\nmetadata: {name: c}\nspec: {hookName: h, trigger: manual, files: [{path: a, size: 1}]}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("{\"apiVersion\": 1}"))
	f.Add([]byte("- [\n"))
	fuzzDecode(f, "fuzz.yaml")
}

// FuzzDecodeJSON checks the same of a .json source, parsed as strict JSON.
func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(`{"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Hook", "metadata": {"name": "a"}, "spec": {"goal": "g", "steps": [{"name": "one"}]}}`))
	f.Add([]byte(`{"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Hook", "metadata": {"name": "a",}}`))
	f.Add([]byte(`{"a": 1}{"b": [2,]}`))
	f.Add([]byte(`{"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Worker", "metadata": {"name": "w"}, "spec": {"command": ["sleep"], "restart": {"window": "2562048h"}}}`))
	fuzzDecode(f, "fuzz.json")
}

func fuzzDecode(f *testing.F, source string) {
	scheme := newScheme(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := manifest.Decode(source, data, scheme)
		if err != nil {
			var derr *manifest.Error
			if !errors.As(err, &derr) {
				t.Fatalf("error %v is not a *manifest.Error", err)
			}
			if docs != nil {
				t.Fatal("documents returned alongside an error")
			}
			return
		}
		for _, d := range docs {
			if d.Object == nil || len(d.JSON) == 0 {
				t.Fatalf("document %d decoded without an object", d.Index)
			}
		}
	})
}

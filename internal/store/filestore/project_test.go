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
	"reflect"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// pruned is the whole-object decode of data cut down to want: what
// project must return.
func pruned(v map[string]interface{}, want fieldTree) map[string]interface{} {
	out := map[string]interface{}{}
	for k, sub := range want {
		val, ok := v[k]
		if !ok {
			continue
		}
		if m, isMap := val.(map[string]interface{}); isMap && sub != nil {
			out[k] = pruned(m, sub)
			continue
		}
		if a, isArray := val.([]interface{}); isArray && sub[elementsKey] != nil {
			elems := []interface{}{}
			for _, e := range a {
				if m, isMap := e.(map[string]interface{}); isMap {
					e = pruned(m, sub[elementsKey])
				}
				elems = append(elems, e)
			}
			out[k] = elems
			continue
		}
		out[k] = val
	}
	return out
}

var projectFields = []string{"status.currentStep", "spec.suspend", "status.conditions[].reason", "status.conditions[].type", "spec.goal", "spec.steps[]"}

func TestProjectAgreesWithWholeDecode(t *testing.T) {
	tests := []struct {
		name string
		json string
		bad  bool
	}{
		{name: "hook", json: `{"apiVersion":"agents.tether.dev/v1alpha1","kind":"Hook","metadata":{"name":"a","namespace":"default","labels":{"x":"y"},"uid":"u","creationTimestamp":"2026-11-01T10:00:00Z","ownerReferences":[{"uid":"o"}]},"spec":{"goal":"g","suspend":true,"steps":[{"name":"s"}]},"status":{"state":"s","currentStep":{"name":"two","attempt":2,"ratio":1.5,"big":12345678901234567890},"conditions":[{"type":"Ready","reason":"r"}],"history":[1,2,3]}}`},
		{name: "spaces and escapes", json: " { \"kind\" : \"Hook\" , \"meta\\u0064ata\" : { \"name\" : \"a\\\"b\\n\\u00e9\" } ,\"spec\":{\"goal\":\"\\ud83d\\ude00\"}, \"x\": [ true , false , null , -1.5e3, {} , [] ] } "},
		{name: "a subtree that is no object", json: `{"metadata":null,"status":"done","spec":[1,2]}`},
		{name: "elements", json: `{"status":{"conditions":[{"type":"A","reason":"r","message":"m"},null,3,[{"reason":1}],{}]}}`},
		{name: "elements of no array", json: `{"status":{"conditions":{"type":"A","reason":"r"}}}`},
		{name: "a kept member that is null", json: `{"spec":{"goal":null},"status":{"conditions":null}}`},
		{name: "duplicate members", json: `{"spec":{"goal":"a"},"spec":{"goal":"b"}}`},
		{name: "empty", json: `{}`},
		{name: "not an object", json: `[1]`, bad: true},
		{name: "torn", json: `{"spec":{"goal":"a"}`, bad: true},
		{name: "bad literal in a skipped member", json: `{"x":tru,"spec":{}}`, bad: true},
		{name: "bad number in a skipped member", json: `{"x":1.2.3}`, bad: true},
		{name: "bad escape in a skipped member", json: `{"x":"\q"}`, bad: true},
		{name: "control character in a string", json: "{\"x\":\"a\tb\"}", bad: true},
		{name: "trailing text", json: `{} x`, bad: true},
		{name: "missing colon", json: `{"x" 1}`, bad: true},
		{name: "trailing comma", json: `{"x":1,}`, bad: true},
	}
	want := newFieldTree(projectFields)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := project([]byte(tt.json), want)
			var whole map[string]interface{}
			werr := utiljson.Unmarshal([]byte(tt.json), &whole)
			if tt.bad {
				if err == nil || werr == nil {
					t.Fatalf("project: %v, whole decode: %v; want both to refuse", err, werr)
				}
				return
			}
			if err != nil || werr != nil {
				t.Fatalf("project: %v, whole decode: %v", err, werr)
			}
			if exp := pruned(whole, want); !reflect.DeepEqual(got, exp) {
				t.Errorf("project = %#v\nwant      %#v", got, exp)
			}
		})
	}
}

// FuzzProject checks project against the whole-object decode on any
// input: where both decode, project returns the whole decode cut down to
// the fields; project never takes what the whole decode refuses.
func FuzzProject(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"goal":"g\u00e9","suspend":false},"status":{"currentStep":{"attempt":1}}}`))
	f.Add([]byte(`{"spec":[{"a":-0.5e-3}],"status":{"conditions":[null,true,"\\"]}}`))
	f.Add([]byte(`{"metadata":{"name":"a\"b"}} `))
	want := newFieldTree(projectFields)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := project(data, want)
		var whole map[string]interface{}
		werr := utiljson.Unmarshal(data, &whole)
		if err == nil && werr != nil {
			t.Fatalf("project took %q, which the whole decode refuses: %v", data, werr)
		}
		if err != nil || werr != nil || whole == nil {
			return
		}
		if exp := pruned(whole, want); !reflect.DeepEqual(got, exp) {
			t.Fatalf("project(%q) = %#v\nwant %#v", data, got, exp)
		}
	})
}

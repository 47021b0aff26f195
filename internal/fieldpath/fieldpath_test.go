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

package fieldpath_test

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tether-dev/tether/internal/fieldpath"
)

type inner struct {
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	Count   int32            `json:"count,omitempty"`
}

type embedded struct {
	Kind string `json:"kind,omitempty"`
}

type doc struct {
	embedded `json:",inline"`
	Window   metav1.Duration     `json:"window,omitempty"`
	Items    []inner             `json:"items,omitempty"`
	ByName   map[string]inner    `json:"byName,omitempty"`
	At       *metav1.Time        `json:"at,omitempty"`
	Nested   *struct{ In inner } `json:"nested,omitempty"`
}

func TestDecodeYAML(t *testing.T) {
	tests := []struct {
		name, yaml, field, err string
		line                   int
		also                   []string
	}{
		{name: "valid", yaml: "window: 5m\nitems:\n- timeout: 1m\n"},
		{name: "empty", yaml: ""},
		{name: "comments only", yaml: "# nothing\n"},
		{name: "duration overflow", yaml: "kind: x\nwindow: 2562048h\n", field: "window", line: 2, err: "invalid duration"},
		{name: "duration in second item", yaml: "items:\n- timeout: 1m\n- count: 2\n  timeout: soon\n", field: "items[1].timeout", line: 4, err: `invalid duration "soon"`},
		{name: "type error in second item", yaml: "items:\n- count: 1\n- count: many\n", field: "items[1].count", line: 3, err: "invalid value: string"},
		{name: "map value", yaml: "byName:\n  a: {timeout: 1m}\n  b:\n    timeout: 1y\n", field: "byName.b.timeout", line: 4, err: "unknown unit"},
		{name: "time", yaml: "at: yesterday\n", field: "at", line: 1, err: "cannot parse"},
		{name: "scalar for a list", yaml: "window: 1m\nitems: soon\n", field: "items", line: 2, err: "invalid value: string"},
		{name: "list for an object", yaml: "nested: [1]\n", field: "nested", line: 1, err: "invalid value: array"},
		{name: "scalar for a map", yaml: "byName: 3\n", field: "byName", line: 1, err: "invalid value: number"},
		{name: "scalar for an object in a list", yaml: "items:\n- count: 1\n- 7\n", field: "items[1]", line: 3, err: "invalid value: number"},
		{name: "embedded field", yaml: "kind: [a]\n", field: "kind", line: 1, err: "invalid value: array"},
		{name: "field without tag", yaml: "nested:\n  In:\n    timeout: x\n", field: "nested.In.timeout", line: 3, err: "invalid duration"},
		{name: "unknown field", yaml: "window: 1m\nitems:\n- timeot: 1m\n", field: "items[0].timeot", line: 3, err: "unknown field"},
		{name: "duplicate field", yaml: "window: 1m\nwindow: 2m\n", line: 2, err: "already set"},
		{name: "syntax", yaml: "window: [1m\n", line: 1, err: "did not find expected"},
		{name: "two documents", yaml: "window: 1m\n---\nwindow: 2m\n", line: 2, err: "only one YAML document"},
		{name: "not a mapping", yaml: "- 1\n", line: 1, err: "must be a mapping"},
		{name: "two bad fields, in the order of the input", yaml: "items:\n- timeout: 9999999999999999999h\nwindow: 1y\n", field: "items[0].timeout", line: 2, err: `invalid duration "9999999999999999999h"`,
			also: []string{`line 3: window: time: unknown unit "y" in duration "1y"`}},
		{name: "three bad fields", yaml: "window: x\nitems:\n- count: many\n  timeout: zz\nat: z\n", field: "window", line: 1, err: `invalid duration "x"`,
			also: []string{"line 3: items[0].count: invalid value: string", `line 4: items[0].timeout: time: invalid duration "zz"`, "line 5: at: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			_, err := fieldpath.DecodeYAML([]byte(tt.yaml), &d)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ferr *fieldpath.Error
			if !errors.As(err, &ferr) {
				t.Fatalf("error %v is not a *fieldpath.Error", err)
			}
			if ferr.Field != tt.field || ferr.Line != tt.line || !strings.Contains(ferr.Err.Error(), tt.err) {
				t.Errorf("got line %d field %q: %v; want line %d field %q containing %q", ferr.Line, ferr.Field, ferr.Err, tt.line, tt.field, tt.err)
			}
			if len(ferr.Also) != len(tt.also) {
				t.Fatalf("%d other fields named, want %d: %v", len(ferr.Also), len(tt.also), err)
			}
			for i, a := range ferr.Also {
				if !strings.HasPrefix(a.Error(), tt.also[i]) {
					t.Errorf("other field %d: %q, want it to start with %q", i, a, tt.also[i])
				}
			}
		})
	}
}

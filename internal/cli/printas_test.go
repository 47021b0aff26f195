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
	"bytes"
	"strings"
	"testing"
)

func TestPrintAs(t *testing.T) {
	v := []struct {
		Name string `json:"name"`
	}{{Name: "a"}}
	tests := []struct {
		format, want, err string
		printed           bool
	}{
		{format: "", printed: false},
		{format: "json", printed: true, want: "[\n  {\n    \"name\": \"a\"\n  }\n]\n"},
		{format: "yaml", printed: true, want: "- name: a\n"},
		{format: "xml", printed: true, err: `--output: must be one of json, yaml, got "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var out bytes.Buffer
			printed, err := printAs(&out, tt.format, v)
			if printed != tt.printed || out.String() != tt.want {
				t.Errorf("printAs(%q) = %v, %q; want %v, %q", tt.format, printed, out.String(), tt.printed, tt.want)
			}
			if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("printAs(%q) error %v; want %q", tt.format, err, tt.err)
			}
		})
	}
}

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
	"testing"

	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

func TestFieldLine(t *testing.T) {
	const file = `# Managed by tether (resourceVersion 3, sha256 0).
apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: demo
spec:
  goal: ship it
  maxAttempts: -1
  steps:
  - name: build
  - name: test
    validate:
    - command: [go, test]
`
	tests := []struct {
		field string
		want  int
	}{
		{field: "spec.maxAttempts", want: 8},
		{field: "spec.steps[1].name", want: 11},
		{field: "spec.steps[1].validate[0].command", want: 13},
		{field: "spec.steps.validate", want: 12},
		{field: "spec.missing", want: 6},
		{field: "metadata.name", want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			if got := manifest.FieldLine([]byte(file), tt.field); got != tt.want {
				t.Fatalf("FieldLine(%q) = %d, want %d", tt.field, got, tt.want)
			}
		})
	}
	if got := manifest.FieldLine([]byte("a: [unclosed"), "a"); got != 0 {
		t.Fatalf("FieldLine of broken YAML = %d, want 0", got)
	}
}

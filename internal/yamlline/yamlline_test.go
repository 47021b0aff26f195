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

package yamlline_test

import (
	"testing"

	"github.com/tether-dev/tether/internal/yamlline"
)

func TestField(t *testing.T) {
	doc := []byte("staleAfter: 1m\nnotify:\n- name: a\n  command: [x]\n  reasons:\n  - Completed\n  - Crashed\n- command: [y]\n")
	cases := []struct {
		field string
		line  int
	}{
		{"staleAfter", 1},
		{"notify", 2},
		{"notify[0]", 3},
		{"notify[0].reasons[1]", 7},
		{"notify[1].command", 8},
		{"notify[0].timeout", 3}, // absent: its nearest ancestor
		{"notify[5]", 2},
	}
	for _, c := range cases {
		if got := yamlline.Field(doc, c.field); got != c.line {
			t.Errorf("Field(%q) = %d, want %d", c.field, got, c.line)
		}
	}
	if got := yamlline.Field([]byte("a: [1"), "a"); got != 0 {
		t.Errorf("Field of broken YAML = %d, want 0", got)
	}
}

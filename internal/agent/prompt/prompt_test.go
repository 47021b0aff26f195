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

package prompt_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/prompt"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestRender(t *testing.T) {
	cases := []struct {
		name, namespace, golden string
	}{
		{"fix-login", "default", "default.txt"},
		{"fix-login", "", "default.txt"},
		{"add-rate-limit", "team-a", "namespaced.txt"},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			got := prompt.Render(c.name, c.namespace)
			if !bytes.Equal(got, prompt.Render(c.name, c.namespace)) {
				t.Fatal("two renderings differ")
			}
			path := filepath.Join("testdata", c.golden)
			if *update && c.namespace != "" {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rendering:\n%s", path, got)
			}
			ns := ""
			if c.namespace == "team-a" {
				ns = " -n team-a"
			}
			for _, verb := range []string{"recover", "step begin", "heartbeat", "checkpoint", "step done", "await", "resume", "fail"} {
				if want := "tether " + verb + " " + c.name + ns; !strings.Contains(string(got), want) {
					t.Errorf("no %q in:\n%s", want, got)
				}
			}
		})
	}
}

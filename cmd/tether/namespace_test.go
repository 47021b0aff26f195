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

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamespaceGivenAsAPath gives tether namespaces that are paths or
// otherwise not namespace names, by -n and by metadata.namespace, and
// checks that each is refused as an invalid namespace name, naming the
// flag or the file, line and field, with nothing written anywhere.
func TestNamespaceGivenAsAPath(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("steady", 0, 0, step("one", 0, "true"))
	dir := t.TempDir()
	manifest := func(name, namespace string) string {
		path := filepath.Join(dir, name+".yaml")
		content := strings.Replace(hookManifest("steady", e.workspace), "  namespace: default\n", "  namespace: "+namespace+"\n", 1)
		must(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	plain := filepath.Join(dir, "plain.yaml")
	must(t, os.WriteFile(plain, []byte(hookManifest("fresh", e.workspace)), 0o600))
	up := manifest("up", "../x")
	deep := manifest("deep", "../../../x")

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{name: "get -n ../../x", args: []string{"get", "hooks", "-n", "../../x"}, want: []string{`-n/--namespace: "../../x" is not a valid namespace name`}},
		{name: "describe -n a/b", args: []string{"describe", "hook", "steady", "-n", "a/b"}, want: []string{`-n/--namespace: "a/b"`}},
		{name: "get -n Upper", args: []string{"get", "hooks", "-n", "Upper"}, want: []string{`-n/--namespace: "Upper"`}},
		{name: "events -n ..", args: []string{"events", "-n", ".."}, want: []string{`-n/--namespace: ".."`}},
		{name: "apply -n ../x", args: []string{"apply", "-f", plain, "-n", "../x"}, want: []string{`-n/--namespace: "../x"`}},
		{name: "apply of metadata.namespace ../x", args: []string{"apply", "-f", up}, want: []string{up + ":5", "metadata.namespace", `invalid namespace name "../x"`}},
		{name: "delete -f of metadata.namespace ../../../x", args: []string{"delete", "-f", deep}, want: []string{deep + ":5", "metadata.namespace", `invalid namespace name "../../../x"`}},
	}
	root := filepath.Dir(e.store)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := tree(t, root)
			out, stderr, code := e.tether(c.args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "outside the store") {
				t.Errorf("the refusal speaks of a path:\n%s", stderr)
			}
			if after := tree(t, root); after != before {
				t.Errorf("the refused command changed files:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

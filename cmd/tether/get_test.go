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
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

var fixtures = []string{"running.yaml", "completed.yaml", "initializing.yaml"}

// seed creates the testdata hooks (namespace default) through c, then writes their status
// through the status subresource, as the reconcilers would.
func seed(t *testing.T, c client.Client, files ...string) {
	t.Helper()
	ctx := context.Background()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", f))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		unstructured.RemoveNestedField(u.Object, "metadata", "generation")
		status, hasStatus := u.Object["status"]
		delete(u.Object, "status")
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("creating %s: %v", f, err)
		}
		if hasStatus {
			u.Object["status"] = status
			if err := c.Status().Update(ctx, u); err != nil {
				t.Fatalf("status of %s: %v", f, err)
			}
		}
	}
}

// openStore opens the store at dir from the test process: another process
// than the tether binary, as tether run or a second CLI would be.
func openStore(t testing.TB, dir string) *filestore.Store {
	t.Helper()
	return testsupport.Store(t, dir)
}

// getCase is one invocation of tether get and what its output must hold.
type getCase struct {
	name string
	args []string
	// want are substrings of stdout; lines, when set, is the exact number
	// of stdout lines; check, when set, inspects stdout.
	want  []string
	lines int
	check func(t *testing.T, stdout string)
}

func listNames(t *testing.T, stdout string, unmarshal func([]byte, interface{}) error) []string {
	t.Helper()
	var list struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion *string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if list.Kind != "List" || list.Metadata.ResourceVersion == nil {
		t.Errorf("want a v1 List with metadata.resourceVersion, as kubectl prints; got kind %q:\n%s", list.Kind, stdout)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Metadata.Name)
	}
	return names
}

func getCases(t *testing.T) []getCase {
	jsonpathFile := filepath.Join(t.TempDir(), "names.jsonpath")
	if err := os.WriteFile(jsonpathFile, []byte(`{range .items[*]}{.metadata.name}={.status.state}{"\n"}{end}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return []getCase{
		{name: "table", args: []string{"get", "hooks"}, lines: 4,
			want: []string{"NAME ", "STATE ", "STEP ", "ATTEMPT ", "ASSIGNEE ", "AGE", "running-example     step_running   implement   1         agent-1    ", "completed-example   completed"}},
		{name: "wide", args: []string{"get", "hk", "-o", "wide"}, lines: 4,
			want: []string{"HEARTBEAT", "GOAL", "Add pagination to the list endpoint."}},
		{name: "short name and two names", args: []string{"get", "hk", "running-example", "completed-example"}, lines: 3,
			want: []string{"running-example", "completed-example"}},
		{name: "TYPE/NAME", args: []string{"get", "hook/running-example", "hooks.agents.tether.dev/completed-example", "--no-headers"}, lines: 2},
		{name: "no headers", args: []string{"get", "hooks", "--no-headers"}, lines: 3},
		{name: "show labels", args: []string{"get", "hooks", "--show-labels"}, want: []string{"LABELS"}},
		{name: "sort by", args: []string{"get", "hooks", "--sort-by", ".status.state", "-o", "name"},
			check: func(t *testing.T, out string) {
				// completed < initializing < step_running.
				if got := strings.Fields(out); len(got) != 3 || got[0] != "hook.agents.tether.dev/completed-example" || got[2] != "hook.agents.tether.dev/running-example" {
					t.Errorf("sorted names %q", got)
				}
			}},
		{name: "label selector", args: []string{"get", "hooks", "-l", "nosuch=label", "-o", "name"}, lines: 0},
		{name: "field selector", args: []string{"get", "hooks", "--field-selector", "metadata.name=completed-example", "-o", "name"},
			want: []string{"hook.agents.tether.dev/completed-example\n"}, lines: 1},
		{name: "all namespaces", args: []string{"get", "hooks", "-A"}, want: []string{"NAMESPACE", "default     running-example"}, lines: 4},
		{name: "all", args: []string{"get", "all"}, want: []string{"hook.agents.tether.dev/running-example"}},
		{name: "yaml", args: []string{"get", "hooks", "-o", "yaml"}, check: func(t *testing.T, out string) {
			if names := listNames(t, out, func(b []byte, v interface{}) error { return yaml.Unmarshal(b, v) }); len(names) != 3 {
				t.Errorf("names %v", names)
			}
		}},
		{name: "json", args: []string{"get", "hooks", "-o", "json"}, check: func(t *testing.T, out string) {
			if names := listNames(t, out, json.Unmarshal); len(names) != 3 {
				t.Errorf("names %v", names)
			}
		}},
		{name: "one object as yaml", args: []string{"get", "hk", "running-example", "-o", "yaml"},
			want: []string{"kind: Hook\n", "name: running-example\n", "state: step_running\n"}},
		{name: "name", args: []string{"get", "hooks", "-o", "name"}, lines: 3, want: []string{"hook.agents.tether.dev/init-example\n"}},
		{name: "jsonpath", args: []string{"get", "hooks", "-o", "jsonpath={.items[*].metadata.name}"},
			want: []string{"completed-example init-example running-example"}},
		{name: "jsonpath-file", args: []string{"get", "hooks", "-o", "jsonpath-file=" + jsonpathFile},
			want: []string{"completed-example=completed\n", "running-example=step_running\n"}},
		{name: "custom-columns", args: []string{"get", "hooks", "-o", "custom-columns=NAME:.metadata.name,GOAL:.spec.goal"},
			want: []string{"NAME                GOAL\n", "running-example     Add pagination to the list endpoint.\n"}},
		{name: "go-template", args: []string{"get", "hooks", "-o", "go-template={{range .items}}{{.metadata.name}};{{end}}"},
			want: []string{"completed-example;init-example;running-example;"}},
	}
}

func runGetCases(t *testing.T, base []string) {
	for _, tc := range getCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := run(t, append(append([]string{}, base...), tc.args...)...)
			if code != 0 {
				t.Fatalf("tether %s: exit %d\n%s", strings.Join(tc.args, " "), code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.lines >= 0 && (tc.lines > 0 || tc.want == nil && tc.check == nil) {
				if got := strings.Count(out, "\n"); got != tc.lines {
					t.Errorf("%d lines, want %d:\n%s", got, tc.lines, out)
				}
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// errorCase is a get that must fail with the documented exit code and
// kubectl's message.
var errorCases = []struct {
	name   string
	args   []string
	code   int
	stderr string
	stdout string
}{
	{"unknown type", []string{"get", "nosuchtype"}, 1, "error: the server doesn't have a resource type \"nosuchtype\"\n", ""},
	{"unknown name", []string{"get", "hook", "nosuch"}, 2, "Error from server (NotFound): hooks.agents.tether.dev \"nosuch\" not found\n", ""},
	{"one of two names unknown", []string{"get", "hk", "nosuch", "running-example", "--no-headers", "-o", "name"}, 2,
		"Error from server (NotFound): hooks.agents.tether.dev \"nosuch\" not found\n", "hook.agents.tether.dev/running-example\n"},
	{"bad output", []string{"get", "hooks", "-o", "xml"}, 1, "error: unable to match a printer suitable for the output format \"xml\"", ""},
	{"bad field selector", []string{"get", "hooks", "--field-selector", "spec.goal=x"}, 1, "field label not supported: spec.goal", ""},
}

func runErrorCases(t *testing.T, base []string) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := run(t, append(append([]string{}, base...), tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) || out != tc.stdout {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q", code, out, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

func TestGetOnTheLocalStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	store := openStore(t, dir)
	seed(t, store.Client(), fixtures...)
	base := []string{"--store", dir}
	runGetCases(t, base)
	runErrorCases(t, base)

	out, stderr, code := run(t, "--store", dir, "get", "hooks", "-n", "other")
	if code != 0 || out != "" || stderr != "No resources found in other namespace.\n" {
		t.Errorf("empty namespace: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestGetOnACluster(t *testing.T) {
	env := testenv.Start(t)
	seed(t, env.Client, fixtures...)
	base := []string{"--cluster", "--kubeconfig", env.Kubeconfig}
	runGetCases(t, base)
	runErrorCases(t, base)

	// The default table and -o wide are kubectl's, byte for byte. Ages are
	// rendered at print time, so tether runs between two kubectl runs and
	// must equal one of them; a trio that spans more than a second of ages
	// is taken again.
	kubectlGet := func(args []string) string {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", env.Kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, args := range [][]string{{"get", "hooks"}, {"get", "hooks", "-o", "wide"}, {"get", "hooks", "-A", "--show-labels"}, {"get", "hk", "running-example", "completed-example"}} {
		var tether, kubectl string
		for range 5 {
			before := kubectlGet(args)
			tether, _, _ = run(t, append(append([]string{}, base...), args...)...)
			kubectl = kubectlGet(args)
			if tether == before {
				kubectl = before
			}
			if tether == kubectl {
				break
			}
		}
		if tether != kubectl {
			t.Errorf("tether %s differs from kubectl:\n--- tether\n%s--- kubectl\n%s", strings.Join(args, " "), tether, kubectl)
		}
	}
}

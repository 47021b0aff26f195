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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

func newScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := agentsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

const validHook = `apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: a
spec:
  goal: g
  steps:
  - name: one
    validate:
    - command: ["true"]
`

func TestDecode(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantNames []string
		wantLine  int
		wantField string
		wantErr   string
	}{
		{name: "one hook", input: validHook, wantNames: []string{"a"}},
		{
			name:      "several documents and empty ones",
			input:     "---\n" + validHook + "---\n---\n" + strings.Replace(validHook, "name: a", "name: b", 1),
			wantNames: []string{"a", "b"},
		},
		{name: "empty input", input: "", wantNames: nil},
		{
			name:      "unknown field in a list item names field and line",
			input:     strings.Replace(validHook, "  - name: one\n", "  - name: one\n    retries: 3\n", 1),
			wantLine:  9,
			wantField: "spec.steps[0].retries",
			wantErr:   `unknown field "spec.steps[0].retries"`,
		},
		{
			name:      "unknown top-level field",
			input:     validHook + "extra: 1\n",
			wantLine:  11,
			wantField: "extra",
			wantErr:   `unknown field "extra"`,
		},
		{
			name:      "wrong type",
			input:     strings.Replace(validHook, "  goal: g\n", "  goal: g\n  maxAttempts: many\n", 1),
			wantLine:  7,
			wantField: "spec.maxAttempts",
			wantErr:   "invalid value: string",
		},
		{
			name:      "missing kind",
			input:     strings.Replace(validHook, "kind: Hook\n", "", 1),
			wantLine:  1,
			wantField: "kind",
			wantErr:   "required string field is missing",
		},
		{
			name:      "unknown kind",
			input:     strings.Replace(validHook, "kind: Hook", "kind: Task", 1),
			wantLine:  2,
			wantField: "kind",
			wantErr:   `unknown kind "Task"`,
		},
		{
			name:      "wrong version",
			input:     strings.Replace(validHook, "v1alpha1", "v1", 1),
			wantLine:  1,
			wantField: "apiVersion",
			wantErr:   "use agents.tether.dev/v1alpha1",
		},
		{
			name:     "syntax error",
			input:    "apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nspec:\n  goal: \"unterminated\n",
			wantLine: 4,
			wantErr:  "found unexpected end of stream",
		},
		{
			name:      "a namespace given as a path",
			input:     strings.Replace(validHook, "  name: a\n", "  name: a\n  namespace: ../x\n", 1),
			wantErr:   `invalid namespace name "../x"`,
			wantLine:  5,
			wantField: "metadata.namespace",
		},
		{
			name:      "a namespace that is not a DNS label",
			input:     strings.Replace(validHook, "  name: a\n", "  name: a\n  namespace: Team.A\n", 1),
			wantErr:   `invalid namespace name "Team.A"`,
			wantLine:  5,
			wantField: "metadata.namespace",
		},
		{
			name:      "duplicate key",
			input:     validHook + "kind: Hook\n",
			wantErr:   "duplicate field",
			wantLine:  11,
			wantField: "kind",
		},
		{
			name:    "a list is not an object",
			input:   "- a\n- b\n",
			wantErr: "must be a mapping",
		},
	}
	scheme := newScheme(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := manifest.Decode("task.yaml", []byte(tt.input), scheme)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				var names []string
				for _, d := range docs {
					names = append(names, d.Object.GetName())
					if d.Object.GetObjectKind().GroupVersionKind().Kind != "Hook" {
						t.Errorf("document %d: kind not set on the object", d.Index)
					}
				}
				if strings.Join(names, ",") != strings.Join(tt.wantNames, ",") {
					t.Fatalf("names = %v, want %v", names, tt.wantNames)
				}
				return
			}
			if err == nil {
				t.Fatalf("expected an error containing %q, got none", tt.wantErr)
			}
			if docs != nil {
				t.Errorf("documents returned alongside an error: %v", docs)
			}
			var derr *manifest.Error
			if !errors.As(err, &derr) {
				t.Fatalf("error %v is not a *manifest.Error", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "task.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
			if tt.wantLine != 0 && derr.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", derr.Line, tt.wantLine, err)
			}
			if derr.Field != tt.wantField {
				t.Errorf("field = %q, want %q", derr.Field, tt.wantField)
			}
		})
	}
}

// TestFixtures decodes every YAML file in config/samples and testdata
// strictly, Kubernetes' own kinds (the agent's RBAC sample) included. The
// deliberately corrupted fixture must fail, naming its file and line.
func TestFixtures(t *testing.T) {
	scheme := newScheme(t)
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, root := range []string{"../../../config/samples", "../../../testdata"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".yaml") && d.Name() != "kustomization.yaml" {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 11 {
		t.Fatalf("found only %d fixture files: %v", len(files), files)
	}
	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			docs, err := manifest.Decode(path, data, scheme)
			if filepath.Base(path) == "corrupted.yaml" {
				if err == nil {
					t.Fatal("the corrupted fixture decoded without error")
				}
				var derr *manifest.Error
				if !errors.As(err, &derr) || derr.Line == 0 || derr.Source != path {
					t.Fatalf("error %v does not name the file and line", err)
				}
				if !strings.HasPrefix(err.Error(), path+":") {
					t.Fatalf("error %q does not start with %s:LINE", err, path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) == 0 {
				t.Fatal("no documents")
			}
			for _, d := range docs {
				if d.Object.GetName() == "" {
					t.Errorf("document %d has no metadata.name", d.Index)
				}
			}
		})
	}
}

// TestDecodeJSON parses a .json source as strict JSON, with the lines of the
// file in every error.
func TestDecodeJSON(t *testing.T) {
	const hook = `{
  "apiVersion": "agents.tether.dev/v1alpha1",
  "kind": "Hook",
  "metadata": {"name": "NAME"},
  "spec": {
    "goal": "g",
    "staleAfter": "STALE",
    "steps": [{"name": "one"}]
  }
}
`
	doc := func(name, stale string) string {
		return strings.NewReplacer("NAME", name, "STALE", stale).Replace(hook)
	}
	tests := []struct {
		name, input, wantErr, wantField string
		wantLine                        int
		wantNames                       []string
	}{
		{name: "one object", input: doc("a", "5m"), wantNames: []string{"a"}},
		{name: "a stream of objects", input: doc("a", "5m") + doc("b", "1m"), wantNames: []string{"a", "b"}},
		{name: "empty", input: "", wantNames: nil},
		{name: "trailing comma", input: strings.Replace(doc("a", "5m"), `"name": "one"}]`, `"name": "one"},]`, 1), wantLine: 8, wantErr: "invalid JSON: invalid character ']'"},
		{name: "trailing comma in the second object", input: doc("a", "5m") + strings.Replace(doc("b", "5m"), `"g",`, `"g",,`, 1), wantLine: 16, wantErr: "invalid JSON"},
		{name: "comment", input: "# a comment\n" + doc("a", "5m"), wantLine: 1, wantErr: "invalid JSON"},
		{name: "YAML is not JSON", input: "apiVersion: agents.tether.dev/v1alpha1\n", wantLine: 1, wantErr: "invalid JSON"},
		{name: "truncated", input: doc("a", "5m")[:40], wantLine: 2, wantErr: "unexpected end of JSON input"},
		{name: "bad duration in the second object", input: doc("a", "5m") + doc("b", "2562048h"), wantLine: 17, wantField: "spec.staleAfter", wantErr: "invalid duration"},
		{name: "duplicate key", input: strings.Replace(doc("a", "5m"), `"goal": "g",`, `"goal": "g", "goal": "h",`, 1), wantLine: 6, wantField: "spec.goal", wantErr: "duplicate field"},
	}
	scheme := newScheme(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := manifest.Decode("task.json", []byte(tt.input), scheme)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, d := range docs {
					names = append(names, d.Object.GetName())
				}
				if strings.Join(names, ",") != strings.Join(tt.wantNames, ",") {
					t.Fatalf("names %v, want %v", names, tt.wantNames)
				}
				return
			}
			var derr *manifest.Error
			if !errors.As(err, &derr) {
				t.Fatalf("error %v is not a *manifest.Error", err)
			}
			if derr.Line != tt.wantLine || derr.Field != tt.wantField || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v (line %d, field %q); want line %d, field %q, containing %q", err, derr.Line, derr.Field, tt.wantLine, tt.wantField, tt.wantErr)
			}
		})
	}
	if _, err := manifest.Decode("task.yaml", []byte(strings.Replace(doc("a", "5m"), `"one"}]`, `"one"},]`, 1)), scheme); err != nil {
		t.Errorf("YAML flow syntax with a trailing comma, in a .yaml file, was refused: %v", err)
	}
}

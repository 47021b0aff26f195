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

package crdschema_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/store/crdschema"
)

var (
	hookGVK       = schema.GroupVersionKind{Group: "agents.tether.dev", Version: "v1alpha1", Kind: "Hook"}
	workerGVK     = schema.GroupVersionKind{Group: "agents.tether.dev", Version: "v1alpha1", Kind: "Worker"}
	checkpointGVK = schema.GroupVersionKind{Group: "agents.tether.dev", Version: "v1alpha1", Kind: "Checkpoint"}
)

const (
	hookYAML = `
apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata: {name: fix-vet, namespace: default}
spec:
  goal: Make go vet clean.
  steps:
  - name: vet
    validate:
    - command: [go, vet, ./...]
`
	workerYAML = `
apiVersion: agents.tether.dev/v1alpha1
kind: Worker
metadata: {name: w1, namespace: default}
spec:
  command: [sleep, "1"]
`
	checkpointYAML = `
apiVersion: agents.tether.dev/v1alpha1
kind: Checkpoint
metadata: {name: cp1, namespace: default}
spec: {hookName: fix-vet, trigger: manual, description: first}
`
	// storedMeta is the system metadata of a stored object, for updates.
	storedMeta = `{"resourceVersion": "1", "uid": "6b1e1c39-5b5e-4f0c-9f53-1b0c2d8e7a11", "generation": 1, "creationTimestamp": "2026-01-02T03:04:05Z"}`
)

var validator = sync.OnceValues(func() (*crdschema.Validator, error) {
	crds, err := crd.Load()
	if err != nil {
		return nil, err
	}
	return crdschema.New(crds)
})

func newValidator(t *testing.T) *crdschema.Validator {
	t.Helper()
	v, err := validator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// decode parses YAML the way the API server decodes JSON: integers become int64.
func decode(t *testing.T, y string) map[string]interface{} {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]interface{}{}
	if err := utiljson.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// set sets a field given by dotted path to a YAML value.
func set(path, value string) func(t *testing.T, m map[string]interface{}) {
	return func(t *testing.T, m map[string]interface{}) {
		t.Helper()
		v := decode(t, `{"v": `+value+`}`)["v"]
		if err := unstructured.SetNestedField(m, v, strings.Split(path, ".")...); err != nil {
			t.Fatal(err)
		}
	}
}

func unset(path string) func(t *testing.T, m map[string]interface{}) {
	return func(_ *testing.T, m map[string]interface{}) {
		unstructured.RemoveNestedField(m, strings.Split(path, ".")...)
	}
}

// admit is what a store does to a request body: prune, then default.
func admit(t *testing.T, v *crdschema.Validator, gvk schema.GroupVersionKind, obj map[string]interface{}) {
	t.Helper()
	v.Prune(gvk, obj)
	if err := v.Default(gvk, obj); err != nil {
		t.Fatal(err)
	}
}

// wantErr matches a field.Error by path, type and a substring of its detail.
type wantErr struct {
	field  string
	typ    field.ErrorType
	detail string
}

// notChecked is the error the API server adds when a blocking schema error
// keeps it from running the CEL rules.
var notChecked = wantErr{"<nil>", field.ErrorTypeInvalid, "some validation rules were not checked because the object was invalid"}

func (w wantErr) matches(e *field.Error) bool {
	return e.Field == w.field && e.Type == w.typ && strings.Contains(e.Detail, w.detail)
}

// checkErrs requires every error to be wanted and every wanted error to occur.
func checkErrs(t *testing.T, got field.ErrorList, want []wantErr) {
	t.Helper()
	for _, e := range got {
		if !slices.ContainsFunc(want, func(w wantErr) bool { return w.matches(e) }) {
			t.Errorf("unexpected error: %s %s: %s", e.Type, e.Field, e.Detail)
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, w.matches) {
			t.Errorf("missing error %s %s containing %q; got %v", w.typ, w.field, w.detail, got)
		}
	}
}

func TestHas(t *testing.T) {
	v := newValidator(t)
	for _, gvk := range []schema.GroupVersionKind{hookGVK, workerGVK, checkpointGVK} {
		if !v.Has(gvk) {
			t.Errorf("Has(%s) = false", gvk)
		}
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "agents.tether.dev", Version: "v1", Kind: "Hook"},
		{Group: "agents.tether.dev", Version: "v1alpha1", Kind: "HookList"},
		{Group: "", Version: "v1", Kind: "ConfigMap"},
	} {
		if v.Has(gvk) {
			t.Errorf("Has(%s) = true", gvk)
		}
	}
}

func TestDefault(t *testing.T) {
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		yaml   string
		mutate func(*testing.T, map[string]interface{})
		want   map[string]interface{} // dotted path -> value; "[0]" indexes a list
	}{
		{
			name: "hook",
			gvk:  hookGVK,
			yaml: hookYAML,
			want: map[string]interface{}{
				"spec.maxAttempts":                  int64(3),
				"spec.steps[0].validate[0].timeout": 10 * time.Minute,
			},
		},
		{
			name:   "hook keeps set values",
			gvk:    hookGVK,
			yaml:   hookYAML,
			mutate: set("spec.maxAttempts", "7"),
			want:   map[string]interface{}{"spec.maxAttempts": int64(7), "spec.steps[0].validate[0].timeout": 10 * time.Minute},
		},
		{
			name:   "null is replaced by the default",
			gvk:    hookGVK,
			yaml:   hookYAML,
			mutate: set("spec.maxAttempts", "null"),
			want:   map[string]interface{}{"spec.maxAttempts": int64(3)},
		},
		{
			name: "worker",
			gvk:  workerGVK,
			yaml: workerYAML,
			want: map[string]interface{}{
				"spec.restart.auto":         false,
				"spec.restart.maxCrashes":   int64(3),
				"spec.restart.window":       10 * time.Minute,
				"spec.clearAssigneeOnCrash": true,
				"spec.heartbeatTimeout":     2 * time.Minute,
			},
		},
		{
			name:   "worker partial restart",
			gvk:    workerGVK,
			yaml:   workerYAML,
			mutate: set("spec.restart", `{"auto": true}`),
			want: map[string]interface{}{
				"spec.restart.auto":       true,
				"spec.restart.maxCrashes": int64(3),
				"spec.restart.window":     10 * time.Minute,
			},
		},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.yaml)
			if tt.mutate != nil {
				tt.mutate(t, obj)
			}
			admit(t, v, tt.gvk, obj)
			for path, want := range tt.want {
				got := at(obj, path)
				if s, ok := got.(string); ok {
					if _, isDuration := want.(time.Duration); isDuration {
						// A duration default may be spelt "5m" or "5m0s".
						d, err := time.ParseDuration(s)
						if err != nil {
							t.Errorf("%s = %q: %v", path, s, err)
						}
						got = d
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
			if errs := v.ValidateCreate(context.Background(), tt.gvk, obj); len(errs) > 0 {
				t.Errorf("defaulted object is invalid: %v", errs)
			}
		})
	}
	if err := v.Default(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, map[string]interface{}{}); err == nil {
		t.Error("Default of an unserved kind: no error")
	}
}

// at returns the value at a dotted path whose parts may end in [i].
func at(obj interface{}, path string) interface{} {
	cur := obj
	for _, part := range strings.Split(path, ".") {
		key, indexes, _ := strings.Cut(part, "[")
		m, ok := cur.(map[string]interface{})
		if !ok {
			return nil
		}
		cur = m[key]
		if indexes == "" {
			continue
		}
		for _, idx := range strings.Split(strings.TrimSuffix(indexes, "]"), "][") {
			i, err := strconv.Atoi(idx)
			l, ok := cur.([]interface{})
			if err != nil || !ok || i >= len(l) {
				return nil
			}
			cur = l[i]
		}
	}
	return cur
}

func TestValidateCreate(t *testing.T) {
	manySteps := make([]string, 65)
	for i := range manySteps {
		manySteps[i] = fmt.Sprintf(`{"name": "s%d"}`, i)
	}
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		yaml   string
		mutate func(*testing.T, map[string]interface{})
		want   []wantErr
	}{
		{name: "valid hook", gvk: hookGVK, yaml: hookYAML},
		{name: "valid worker", gvk: workerGVK, yaml: workerYAML},
		{name: "valid checkpoint", gvk: checkpointGVK, yaml: checkpointYAML},
		{
			name: "enum", gvk: hookGVK, yaml: hookYAML,
			mutate: set("status", `{"state": "bogus"}`),
			want: []wantErr{
				{"status.state", field.ErrorTypeNotSupported, `supported values: "initializing", "step_pending"`},
				notChecked,
			},
		},
		{
			name: "enum checkpoint trigger", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("spec.trigger", `"sometimes"`),
			want:   []wantErr{{"spec.trigger", field.ErrorTypeNotSupported, `"git_commit"`}, notChecked},
		},
		{
			name: "pattern", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", `[{"name": "Bad_Name"}]`),
			want:   []wantErr{{"spec.steps[0].name", field.ErrorTypeInvalid, "spec.steps[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"}},
		},
		{
			name: "duration pattern", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.staleAfter", `"5 minutes"`),
			want:   []wantErr{{"spec.staleAfter", field.ErrorTypeInvalid, "should match"}},
		},
		{
			name: "validate program empty", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", `[{"name": "vet", "validate": [{"command": ["", "vet"]}]}]`),
			want:   []wantErr{{"spec.steps[0].validate[0].command", field.ErrorTypeInvalid, "the program (the first element) may not be empty"}},
		},
		{
			name: "validate empty argument after the program", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", `[{"name": "vet", "validate": [{"command": ["grep", "", "f"]}]}]`),
		},
		{
			name: "worker program empty", gvk: workerGVK, yaml: workerYAML,
			mutate: set("spec.command", `[""]`),
			want:   []wantErr{{"spec.command", field.ErrorTypeInvalid, "the program (the first element) may not be empty"}},
		},
		{
			name: "validate command empty list", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", `[{"name": "vet", "validate": [{"command": []}]}]`),
			want:   []wantErr{{"spec.steps[0].validate[0].command", field.ErrorTypeInvalid, "should have at least 1 items"}},
		},
		{
			name: "minimum", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.maxAttempts", "0"),
			want:   []wantErr{{"spec.maxAttempts", field.ErrorTypeInvalid, "should be greater than or equal to 1"}},
		},
		{
			name: "maximum", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.maxCheckpoints", "1001"),
			want:   []wantErr{{"spec.maxCheckpoints", field.ErrorTypeInvalid, "should be less than or equal to 1000"}},
		},
		{
			name: "required", gvk: hookGVK, yaml: hookYAML,
			mutate: unset("spec.goal"),
			want:   []wantErr{{"spec.goal", field.ErrorTypeRequired, ""}, notChecked},
		},
		{
			name: "required in list item", gvk: workerGVK, yaml: workerYAML,
			mutate: func(t *testing.T, m map[string]interface{}) {
				unset("spec.command")(t, m)
				set("spec.adopt", `{}`)(t, m)
			},
			want: []wantErr{{"spec.adopt.pid", field.ErrorTypeRequired, ""}, notChecked},
		},
		{
			name: "maxItems", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", "["+strings.Join(manySteps, ",")+"]"),
			want:   []wantErr{{"spec.steps", field.ErrorTypeTooMany, "must have at most 64 items"}, notChecked},
		},
		{
			name: "minItems", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", "[]"),
			want:   []wantErr{{"spec.steps", field.ErrorTypeInvalid, "should have at least 1 items"}},
		},
		{
			name: "maxLength", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.goal", `"`+strings.Repeat("g", 2049)+`"`),
			want:   []wantErr{{"spec.goal", field.ErrorTypeTooLong, "may not be more than 2048 bytes"}, notChecked},
		},
		{
			name: "wrong type", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.maxAttempts", `"three"`),
			want:   []wantErr{{"spec.maxAttempts", field.ErrorTypeTypeInvalid, `spec.maxAttempts in body must be of type integer: "string"`}, notChecked},
		},
		{
			name: "wrong type of object", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", `"vet"`),
			want:   []wantErr{{"spec.steps", field.ErrorTypeTypeInvalid, "must be of type array"}, notChecked},
		},
		{
			name: "list map key duplicated", gvk: workerGVK, yaml: workerYAML,
			mutate: set("spec.env", `[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]`),
			want:   []wantErr{{"spec.env[1]", field.ErrorTypeDuplicate, ""}},
		},
		{
			name: "env name pattern", gvk: workerGVK, yaml: workerYAML,
			mutate: set("spec.env", `[{"name": "1A"}]`),
			want:   []wantErr{{"spec.env[0].name", field.ErrorTypeInvalid, "should match"}},
		},
		{
			name: "CEL unique step names", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", `[{"name": "vet"}, {"name": "test"}, {"name": "vet"}]`),
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "step names must be unique"}},
		},
		{
			name: "CEL command with adopt", gvk: workerGVK, yaml: workerYAML,
			mutate: set("spec.adopt", `{"pid": 42}`),
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "command, adopt and template are mutually exclusive"}},
		},
		{
			name: "CEL tmux without command", gvk: workerGVK, yaml: workerYAML,
			mutate: func(t *testing.T, m map[string]interface{}) {
				unset("spec.command")(t, m)
				set("spec.adopt", `{"pid": 42}`)(t, m)
				set("spec.tmux", `{"session": "s"}`)(t, m)
			},
			want: []wantErr{{"spec", field.ErrorTypeInvalid, "tmux requires command"}},
		},
		{
			name: "schemaless template", gvk: workerGVK, yaml: workerYAML,
			mutate: func(t *testing.T, m map[string]interface{}) {
				unset("spec.command")(t, m)
				set("spec.template", `{"spec": {"containers": [{"name": "agent", "image": "x", "anything": {"goes": 1}}]}}`)(t, m)
			},
		},
		{
			name: "wrong kind", gvk: hookGVK, yaml: hookYAML,
			mutate: set("kind", `"Worker"`),
			want:   []wantErr{{"kind", field.ErrorTypeInvalid, "must be Hook"}},
		},
		{
			name: "wrong apiVersion", gvk: hookGVK, yaml: hookYAML,
			mutate: set("apiVersion", `"agents.tether.dev/v1"`),
			want:   []wantErr{{"apiVersion", field.ErrorTypeInvalid, "must be agents.tether.dev/v1alpha1"}},
		},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.yaml)
			if tt.mutate != nil {
				tt.mutate(t, obj)
			}
			admit(t, v, tt.gvk, obj)
			checkErrs(t, v.ValidateCreate(context.Background(), tt.gvk, obj), tt.want)
		})
	}
}

func TestValidateCreateMetadata(t *testing.T) {
	bigAnnotation := `{"big": "` + strings.Repeat("a", 256*1024) + `"}`
	tests := []struct {
		name     string
		metadata string
		want     []wantErr
	}{
		{"valid", `{"name": "a.b-c", "namespace": "default", "labels": {"app.kubernetes.io/name": "x"}, "finalizers": ["tether.dev/cleanup"]}`, nil},
		{"longest name", `{"name": "` + strings.Repeat("a", 253) + `", "namespace": "default"}`, nil},
		{"upper case", `{"name": "Bad", "namespace": "default"}`, []wantErr{{"metadata.name", field.ErrorTypeInvalid, "a lowercase RFC 1123 subdomain"}}},
		{"slash", `{"name": "a/b", "namespace": "default"}`, []wantErr{{"metadata.name", field.ErrorTypeInvalid, "a lowercase RFC 1123 subdomain"}}},
		{"dot dot", `{"name": "..", "namespace": "default"}`, []wantErr{{"metadata.name", field.ErrorTypeInvalid, "a lowercase RFC 1123 subdomain"}}},
		{"empty", `{"name": "", "namespace": "default"}`, []wantErr{{"metadata.name", field.ErrorTypeRequired, "name or generateName is required"}, notChecked}},
		{"no name", `{"namespace": "default"}`, []wantErr{{"metadata.name", field.ErrorTypeRequired, "name or generateName is required"}, notChecked}},
		{"too long", `{"name": "` + strings.Repeat("a", 254) + `", "namespace": "default"}`, []wantErr{{"metadata.name", field.ErrorTypeInvalid, "must be no more than 253 characters"}}},
		{"no namespace", `{"name": "a"}`, []wantErr{{"metadata.namespace", field.ErrorTypeRequired, ""}, notChecked}},
		{"namespace with dots", `{"name": "a", "namespace": "a.b"}`, []wantErr{{"metadata.namespace", field.ErrorTypeInvalid, "must not contain dots"}}},
		{"namespace not a label", `{"name": "a", "namespace": "Bad"}`, []wantErr{{"metadata.namespace", field.ErrorTypeInvalid, "a lowercase RFC 1123 label"}}},
		{"label key", `{"name": "a", "namespace": "default", "labels": {"bad key": "x"}}`, []wantErr{{"metadata.labels", field.ErrorTypeInvalid, "name part must consist of alphanumeric characters"}}},
		{"label value", `{"name": "a", "namespace": "default", "labels": {"k": "bad value"}}`, []wantErr{{"metadata.labels", field.ErrorTypeInvalid, "a valid label must be an empty string or consist of alphanumeric"}}},
		{"annotation key", `{"name": "a", "namespace": "default", "annotations": {"bad key": "x"}}`, []wantErr{{"metadata.annotations", field.ErrorTypeInvalid, "name part must consist of alphanumeric characters"}}},
		{"annotations size", `{"name": "a", "namespace": "default", "annotations": ` + bigAnnotation + `}`, []wantErr{{"metadata.annotations", field.ErrorTypeTooLong, "may not be more than 262144 bytes"}, notChecked}},
		{"finalizer", `{"name": "a", "namespace": "default", "finalizers": ["bad finalizer"]}`, []wantErr{{"metadata.finalizers", field.ErrorTypeInvalid, "name part must consist of alphanumeric characters"}}},
		// kube-apiserver fails to decode this (400); Prune leaves it and validation reports it.
		{"labels not a map", `{"name": "a", "namespace": "default", "labels": "x"}`, []wantErr{{"metadata", field.ErrorTypeInvalid, "cannot restore map from string"}}},
		{"owner reference", `{"name": "a", "namespace": "default", "ownerReferences": [{"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Hook", "name": "h", "uid": ""}]}`, []wantErr{{"metadata.ownerReferences[0].uid", field.ErrorTypeRequired, "must not be empty"}, notChecked}},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, checkpointYAML)
			set("metadata", tt.metadata)(t, obj)
			admit(t, v, checkpointGVK, obj)
			checkErrs(t, v.ValidateCreate(context.Background(), checkpointGVK, obj), tt.want)
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		yaml   string
		old    func(*testing.T, map[string]interface{}) // makes the stored object
		mutate func(*testing.T, map[string]interface{})
		want   []wantErr
	}{
		{
			name: "checkpoint spec change", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("spec.description", `"rewritten history"`),
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "spec is immutable"}},
		},
		{
			name: "checkpoint spec field added", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("spec.step", `"vet"`),
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "spec is immutable"}},
		},
		{name: "checkpoint label change", gvk: checkpointGVK, yaml: checkpointYAML, mutate: set("metadata.labels", `{"tether.dev/hook": "fix-vet"}`)},
		{name: "checkpoint status change", gvk: checkpointGVK, yaml: checkpointYAML, mutate: set("status", `{"observedGeneration": 1}`)},
		{name: "no change", gvk: hookGVK, yaml: hookYAML},
		{name: "hook spec change", gvk: hookGVK, yaml: hookYAML, mutate: set("spec.goal", `"Another goal."`)},
		{
			name: "CEL on update", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.steps", `[{"name": "vet"}, {"name": "vet"}]`),
			want:   []wantErr{{"spec", field.ErrorTypeInvalid, "step names must be unique"}},
		},
		{
			name: "schema on update", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.maxAttempts", "0"),
			want:   []wantErr{{"spec.maxAttempts", field.ErrorTypeInvalid, "should be greater than or equal to 1"}},
		},
		{
			name: "ratcheting keeps an unchanged invalid value", gvk: hookGVK, yaml: hookYAML,
			old:    set("spec.maxAttempts", "0"),
			mutate: set("metadata.labels", `{"a": "b"}`),
		},
		{
			name: "ratcheting checks a changed invalid value", gvk: hookGVK, yaml: hookYAML,
			old:    set("spec.maxAttempts", "0"),
			mutate: set("spec.maxAttempts", "-1"),
			want:   []wantErr{{"spec.maxAttempts", field.ErrorTypeInvalid, "should be greater than or equal to 1"}},
		},
		{
			name: "name change", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("metadata.name", `"cp2"`),
			want:   []wantErr{{"metadata.name", field.ErrorTypeInvalid, "field is immutable"}},
		},
		{
			name: "namespace change", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("metadata.namespace", `"other"`),
			want:   []wantErr{{"metadata.namespace", field.ErrorTypeInvalid, "field is immutable"}},
		},
		{
			name: "uid change", gvk: hookGVK, yaml: hookYAML,
			mutate: set("metadata.uid", `"0e5a1b1e-0000-4000-8000-000000000000"`),
			want:   []wantErr{{"metadata.uid", field.ErrorTypeInvalid, "field is immutable"}},
		},
		{
			name: "creationTimestamp change", gvk: hookGVK, yaml: hookYAML,
			mutate: set("metadata.creationTimestamp", `"2026-02-02T03:04:05Z"`),
			want:   []wantErr{{"metadata.creationTimestamp", field.ErrorTypeInvalid, "field is immutable"}},
		},
		{
			name: "no resourceVersion", gvk: hookGVK, yaml: hookYAML,
			mutate: unset("metadata.resourceVersion"),
			want:   []wantErr{{"metadata.resourceVersion", field.ErrorTypeInvalid, "must be specified for an update"}},
		},
		{
			name: "generation decremented", gvk: hookGVK, yaml: hookYAML,
			mutate: set("metadata.generation", "0"),
			want:   []wantErr{{"metadata.generation", field.ErrorTypeInvalid, "must not be decremented"}},
		},
		{
			name: "finalizer added while deleting", gvk: hookGVK, yaml: hookYAML,
			old: func(t *testing.T, m map[string]interface{}) {
				set("metadata.deletionTimestamp", `"2026-01-03T00:00:00Z"`)(t, m)
				set("metadata.finalizers", `["tether.dev/a"]`)(t, m)
			},
			mutate: set("metadata.finalizers", `["tether.dev/a", "tether.dev/b"]`),
			want:   []wantErr{{"metadata.finalizers", field.ErrorTypeForbidden, `no new finalizers can be added if the object is being deleted, found new finalizers []string{"tether.dev/b"}`}},
		},
		{
			name: "invalid label on update", gvk: hookGVK, yaml: hookYAML,
			mutate: set("metadata.labels", `{"k": "bad value"}`),
			want:   []wantErr{{"metadata.labels", field.ErrorTypeInvalid, "a valid label must be"}},
		},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := decode(t, tt.yaml)
			set("metadata", withStoredMeta(t, old["metadata"]))(t, old)
			if tt.old != nil {
				tt.old(t, old)
			}
			admit(t, v, tt.gvk, old)
			obj := runtime.DeepCopyJSON(old)
			if tt.mutate != nil {
				tt.mutate(t, obj)
			}
			admit(t, v, tt.gvk, obj)
			checkErrs(t, v.ValidateUpdate(context.Background(), tt.gvk, obj, old), tt.want)
		})
	}
}

func TestValidateStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		yaml   string
		mutate func(*testing.T, map[string]interface{})
		want   []wantErr
	}{
		{
			name: "checkpoint status", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("status", `{"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True", "reason": "Restorable", "message": "", "lastTransitionTime": "2026-01-02T03:04:06Z"}]}`),
		},
		{name: "hook status", gvk: hookGVK, yaml: hookYAML, mutate: set("status", `{"state": "step_running", "currentStep": {"index": 0, "name": "vet", "attempt": 1}}`)},
		{name: "status removed", gvk: hookGVK, yaml: hookYAML, mutate: unset("status")},
		{
			name: "enum", gvk: hookGVK, yaml: hookYAML,
			mutate: set("status.state", `"bogus"`),
			want:   []wantErr{{"status.state", field.ErrorTypeNotSupported, `supported values: "initializing"`}, notChecked},
		},
		{
			name: "maxItems", gvk: hookGVK, yaml: hookYAML,
			mutate: set("status.history", "["+strings.Repeat(`{"time": "2026-01-02T03:04:06Z", "event": "start", "to": "step_running"},`, 100)+`{"time": "2026-01-02T03:04:06Z", "event": "start", "to": "step_running"}]`),
			want:   []wantErr{{"status.history", field.ErrorTypeTooMany, "must have at most 100 items"}, notChecked},
		},
		{
			name: "condition type duplicated", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("status.conditions", `[{"type": "Ready", "status": "True", "reason": "A", "message": "", "lastTransitionTime": "2026-01-02T03:04:06Z"}, {"type": "Ready", "status": "False", "reason": "B", "message": "", "lastTransitionTime": "2026-01-02T03:04:06Z"}]`),
			want:   []wantErr{{"status.conditions[1]", field.ErrorTypeDuplicate, ""}},
		},
		{
			name: "condition required field", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("status.conditions", `[{"type": "Ready", "status": "True", "message": "", "lastTransitionTime": "2026-01-02T03:04:06Z"}]`),
			want:   []wantErr{{"status.conditions[0].reason", field.ErrorTypeRequired, ""}, notChecked},
		},
		{
			name: "metadata still checked", gvk: checkpointGVK, yaml: checkpointYAML,
			mutate: set("metadata.uid", `"0e5a1b1e-0000-4000-8000-000000000000"`),
			want:   []wantErr{{"metadata.uid", field.ErrorTypeInvalid, "field is immutable"}},
		},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := decode(t, tt.yaml)
			set("metadata", withStoredMeta(t, old["metadata"]))(t, old)
			set("status", `{"observedGeneration": 1}`)(t, old)
			admit(t, v, tt.gvk, old)
			obj := runtime.DeepCopyJSON(old)
			tt.mutate(t, obj)
			checkErrs(t, v.ValidateStatusUpdate(context.Background(), tt.gvk, obj, old), tt.want)
		})
	}
}

// withStoredMeta returns the JSON of the metadata base with the fields of
// storedMeta, as a stored object has them.
func withStoredMeta(t *testing.T, base interface{}) string {
	t.Helper()
	m := runtime.DeepCopyJSONValue(base).(map[string]interface{})
	for k, v := range decode(t, storedMeta) {
		m[k] = v
	}
	js, err := utiljson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func TestPrune(t *testing.T) {
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		yaml   string
		mutate func(*testing.T, map[string]interface{})
		want   []string
		gone   []string // dotted paths that must be removed
		kept   []string // dotted paths that must remain
	}{
		{
			name: "unknown spec fields", gvk: hookGVK, yaml: hookYAML,
			mutate: func(t *testing.T, m map[string]interface{}) {
				set("spec.foo", `1`)(t, m)
				set("spec.steps", `[{"name": "vet", "bar": {"x": 1}}]`)(t, m)
				set("metadata.labels", `{"a": "b"}`)(t, m)
				set("metadata.annotations", `{"c": "d"}`)(t, m)
			},
			want: []string{"spec.foo", "spec.steps[0].bar"},
			gone: []string{"spec.foo", "spec.steps[0].bar"},
			kept: []string{"apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.labels.a", "metadata.annotations.c", "spec.goal", "spec.steps[0].name"},
		},
		{
			name: "unknown metadata and top-level fields", gvk: hookGVK, yaml: hookYAML,
			mutate: func(t *testing.T, m map[string]interface{}) {
				set("metadata.foo", `"x"`)(t, m)
				set("extra", `true`)(t, m)
				set("status", `{"state": "completed", "unknown": 1}`)(t, m)
			},
			want: []string{"metadata.foo", "extra", "status.unknown"},
			gone: []string{"metadata.foo", "extra", "status.unknown"},
			kept: []string{"metadata.name", "status.state"},
		},
		{
			name: "nothing unknown", gvk: checkpointGVK, yaml: checkpointYAML,
			kept: []string{"spec.hookName", "spec.trigger", "spec.description"},
		},
		{
			name: "schemaless template is kept", gvk: workerGVK, yaml: workerYAML,
			mutate: func(t *testing.T, m map[string]interface{}) {
				unset("spec.command")(t, m)
				set("spec.template", `{"metadata": {"labels": {"a": "b"}}, "spec": {"anything": {"goes": [1, 2]}}}`)(t, m)
			},
			kept: []string{"spec.template.spec.anything.goes", "spec.template.metadata.labels.a"},
		},
		{
			name: "null without default is dropped", gvk: hookGVK, yaml: hookYAML,
			mutate: set("spec.workspace", "null"),
			gone:   []string{"spec.workspace"},
		},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.yaml)
			if tt.mutate != nil {
				tt.mutate(t, obj)
			}
			got := v.Prune(tt.gvk, obj)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Prune = %q, want %q", got, tt.want)
			}
			for _, p := range tt.gone {
				if hasPath(obj, p) {
					t.Errorf("%s was not removed", p)
				}
			}
			for _, p := range tt.kept {
				if at(obj, p) == nil {
					t.Errorf("%s was removed", p)
				}
			}
			if errs := v.ValidateCreate(context.Background(), tt.gvk, obj); len(errs) > 0 {
				t.Errorf("pruned object is invalid: %v", errs)
			}
		})
	}

	obj := decode(t, hookYAML)
	if got := v.Prune(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, obj); got != nil {
		t.Errorf("Prune of an unserved kind = %q", got)
	}
}

func hasPath(obj map[string]interface{}, path string) bool {
	parts := strings.Split(path, ".")
	parent := at(obj, strings.Join(parts[:len(parts)-1], "."))
	if len(parts) == 1 {
		parent = obj
	}
	m, ok := parent.(map[string]interface{})
	if !ok {
		return false
	}
	_, ok = m[parts[len(parts)-1]]
	return ok
}

func TestToAPIError(t *testing.T) {
	v := newValidator(t)
	obj := decode(t, hookYAML)
	set("spec.steps", `[{"name": "Bad_Name"}]`)(t, obj)
	admit(t, v, hookGVK, obj)
	errs := v.ValidateCreate(context.Background(), hookGVK, obj)

	err := crdschema.ToAPIError(hookGVK, "fix-vet", errs)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("IsInvalid(%v) = false", err)
	}
	var status *apierrors.StatusError
	if !errors.As(err, &status) {
		t.Fatalf("%T is not a *StatusError", err)
	}
	s := status.ErrStatus
	if s.Reason != metav1.StatusReasonInvalid || s.Code != http.StatusUnprocessableEntity || s.Status != metav1.StatusFailure {
		t.Errorf("reason %q code %d status %q", s.Reason, s.Code, s.Status)
	}
	if s.Details == nil || s.Details.Group != "agents.tether.dev" || s.Details.Kind != "Hook" || s.Details.Name != "fix-vet" {
		t.Fatalf("details %+v", s.Details)
	}
	if len(s.Details.Causes) != 1 || s.Details.Causes[0].Field != "spec.steps[0].name" || s.Details.Causes[0].Type != metav1.CauseTypeFieldValueInvalid {
		t.Errorf("causes %+v", s.Details.Causes)
	}
	wantMsg := `Hook.agents.tether.dev "fix-vet" is invalid: spec.steps[0].name: Invalid value: "Bad_Name": spec.steps[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`
	if s.Message != wantMsg {
		t.Errorf("message\n got %s\nwant %s", s.Message, wantMsg)
	}
	if err := crdschema.ToAPIError(hookGVK, "fix-vet", nil); err != nil {
		t.Errorf("ToAPIError(nil) = %v", err)
	}
}

func TestUnservedKind(t *testing.T) {
	v := newValidator(t)
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	obj := map[string]interface{}{}
	for name, errs := range map[string]field.ErrorList{
		"create": v.ValidateCreate(context.Background(), gvk, obj),
		"update": v.ValidateUpdate(context.Background(), gvk, obj, obj),
		"status": v.ValidateStatusUpdate(context.Background(), gvk, obj, obj),
	} {
		if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal {
			t.Errorf("%s: %v", name, errs)
		}
	}
}

func TestNew(t *testing.T) {
	load := func(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
		crds, err := crd.Load()
		if err != nil {
			t.Fatal(err)
		}
		return crds
	}
	tests := []struct {
		name   string
		mutate func([]*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition
		err    string
	}{
		{name: "duplicate", mutate: func(c []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
			return append(c, c[0].DeepCopy())
		}, err: "served by more than one CRD"},
		{name: "no schema", mutate: func(c []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
			c[0].Spec.Versions[0].Schema = nil
			return c
		}, err: "no schema"},
		{name: "scale", mutate: func(c []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
			c[0].Spec.Versions[0].Subresources.Scale = &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}
			return c
		}, err: "scale subresource is not supported"},
		{name: "not served", mutate: func(c []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
			for _, d := range c {
				d.Spec.Versions[0].Served = false
			}
			return c
		}},
	}
	t.Run("a schema that does not compile", func(t *testing.T) {
		crds := load(t)
		// Checkpoint's spec: items given as an array of schemas is not structural.
		spec := crds[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Items = &apiextensionsv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextensionsv1.JSONSchemaProps{{Type: "string"}, {Type: "string"}}}
		crds[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		v, err := crdschema.New(crds)
		if err != nil {
			t.Fatalf("New compiles schemas on first use, but failed at once: %v", err)
		}
		checkpoint := decode(t, checkpointYAML)
		errs := v.ValidateCreate(context.Background(), checkpointGVK, checkpoint)
		if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal || !strings.Contains(errs[0].Error(), "not structural") {
			t.Errorf("a write of the kind whose schema does not compile: %v, want one internal error", errs)
		}
		if err := v.Default(checkpointGVK, checkpoint); err == nil {
			t.Error("Default with a schema that does not compile succeeded")
		}
		hook := decode(t, hookYAML)
		if errs := v.ValidateCreate(context.Background(), hookGVK, hook); len(errs) != 0 {
			t.Errorf("another kind: %v", errs)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := crdschema.New(tt.mutate(load(t)))
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if v.Has(hookGVK) {
					t.Error("an unserved version is registered")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

// TestConcurrent shares one Validator between goroutines, as a store does.
func TestConcurrent(t *testing.T) {
	v := newValidator(t)
	hook := decode(t, hookYAML)
	set("spec.steps", `[{"name": "a"}, {"name": "a"}]`)(t, hook)
	old := decode(t, checkpointYAML)
	set("metadata", withStoredMeta(t, old["metadata"]))(t, old)
	admit(t, v, checkpointGVK, old)
	changed := runtime.DeepCopyJSON(old)
	set("spec.description", `"changed"`)(t, changed)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				obj := runtime.DeepCopyJSON(hook)
				v.Prune(hookGVK, obj)
				if err := v.Default(hookGVK, obj); err != nil {
					t.Error(err)
					return
				}
				if errs := v.ValidateCreate(context.Background(), hookGVK, obj); len(errs) != 1 {
					t.Errorf("create: %v", errs)
					return
				}
				if errs := v.ValidateUpdate(context.Background(), checkpointGVK, changed, old); len(errs) != 1 {
					t.Errorf("update: %v", errs)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestRulesOfUnchangedValuesAreNotCompiled: an update that leaves every
// value under a CEL rule as it was (any status update) neither compiles nor
// runs the rules, as ratcheting would skip them anyway; one that changes
// such a value runs them.
func TestRulesOfUnchangedValuesAreNotCompiled(t *testing.T) {
	ctx := context.Background()
	v := newValidator(t)
	old := decode(t, hookYAML)
	set("metadata", withStoredMeta(t, old["metadata"]))(t, old)
	set("status", `{"observedGeneration": 1}`)(t, old)
	admit(t, v, hookGVK, old)
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	if v, err = crdschema.New(crds); err != nil {
		t.Fatal(err)
	}

	status := runtime.DeepCopyJSON(old)
	set("status", `{"state": "step_running", "currentStep": {"index": 0, "name": "vet", "attempt": 1}}`)(t, status)
	checkErrs(t, v.ValidateStatusUpdate(ctx, hookGVK, status, old), nil)
	labels := runtime.DeepCopyJSON(old)
	set("metadata.labels", `{"team": "a"}`)(t, labels)
	checkErrs(t, v.ValidateUpdate(ctx, hookGVK, labels, old), nil)
	if crdschema.CELCompiled(v, hookGVK) {
		t.Fatal("an update leaving spec unchanged compiled the CEL rules")
	}

	dup := runtime.DeepCopyJSON(old)
	steps := dup["spec"].(map[string]interface{})["steps"].([]interface{})
	dup["spec"].(map[string]interface{})["steps"] = append(steps, runtime.DeepCopyJSONValue(steps[0]))
	if errs := v.ValidateUpdate(ctx, hookGVK, dup, old); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "step names must be unique") {
		t.Fatalf("a spec update with duplicate step names: %v, want the CEL rule's error", errs)
	}
	if !crdschema.CELCompiled(v, hookGVK) {
		t.Fatal("a spec update did not compile the CEL rules")
	}
}

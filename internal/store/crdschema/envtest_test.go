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
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/store/crdschema"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// TestMatchesAPIServer sends the same objects to a real kube-apiserver and to
// the Validator, and requires the same outcome: both accept, or both reject
// with the same causes (type, field and message) and the same defaults.
func TestMatchesAPIServer(t *testing.T) {
	c := testenv.Start(t).Client
	v := newValidator(t)
	ctx := context.Background()

	type mutation = func(*testing.T, map[string]interface{})
	both := func(ms ...mutation) mutation {
		return func(t *testing.T, m map[string]interface{}) {
			for _, f := range ms {
				f(t, m)
			}
		}
	}

	t.Run("create", func(t *testing.T) {
		tests := []struct {
			name   string
			gvk    schema.GroupVersionKind
			yaml   string
			mutate mutation
		}{
			{"valid hook", hookGVK, hookYAML, nil},
			{"valid worker", workerGVK, workerYAML, nil},
			{"worker restart", workerGVK, workerYAML, set("spec.restart", `{"auto": true}`)},
			{"valid checkpoint", checkpointGVK, checkpointYAML, nil},
			{"pattern", hookGVK, hookYAML, set("spec.steps", `[{"name": "Bad_Name"}]`)},
			{"duration pattern", hookGVK, hookYAML, set("spec.staleAfter", `"5 minutes"`)},
			{"minimum", hookGVK, hookYAML, set("spec.maxAttempts", "0")},
			{"maximum", hookGVK, hookYAML, set("spec.maxCheckpoints", "1001")},
			{"required", hookGVK, hookYAML, unset("spec.goal")},
			{"maxItems", hookGVK, hookYAML, set("spec.steps", `[`+strings.Repeat(`{"name": "a"},`, 64)+`{"name": "a"}]`)},
			{"minItems", hookGVK, hookYAML, set("spec.steps", "[]")},
			{"maxLength", hookGVK, hookYAML, set("spec.goal", `"`+strings.Repeat("g", 2049)+`"`)},
			{"wrong type", hookGVK, hookYAML, set("spec.maxAttempts", `"three"`)},
			{"enum", checkpointGVK, checkpointYAML, set("spec.trigger", `"sometimes"`)},
			{"list map duplicate", workerGVK, workerYAML, set("spec.env", `[{"name": "A"}, {"name": "A"}]`)},
			{"CEL unique steps", hookGVK, hookYAML, set("spec.steps", `[{"name": "vet"}, {"name": "vet"}]`)},
			{"CEL command and adopt", workerGVK, workerYAML, set("spec.adopt", `{"pid": 42}`)},
			{"CEL tmux", workerGVK, workerYAML, both(unset("spec.command"), set("spec.adopt", `{"pid": 1}`), set("spec.tmux", `{}`))},
			{"template", workerGVK, workerYAML, both(unset("spec.command"), set("spec.template", `{"spec": {"x": {"y": 1}}}`))},
			{"unknown fields", hookGVK, hookYAML, both(set("spec.foo", "1"), set("metadata.foo", "1"))},
			{"null without default", hookGVK, hookYAML, set("spec.workspace", "null")},
			{"null with default", hookGVK, hookYAML, set("spec.maxAttempts", "null")},
			{"status dropped on create", hookGVK, hookYAML, set("status", `{"state": "bogus"}`)},
			{"name upper case", checkpointGVK, checkpointYAML, set("metadata.name", `"Bad"`)},
			{"name slash", checkpointGVK, checkpointYAML, set("metadata.name", `"a/b"`)},
			{"name dot dot", checkpointGVK, checkpointYAML, set("metadata.name", `".."`)},
			{"name empty", checkpointGVK, checkpointYAML, set("metadata.name", `""`)},
			{"label", checkpointGVK, checkpointYAML, set("metadata.labels", `{"k": "bad value"}`)},
			{"annotations size", checkpointGVK, checkpointYAML, set("metadata.annotations", `{"big": "`+strings.Repeat("a", 256*1024)+`"}`)},
			{"finalizer", checkpointGVK, checkpointYAML, set("metadata.finalizers", `["bad finalizer"]`)},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				obj := decode(t, tt.yaml)
				set("metadata.name", fmt.Sprintf(`"create-%d"`, i))(t, obj)
				if tt.mutate != nil {
					tt.mutate(t, obj)
				}

				// The store's create: decode, PrepareForCreate, validate.
				local := runtime.DeepCopyJSON(obj)
				v.Prune(tt.gvk, local)
				if err := v.Default(tt.gvk, local); err != nil {
					t.Fatal(err)
				}
				delete(local, "status")
				lu := &unstructured.Unstructured{Object: local}
				lu.SetGeneration(1)
				localErr := crdschema.ToAPIError(tt.gvk, lu.GetName(), v.ValidateCreate(ctx, tt.gvk, local))

				u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
				serverErr := c.Create(ctx, u)
				compare(t, serverErr, localErr)
				if serverErr == nil && localErr == nil {
					for _, part := range []string{"spec"} {
						if !equalJSON(u.Object[part], local[part]) {
							t.Errorf("%s differs\nserver %v\n local %v", part, u.Object[part], local[part])
						}
					}
				}
			})
		}
	})

	t.Run("strict", func(t *testing.T) {
		tests := []struct {
			name   string
			gvk    schema.GroupVersionKind
			yaml   string
			mutate mutation
		}{
			{"spec", hookGVK, hookYAML, both(set("spec.foo", "1"), set("spec.steps", `[{"name": "vet", "bar": {"x": 1}}]`))},
			{"metadata and top level", hookGVK, hookYAML, both(set("metadata.foo", `"x"`), set("extra", "true"), set("status", `{"unknown": 1}`))},
			{"template kept", workerGVK, workerYAML, both(unset("spec.command"), set("spec.template", `{"spec": {"x": 1}}`), set("spec.restart", `{"y": 1}`))},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				obj := decode(t, tt.yaml)
				set("metadata.name", fmt.Sprintf(`"strict-%d"`, i))(t, obj)
				tt.mutate(t, obj)
				local := v.Prune(tt.gvk, runtime.DeepCopyJSON(obj))
				err := c.Create(ctx, &unstructured.Unstructured{Object: obj}, client.FieldValidation(metav1.FieldValidationStrict))
				if !apierrors.IsBadRequest(err) {
					t.Fatalf("server: %v", err)
				}
				// Hook in version "v1alpha1" cannot be handled as a Hook: strict decoding error: unknown field "spec.foo", ...
				_, list, _ := strings.Cut(err.Error(), "strict decoding error: ")
				var server []string
				for _, part := range strings.Split(list, ", ") {
					server = append(server, strings.Trim(strings.TrimPrefix(part, "unknown field "), `"`))
				}
				if !slices.Equal(server, local) {
					t.Errorf("unknown fields\nserver %q\n local %q", server, local)
				}
			})
		}
	})

	t.Run("update", func(t *testing.T) {
		tests := []struct {
			name   string
			gvk    schema.GroupVersionKind
			yaml   string
			status bool
			mutate mutation
		}{
			{"checkpoint spec", checkpointGVK, checkpointYAML, false, set("spec.description", `"rewritten"`)},
			{"checkpoint label", checkpointGVK, checkpointYAML, false, set("metadata.labels", `{"a": "b"}`)},
			{"checkpoint status", checkpointGVK, checkpointYAML, true, set("status", `{"observedGeneration": 1}`)},
			{"checkpoint bad condition", checkpointGVK, checkpointYAML, true, set("status", `{"conditions": [{"type": "Ready", "status": "True", "message": "", "lastTransitionTime": "2026-01-02T03:04:06Z"}]}`)},
			{"hook state", hookGVK, hookYAML, true, set("status", `{"state": "bogus"}`)},
			{"hook history", hookGVK, hookYAML, true, set("status.history", "["+strings.Repeat(`{"time": "2026-01-02T03:04:06Z", "event": "e", "to": "failed"},`, 100)+`{"time": "2026-01-02T03:04:06Z", "event": "e", "to": "failed"}]`)},
			{"hook steps", hookGVK, hookYAML, false, set("spec.steps", `[{"name": "vet"}, {"name": "vet"}]`)},
			{"hook minimum", hookGVK, hookYAML, false, set("spec.maxAttempts", "0")},
			{"label", hookGVK, hookYAML, false, set("metadata.labels", `{"k": "bad value"}`)},
			{"generation", hookGVK, hookYAML, false, set("metadata.generation", "5")},
			{"metadata ignored by status", hookGVK, hookYAML, true, set("metadata.labels", `{"k": "bad value"}`)},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				obj := decode(t, tt.yaml)
				set("metadata.name", fmt.Sprintf(`"update-%d"`, i))(t, obj)
				created := &unstructured.Unstructured{Object: obj}
				if err := c.Create(ctx, created); err != nil {
					t.Fatal(err)
				}
				old := runtime.DeepCopyJSON(created.Object)
				in := runtime.DeepCopyJSON(old)
				tt.mutate(t, in)

				// The store's update: decode, PrepareForUpdate, validate.
				local := runtime.DeepCopyJSON(in)
				v.Prune(tt.gvk, local)
				if err := v.Default(tt.gvk, local); err != nil {
					t.Fatal(err)
				}
				var localErrs error
				if tt.status {
					next := runtime.DeepCopyJSON(old)
					next["status"] = local["status"]
					localErrs = crdschema.ToAPIError(tt.gvk, created.GetName(), v.ValidateStatusUpdate(ctx, tt.gvk, next, old))
				} else {
					local["status"] = old["status"]
					if local["status"] == nil {
						delete(local, "status")
					}
					lu := &unstructured.Unstructured{Object: local}
					lu.SetGeneration(created.GetGeneration())
					localErrs = crdschema.ToAPIError(tt.gvk, created.GetName(), v.ValidateUpdate(ctx, tt.gvk, local, old))
				}

				u := &unstructured.Unstructured{Object: in}
				var serverErr error
				if tt.status {
					serverErr = c.Status().Update(ctx, u)
				} else {
					serverErr = c.Update(ctx, u)
				}
				compare(t, serverErr, localErrs)
			})
		}
	})
}

func equalJSON(a, b interface{}) bool {
	return fmt.Sprint(runtime.DeepCopyJSONValue(a)) == fmt.Sprint(runtime.DeepCopyJSONValue(b))
}

// compare requires the same outcome; for Invalid errors, the same causes.
func compare(t *testing.T, server, local error) {
	t.Helper()
	if server == nil || local == nil {
		if server != nil || local != nil {
			t.Errorf("server: %v\n local: %v", server, local)
		}
		return
	}
	var s, l *apierrors.StatusError
	if !errors.As(server, &s) || !errors.As(local, &l) {
		t.Fatalf("not status errors: %v / %v", server, local)
	}
	if s.ErrStatus.Reason != l.ErrStatus.Reason || s.ErrStatus.Code != l.ErrStatus.Code {
		t.Errorf("reason/code: server %s %d, local %s %d\nserver: %v\n local: %v", s.ErrStatus.Reason, s.ErrStatus.Code, l.ErrStatus.Reason, l.ErrStatus.Code, server, local)
		return
	}
	causes := func(st metav1.Status) []string {
		var out []string
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				out = append(out, fmt.Sprintf("%s|%s|%s", c.Type, c.Field, c.Message))
			}
		}
		slices.Sort(out)
		return out
	}
	if sc, lc := causes(s.ErrStatus), causes(l.ErrStatus); !slices.Equal(sc, lc) {
		t.Errorf("causes differ\nserver: %q\n local: %q", sc, lc)
	}
	if s.ErrStatus.Message != l.ErrStatus.Message {
		t.Errorf("message differs\nserver: %s\n local: %s", s.ErrStatus.Message, l.ErrStatus.Message)
	}
}

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
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	tetherv1 "github.com/tether-dev/tether/api/v1alpha1"
)

// maxDuration is the bound every duration field of the API carries.
const maxDuration = 8760 * time.Hour

// durationFields lists the JSON paths ("spec.steps[].validate[].timeout") of
// every metav1.Duration below t, found by reflection so that a new duration
// field is covered without being listed here.
func durationFields(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(metav1.Duration{}) {
		return []string{prefix}
	}
	switch t.Kind() {
	case reflect.Slice:
		return durationFields(t.Elem(), prefix+"[]")
	case reflect.Struct:
		var paths []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			paths = append(paths, durationFields(f.Type, prefix+"."+name)...)
		}
		return paths
	}
	return nil
}

// setPath sets value at a path of durationFields in obj, creating one-element
// lists for "[]" and merging into the first element of existing ones.
func setPath(obj map[string]interface{}, path string, value interface{}) {
	parts := strings.Split(strings.TrimPrefix(path, "."), ".")
	cur := obj
	for i, part := range parts {
		name, list := strings.CutSuffix(part, "[]")
		if i == len(parts)-1 {
			cur[name] = value
			return
		}
		if !list {
			next, ok := cur[name].(map[string]interface{})
			if !ok {
				next = map[string]interface{}{}
				cur[name] = next
			}
			cur = next
			continue
		}
		items, _ := cur[name].([]interface{})
		if len(items) == 0 {
			items = []interface{}{map[string]interface{}{}}
			cur[name] = items
		}
		cur = items[0].(map[string]interface{})
	}
}

func TestEveryDurationFieldIsFound(t *testing.T) {
	got := append(durationFields(reflect.TypeOf(tetherv1.HookSpec{}), "spec"),
		durationFields(reflect.TypeOf(tetherv1.WorkerSpec{}), "spec")...)
	for _, want := range []string{
		"spec.staleAfter", "spec.checkpointInterval", "spec.steps[].validate[].timeout",
		"spec.retention.completed", "spec.retention.failed", "spec.retention.abandoned",
		"spec.heartbeatTimeout", "spec.restart.window",
	} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("duration field %s not found by reflection; found %v", want, got)
		}
	}
}

// TestDurationsAdmitOnlyWhatGoDecodes sets every duration field of every kind
// to values around Go's limits and requires the schema to admit a value
// exactly when metav1.Duration decodes it to at most maxDuration.
func TestDurationsAdmitOnlyWhatGoDecodes(t *testing.T) {
	kinds := []struct {
		gvk  schema.GroupVersionKind
		yaml string
		spec reflect.Type
	}{
		{hookGVK, hookYAML, reflect.TypeOf(tetherv1.HookSpec{})},
		{workerGVK, workerYAML, reflect.TypeOf(tetherv1.WorkerSpec{})},
		{checkpointGVK, checkpointYAML, reflect.TypeOf(tetherv1.CheckpointSpec{})},
	}
	values := []struct {
		value string
		admit bool
	}{
		{"10m0s", true},
		{"1h30m", true},
		{"1.5h", true},
		{"500ms", true},
		{"8760h", true},
		{"525600m", true},
		{"8760h0m1s", false},
		{"8761h", false},
		{"2562047h", false},
		{"2562048h", false},
		{"99999999999999999999h", false},
		{"1000000h1000000h1000000h", false},
		{"9223372036854775807ns", false},
		{"9223372036854775808ns", false},
		{"5 minutes", false},
		{"-1h", false},
		{"", false},
		{"1d", false},
		{strings.Repeat("1", 65) + "ns", false},
	}
	v := newValidator(t)
	for _, k := range kinds {
		for _, path := range durationFields(k.spec, "spec") {
			for _, val := range values {
				t.Run(k.gvk.Kind+"/"+path+"="+val.value, func(t *testing.T) {
					obj := decode(t, k.yaml)
					setPath(obj, path, val.value)
					admit(t, v, k.gvk, obj)
					errs := v.ValidateCreate(context.Background(), k.gvk, obj)
					if admitted := len(errs) == 0; admitted != val.admit {
						t.Fatalf("admitted %v, want %v: %v", admitted, val.admit, errs)
					}
					var d metav1.Duration
					decodeErr := json.Unmarshal([]byte(`"`+val.value+`"`), &d)
					if len(errs) == 0 && (decodeErr != nil || d.Duration > maxDuration) {
						t.Fatalf("schema admits %q, which Go decodes to %v, %v", val.value, d.Duration, decodeErr)
					}
					field := strings.ReplaceAll(path, "[]", "[0]")
					for _, e := range errs {
						if e.Field != field && e.Field != "<nil>" {
							t.Errorf("error on %s, want %s: %v", e.Field, field, e)
						}
					}
				})
			}
		}
	}
}

// FuzzDurationSchema requires that every value the schema admits in a
// duration field decodes into metav1.Duration, within maxDuration.
func FuzzDurationSchema(f *testing.F) {
	for _, s := range []string{"5m", "2562048h", "99999999999999999999h", "8760h", "8760h0.000000001s", "1µs", "1.h", ".5h"} {
		f.Add(s)
	}
	v, err := validator()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, value string) {
		obj := decode(t, workerYAML)
		setPath(obj, "spec.restart.window", value)
		admit(t, v, workerGVK, obj)
		if errs := v.ValidateCreate(context.Background(), workerGVK, obj); len(errs) > 0 {
			return
		}
		var d metav1.Duration
		js, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &d); err != nil || d.Duration > maxDuration || d.Duration < 0 {
			t.Fatalf("schema admits %q, which Go decodes to %v, %v", value, d.Duration, err)
		}
	})
}

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

package controllers

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestTemplateInvalidNamesWorkerFields maps the causes of a Pod's Invalid
// StatusError to the Worker's fields: the template's under spec.template,
// and the env entries tether prepended to the agent container to the
// TETHER_* environment and spec.env.
func TestTemplateInvalidNamesWorkerFields(t *testing.T) {
	pod := schema.GroupKind{Kind: "Pod"}
	env := field.NewPath("spec", "containers").Index(0).Child("env")
	// 4 TETHER_* variables, then 2 of spec.env, then the template's own.
	err := apierrors.NewInvalid(pod, "w-0", field.ErrorList{
		field.Required(field.NewPath("spec", "containers").Index(0).Child("image"), ""),
		field.Invalid(env.Index(1).Child("name"), "", "bad"),
		field.Invalid(env.Index(5).Child("name"), "", "bad"),
		field.Invalid(env.Index(7).Child("name"), "", "bad"),
		field.Invalid(field.NewPath("metadata", "labels"), "", "bad"),
	})
	got := templateInvalid(err, 6, 2)
	if got == nil {
		t.Fatal("an Invalid StatusError gave no invalidTemplateError")
	}
	want := []string{
		"spec.template.spec.containers[0].image: Required value",
		`the TETHER_* environment.name: Invalid value: "": bad`,
		`spec.env[1].name: Invalid value: "": bad`,
		`spec.template.spec.containers[0].env[1].name: Invalid value: "": bad`,
		`spec.template.metadata.labels: Invalid value: "": bad`,
	}
	if len(got.fields) != len(want) {
		t.Fatalf("fields %q, want %q", got.fields, want)
	}
	for i := range want {
		if got.fields[i] != want[i] {
			t.Errorf("field %d: %q, want %q", i, got.fields[i], want[i])
		}
	}
	if !errors.Is(got, err) {
		t.Error("the invalidTemplateError does not wrap the StatusError")
	}
	if templateInvalid(apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "w-0", errors.New("quota")), 6, 2) != nil {
		t.Error("a Forbidden error was taken for an invalid template")
	}
}

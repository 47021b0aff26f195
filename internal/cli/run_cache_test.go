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

package cli

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestClusterCacheTransform(t *testing.T) {
	opts := clusterCache(workerPods)
	if opts.DefaultTransform == nil {
		t.Fatal("the operator's cache has no transform")
	}
	cases := []struct {
		name        string
		annotations map[string]string
	}{
		{name: "applied", annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"kind":"Hook"}`, "team": "a"}},
		{name: "created", annotations: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{
				Name: "h", Namespace: "default", Annotations: tc.annotations,
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}},
			}}
			out, err := opts.DefaultTransform(h)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*v1.Hook)
			if got.ManagedFields != nil {
				t.Errorf("managedFields cached: %v", got.ManagedFields)
			}
			if len(got.Annotations) != len(tc.annotations) || got.Annotations[corev1.LastAppliedConfigAnnotation] != tc.annotations[corev1.LastAppliedConfigAnnotation] {
				t.Errorf("annotations cached as %v, want %v: an Update of the cached object would drop them", got.Annotations, tc.annotations)
			}
		})
	}
}

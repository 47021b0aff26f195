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

package scheme_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
)

// TestNewKnowsWhatTetherReadsAndWrites: every kind tether reads or writes
// maps to its group, version and kind, list and options types included,
// and a kind tether never touches is not registered.
func TestNewKnowsWhatTetherReadsAndWrites(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		obj  runtime.Object
		want schema.GroupVersionKind
	}{
		{&v1.Hook{}, v1.GroupVersion.WithKind("Hook")},
		{&v1.HookList{}, v1.GroupVersion.WithKind("HookList")},
		{&v1.Worker{}, v1.GroupVersion.WithKind("Worker")},
		{&v1.Checkpoint{}, v1.GroupVersion.WithKind("Checkpoint")},
		{&corev1.Event{}, corev1.SchemeGroupVersion.WithKind("Event")},
		{&corev1.Pod{}, corev1.SchemeGroupVersion.WithKind("Pod")},
		{&corev1.PodList{}, corev1.SchemeGroupVersion.WithKind("PodList")},
		{&eventsv1.Event{}, eventsv1.SchemeGroupVersion.WithKind("Event")},
		{&metav1.ListOptions{}, v1.GroupVersion.WithKind("ListOptions")},
	}
	for _, tt := range tests {
		gvks, _, err := s.ObjectKinds(tt.obj)
		if err != nil {
			t.Errorf("%T: %v", tt.obj, err)
			continue
		}
		found := false
		for _, gvk := range gvks {
			found = found || gvk == tt.want
		}
		if !found {
			t.Errorf("%T maps to %v, want %v among them", tt.obj, gvks, tt.want)
		}
	}
	if _, _, err := s.ObjectKinds(&appsv1.Deployment{}); !runtime.IsNotRegisteredError(err) {
		t.Errorf("a Deployment: %v, want a not-registered error: tether never reads or writes one", err)
	}
}

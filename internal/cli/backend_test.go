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
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestBackendLocalStore(t *testing.T) {
	dir := t.TempDir()
	o := NewGlobalOptions()
	o.Store = dir
	*o.KubeConfig.Namespace = "team"
	b, err := o.Backend(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if b.RESTConfig != nil || !b.projects || b.Location != dir || b.Namespace != "team" {
		t.Fatalf("backend = cluster %v location %q namespace %q", b.RESTConfig != nil, b.Location, b.Namespace)
	}
	hook := &agentsv1alpha1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: b.Namespace},
		Spec:       agentsv1alpha1.HookSpec{Goal: "g", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
	}
	if err := b.Client.Create(context.Background(), hook); err != nil {
		t.Fatal(err)
	}
	if hook.Spec.MaxAttempts != 3 {
		t.Errorf("the store did not default spec.maxAttempts: %d", hook.Spec.MaxAttempts)
	}
	if _, err := b.Mapper.RESTMapping(agentsv1alpha1.GroupVersion.WithKind("Hook").GroupKind(), "v1alpha1"); err != nil {
		t.Errorf("mapper: %v", err)
	}
}

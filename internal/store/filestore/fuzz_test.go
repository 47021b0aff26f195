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

package filestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// FuzzStoreFile writes arbitrary bytes over a store file, as a hand edit
// would, and checks that reading never panics, that the object in effect is
// either the last valid version or a valid adoption, and that the store
// keeps working.
func FuzzStoreFile(f *testing.F) {
	f.Add([]byte("apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata: {name: fuzz, namespace: default}\nspec: {goal: changed, steps: [{name: one}]}\n"))
	f.Add([]byte("# Managed by tether (resourceVersion 1, sha256 0000000000000000000000000000000000000000000000000000000000000000). x\nkind: Hook\n"))
	f.Add([]byte("spec: {goal: [\n"))
	f.Add([]byte("apiVersion: v1\nkind: Event\nmetadata: {name: fuzz}\n"))
	f.Add([]byte{})
	// Poison pills (issue 14): durations that pass the schema but not Go.
	for _, spec := range []string{
		"{goal: g, staleAfter: 2562048h, steps: [{name: one}]}",
		"{goal: g, staleAfter: 99999999999999999999h, steps: [{name: one}]}",
		`{goal: g, steps: [{name: one, validate: [{command: ["true"], timeout: 2562048h}]}]}`,
	} {
		f.Add([]byte("apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata: {name: fuzz, namespace: default}\nspec: " + spec + "\n"))
	}
	dir := f.TempDir()
	s, err := newStore(dir)
	if err != nil {
		f.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	c := s.Client()
	ctx := context.Background()
	path := filepath.Join(dir, "hooks", "default", "fuzz.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = c.Delete(ctx, hook("fuzz"))
		h := hook("fuzz")
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got := &agentsv1alpha1.Hook{}
		err := c.Get(ctx, client.ObjectKeyFromObject(h), got)
		if err != nil && !apierrors.IsNotFound(err) {
			var statusErr apierrors.APIStatus
			if !errors.As(err, &statusErr) {
				t.Fatalf("get after a hand edit: %v", err)
			}
		}
		if err == nil && got.UID != h.UID {
			t.Fatalf("the object changed identity: uid %s, was %s", got.UID, h.UID)
		}
		list := &agentsv1alpha1.HookList{}
		if err := c.List(ctx, list); err != nil {
			t.Fatalf("list after a hand edit: %v", err)
		}
	})
}

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
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestLargeListMatchesGet lists more objects than the journal read path's
// threshold, after updates, deletions and a hand edit, and checks that
// every listed object equals what Get (which parses the file's YAML)
// returns: the journal's JSON and the files hold the same objects.
func TestLargeListMatchesGet(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	ctx := context.Background()
	const n = 300
	for i := range n {
		if err := c.Create(ctx, hook(fmt.Sprintf("h-%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 7 {
		h := &agentsv1alpha1.Hook{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("h-%03d", i)}, h); err != nil {
			t.Fatal(err)
		}
		h.Status.State = agentsv1alpha1.HookState("step_pending")
		if err := c.Status().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	for i := 3; i < n; i += 50 {
		if err := c.Delete(ctx, hook(fmt.Sprintf("h-%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	edited := filepath.Join(dir, "hooks", "default", "h-010.yaml")
	data, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.SplitN(string(data), "\n", 2)[1]
	if err := os.WriteFile(edited, []byte(strings.Replace(body, "goal: g", "goal: edited by hand", 1)), 0o600); err != nil {
		t.Fatal(err)
	}

	list := &agentsv1alpha1.HookList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	if want := n - 6; len(list.Items) != want {
		t.Fatalf("listed %d hooks, want %d", len(list.Items), want)
	}
	for i := range list.Items {
		got := &list.Items[i]
		want := &agentsv1alpha1.Hook{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(got), want); err != nil {
			t.Fatal(err)
		}
		// A typed Get clears the kind, as controller-runtime's client does; list items keep it.
		want.TypeMeta = got.TypeMeta
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: list gave\n%+v\nget gave\n%+v", got.Name, got, want)
		}
		if got.Name == "h-010" && got.Spec.Goal != "edited by hand" {
			t.Errorf("the hand edit of h-010 is not listed: goal %q", got.Spec.Goal)
		}
		if i%7 == 0 && got.Name == fmt.Sprintf("h-%03d", i) && got.Status.State != "step_pending" {
			t.Errorf("%s: status update not listed", got.Name)
		}
	}
}

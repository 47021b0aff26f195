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
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
	// A file's name and its object's sort differently when names hold
	// '-' and '.': "a-b.yaml" < "a.b.yaml" < "a.yaml", but "a" < "a-b" < "a.b".
	for _, name := range []string{"a", "a-b", "a.b"} {
		if err := c.Create(ctx, hook(name)); err != nil {
			t.Fatal(err)
		}
	}
	// A journal entry whose object is not the object its key names (an
	// edit of the journal) is not taken for the file's object.
	journal := filepath.Join(dir, "journal")
	jdata, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(jdata), `"name":"h-020","namespace"`, `"name":"h-021","namespace"`, 1)
	if forged == string(jdata) {
		t.Fatal("the journal holds no entry for h-020 to forge")
	}
	if err := os.WriteFile(journal, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
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
	if want := n - 6 + 3; len(list.Items) != want {
		t.Fatalf("listed %d hooks, want %d", len(list.Items), want)
	}
	if !slices.IsSortedFunc(list.Items, func(a, b agentsv1alpha1.Hook) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("the list is not sorted by name: %s, %s, %s, ...", list.Items[0].Name, list.Items[1].Name, list.Items[2].Name)
	}
	ulist := &unstructured.UnstructuredList{}
	ulist.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind("HookList"))
	if err := c.List(ctx, ulist); err != nil {
		t.Fatal(err)
	}
	if len(ulist.Items) != len(list.Items) {
		t.Fatalf("listed %d unstructured hooks, %d typed", len(ulist.Items), len(list.Items))
	}
	for i := range ulist.Items {
		u := &agentsv1alpha1.Hook{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ulist.Items[i].Object, u); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(u, &list.Items[i]) {
			t.Errorf("item %d: the unstructured list gave\n%+v\nthe typed list gave\n%+v", i, u, &list.Items[i])
		}
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

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
	"cmp"
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
		h := hook(fmt.Sprintf("h-%03d", i))
		if i%3 == 0 {
			h.Labels = map[string]string{"third": "yes"}
		}
		if err := c.Create(ctx, h); err != nil {
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
	checkListAgreesWithGet(t, c, list.Items)
	for i := range list.Items {
		got := &list.Items[i]
		if got.Name == "h-010" && got.Spec.Goal != "edited by hand" {
			t.Errorf("the hand edit of h-010 is not listed: goal %q", got.Spec.Goal)
		}
		if i%7 == 0 && got.Name == fmt.Sprintf("h-%03d", i) && got.Status.State != "step_pending" {
			t.Errorf("%s: status update not listed", got.Name)
		}
	}

	// A selector leaves gaps between the objects taken; a refused edit
	// lists the last valid version, read apart from the rest.
	refused := filepath.Join(dir, "hooks", "default", "h-030.yaml")
	if err := os.WriteFile(refused, []byte("spec: [broken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want int
	}{
		{name: "every third, one refused", opts: []client.ListOption{client.MatchingLabels{"third": "yes"}}, want: 100 - 2},
		{name: "all, one refused", want: n - 6 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := &agentsv1alpha1.HookList{}
			if err := c.List(ctx, list, tc.opts...); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tc.want {
				t.Fatalf("listed %d hooks, want %d", len(list.Items), tc.want)
			}
			checkListAgreesWithGet(t, c, list.Items)
		})
	}
}

// TestLargeListTakesItsSlots lists a store in which every object decodes
// from the journal, so that the list takes the objects where they were
// decoded: whole, with a selector leaving gaps, and by namespace; each
// must be sorted and agree with a Get of every object.
func TestLargeListTakesItsSlots(t *testing.T) {
	s := openStore(t, t.TempDir())
	c := s.Client()
	ctx := context.Background()
	for i := range 300 {
		h := hook(fmt.Sprintf("h-%03d", i))
		if i%2 == 1 {
			h.Namespace = "team"
		}
		if i%3 == 0 {
			h.Labels = map[string]string{"third": "yes"}
		}
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want int
	}{
		{name: "all", want: 300},
		{name: "every third", opts: []client.ListOption{client.MatchingLabels{"third": "yes"}}, want: 100},
		{name: "one namespace", opts: []client.ListOption{client.InNamespace("team")}, want: 150},
		{name: "none", opts: []client.ListOption{client.MatchingLabels{"third": "no"}}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := &agentsv1alpha1.HookList{}
			if err := c.List(ctx, list, tc.opts...); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tc.want {
				t.Fatalf("listed %d hooks, want %d", len(list.Items), tc.want)
			}
			if cap(list.Items) > 300 {
				t.Errorf("the list holds %d slots", cap(list.Items))
			}
			checkListAgreesWithGet(t, c, list.Items)
		})
	}
}

// checkListAgreesWithGet checks that items are sorted by namespace and
// name, and that each is what a Get of it returns.
func checkListAgreesWithGet(t *testing.T, c client.Client, items []agentsv1alpha1.Hook) {
	t.Helper()
	for i := range items {
		got := &items[i]
		want := &agentsv1alpha1.Hook{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(got), want); err != nil {
			t.Fatal(err)
		}
		// A typed Get clears the kind, as controller-runtime's client does; list items keep it.
		want.TypeMeta = got.TypeMeta
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: list gave\n%+v\nget gave\n%+v", got.Name, got, want)
		}
		if i > 0 && cmp.Or(strings.Compare(items[i-1].Namespace, got.Namespace), strings.Compare(items[i-1].Name, got.Name)) >= 0 {
			t.Errorf("%s/%s is listed after %s/%s", got.Namespace, got.Name, items[i-1].Namespace, items[i-1].Name)
		}
	}
}

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
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// transformedAnnotation counts the times a test's Transform changed an
// object.
const transformedAnnotation = "test.tether.dev/transformed"

// countingTransform is a Transform that, as an informer's trimming does,
// drops the labels a selector reads, and counts its calls in the object
// and in calls.
func countingTransform(calls *atomic.Int64) filestore.Transform {
	return func(o client.Object) {
		calls.Add(1)
		n, _ := strconv.Atoi(o.GetAnnotations()[transformedAnnotation])
		o.SetAnnotations(map[string]string{transformedAnnotation: strconv.Itoa(n + 1)})
		o.SetLabels(nil)
	}
}

// TestListAppliesTransformOnce lists with the Transform option, small lists
// read from YAML and large ones from the journal, with a hand edit read
// apart, through a selector, typed and unstructured: every object listed
// is transformed exactly once, after the selector has read it, and only a
// list read again after adopting a hand edit transforms objects it does
// not return.
func TestListAppliesTransformOnce(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n            int
		handEdit     bool
		selector     client.ListOption
		unstructured bool
		want         int
	}{
		{name: "small", n: 10, want: 10},
		{name: "large, from the journal", n: 300, want: 300},
		{name: "large, one hand edit", n: 300, handEdit: true, want: 300},
		{name: "large, every third by label", n: 300, selector: client.MatchingLabels{"third": "yes"}, want: 100},
		{name: "small, every third by label", n: 10, selector: client.MatchingLabels{"third": "yes"}, want: 4},
		{name: "large, unstructured", n: 300, unstructured: true, want: 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openStore(t, dir).Client()
			ctx := context.Background()
			for i := range tc.n {
				h := hook(fmt.Sprintf("h-%03d", i))
				if i%3 == 0 {
					h.Labels = map[string]string{"third": "yes"}
				}
				if err := c.Create(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			if tc.handEdit {
				edited := filepath.Join(dir, "hooks", "default", "h-010.yaml")
				data, err := os.ReadFile(edited)
				if err != nil {
					t.Fatal(err)
				}
				body := strings.SplitN(string(data), "\n", 2)[1]
				if err := os.WriteFile(edited, []byte(strings.Replace(body, "goal: g", "goal: edited by hand", 1)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var calls atomic.Int64
			opts := []client.ListOption{countingTransform(&calls)}
			if tc.selector != nil {
				opts = append(opts, tc.selector)
			}
			var list client.ObjectList = &agentsv1alpha1.HookList{}
			if tc.unstructured {
				u := &unstructured.UnstructuredList{}
				u.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind("HookList"))
				list = u
			}
			if err := c.List(ctx, list, opts...); err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tc.want {
				t.Fatalf("listed %d hooks, want %d", len(items), tc.want)
			}
			editSeen := false
			for _, item := range items {
				o := item.(client.Object)
				if got := o.GetAnnotations()[transformedAnnotation]; got != "1" {
					t.Errorf("%s: transformed %q times, want 1", o.GetName(), got)
				}
				if len(o.GetLabels()) > 0 {
					t.Errorf("%s: labels %v kept, want the transform's none", o.GetName(), o.GetLabels())
				}
				if o.GetName() == "h-010" {
					editSeen = true
				}
			}
			// A list that adopts a hand edit reads again, and transforms
			// what it reads again; no other list transforms what it does
			// not return.
			if got := int(calls.Load()); got != tc.want && (!tc.handEdit || got > 2*tc.n) {
				t.Errorf("the transform ran %d times for %d objects listed", got, tc.want)
			}
			if tc.handEdit && !editSeen {
				t.Error("the hand-edited h-010 is not listed")
			}
		})
	}
}

// TestWatchAppliesTransformOnce watches with the Transform option, from
// the current objects (ADDED first) and from a resourceVersion, with and
// without a selector: each object sent is transformed once, after the
// selector has read it.
func TestWatchAppliesTransformOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		initial  bool
		selector client.ListOption
	}{
		{name: "from now", initial: false},
		{name: "from the current objects", initial: true},
		{name: "from now, by label", initial: false, selector: client.MatchingLabels{"third": "yes"}},
		{name: "from the current objects, by label", initial: true, selector: client.MatchingLabels{"third": "yes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openStore(t, t.TempDir()).Client()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			create := func(name string, labeled bool) {
				h := hook(name)
				if labeled {
					h.Labels = map[string]string{"third": "yes"}
				}
				if err := c.Create(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			create("before", true)
			list := &agentsv1alpha1.HookList{}
			if err := c.List(ctx, list); err != nil {
				t.Fatal(err)
			}
			rv := list.ResourceVersion
			if tc.initial {
				rv = ""
			}
			var calls atomic.Int64
			opts := []client.ListOption{countingTransform(&calls), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}}}
			if tc.selector != nil {
				opts = append(opts, tc.selector)
			}
			w, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			create("unlabeled", false)
			create("labeled", true)
			want := []string{"unlabeled", "labeled"}
			if tc.selector != nil {
				want = []string{"labeled"}
			}
			if tc.initial {
				want = append([]string{"before"}, want...)
			}
			for _, name := range want {
				ev := nextEvent(t, w)
				o, ok := ev.Object.(client.Object)
				if !ok || ev.Type != watch.Added || o.GetName() != name {
					t.Fatalf("got %s %T, want ADDED %s", ev.Type, ev.Object, name)
				}
				if got := o.GetAnnotations()[transformedAnnotation]; got != "1" {
					t.Errorf("%s: transformed %q times, want 1", name, got)
				}
				if len(o.GetLabels()) > 0 {
					t.Errorf("%s: labels %v kept, want the transform's none", name, o.GetLabels())
				}
			}
			if int(calls.Load()) != len(want) {
				t.Errorf("the transform ran %d times for %d objects sent", calls.Load(), len(want))
			}
		})
	}
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no watch event within 20s")
	}
	return watch.Event{}
}

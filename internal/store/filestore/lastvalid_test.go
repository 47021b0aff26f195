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

package filestore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestLastValidFindsEntriesAtAnyDepth checks the backward journal scan
// that gives a hand edit the version it is adopted over (or, if refused,
// the version that stays in effect): it finds an object's newest entry
// however far back it lies (in the first, small chunk, across the
// boundaries of the doubling chunks, past the largest), even when lines
// straddle chunk boundaries, and reports a deletion or an object never
// written as none.
func TestLastValidFindsEntriesAtAnyDepth(t *testing.T) {
	s := openCoreStore(t)
	ctx := context.Background()
	c := s.Client()
	event := func(name, message string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "Event",
			"metadata": map[string]interface{}{"name": name, "namespace": "default"},
			"message":  message,
		}}
	}
	r := s.byPlural["events"]
	// Filler entries of an odd size, so that lines straddle every boundary.
	filler := strings.Repeat("x", 7777)
	written := 0
	fill := func(bytes int) {
		for n := 0; n < bytes; n += len(filler) {
			written++
			if err := c.Create(ctx, event(fmt.Sprintf("filler-%d", written), filler)); err != nil {
				t.Fatal(err)
			}
		}
	}
	gone := event("gone", "soon deleted")
	if err := c.Create(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	for i, depth := range []int{0, 10 << 10, 100 << 10, 300 << 10, 1200 << 10, 2500 << 10} {
		name := fmt.Sprintf("target-%d", i)
		if err := c.Create(ctx, event(name, "first")); err != nil {
			t.Fatal(err)
		}
		ev := event(name, "")
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, ev); err != nil {
			t.Fatal(err)
		}
		ev.Object["message"] = fmt.Sprintf("newest of %s", name)
		if err := c.Update(ctx, ev); err != nil {
			t.Fatal(err)
		}
		fill(depth)
		got, err := s.lastValid(r, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.Object["message"] != ev.Object["message"] {
			t.Errorf("%d bytes back: lastValid = %v, want the newest version of %s", depth, got, name)
		}
	}
	// A newest entry that straddles the first chunk's boundary.
	before, err := s.journal.size()
	if err != nil {
		t.Fatal(err)
	}
	big := event("straddling", strings.Repeat("y", 30000))
	if err := c.Create(ctx, big); err != nil {
		t.Fatal(err)
	}
	lineEnd, err := s.journal.size()
	if err != nil {
		t.Fatal(err)
	}
	for end := lineEnd; end < before+64<<10+2000; {
		written++
		if err := c.Create(ctx, event(fmt.Sprintf("small-%d", written), "z")); err != nil {
			t.Fatal(err)
		}
		if end, err = s.journal.size(); err != nil {
			t.Fatal(err)
		}
	}
	if end, _ := s.journal.size(); end-64<<10 <= before || end-64<<10 >= lineEnd {
		t.Fatalf("setup: the first chunk's boundary %d is not inside the line [%d, %d)", end-64<<10, before, lineEnd)
	}
	if got, err := s.lastValid(r, "default", "straddling"); err != nil || got == nil || got.Object["message"] != big.Object["message"] {
		t.Errorf("an entry across the first chunk's boundary: lastValid = %v, %v", got != nil, err)
	}
	for _, name := range []string{"gone", "never-written"} {
		if got, err := s.lastValid(r, "default", name); err != nil || got != nil {
			t.Errorf("lastValid(%s) = %v, %v; want none", name, got, err)
		}
	}
}

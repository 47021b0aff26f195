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
	"math"
	"os"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// TestJournalTailReadMatchesFile checks that an object read back from the
// journal entry this process appended is the object its file's YAML gives,
// for values whose YAML form is tricky, for the last entry and for earlier
// ones, that the shortcut is taken only for that entry's version of that
// object, and that an entry taken back is never used.
func TestJournalTailReadMatchesFile(t *testing.T) {
	s := openCoreStore(t)
	c := s.Client()
	values := []interface{}{
		"yes", "no", "null", "~", "1e3", "0x1F", "012", "-", "a: b", "- x", "#", "'q'", "\"q\"",
		"line\nbreak\n", " lead", "trail ", "tab\there", "ünïcødé ✓", "\u2028", "",
		int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64),
		0.5, 1e-7, 1e21, 1e6, 3.0, 1e19, math.Copysign(0, -1), true, false, nil,
		[]interface{}{}, map[string]interface{}{}, []interface{}{"a", int64(1), nil},
		map[string]interface{}{"1": "one", "true": "t", "": "empty", "a b": "c"},
	}
	ctx := context.Background()
	var written []fileVersion
	for i, v := range values {
		ev := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1",
			"kind":       "Event",
			"metadata":   map[string]interface{}{"name": fmt.Sprintf("e%d", i), "namespace": "default"},
			"message":    v,
			"extra":      map[string]interface{}{"v": v, "list": []interface{}{v}},
		}}
		if err := c.Create(ctx, ev); err != nil {
			t.Fatalf("value %d (%#v): %v", i, v, err)
		}
		r := s.byPlural["events"]
		path := s.objectPath(r, "default", ev.GetName())
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rv, body, ok := parseHeader(data)
		if !ok {
			t.Fatalf("value %d: the store's file has no valid header", i)
		}
		js, err := yaml.YAMLToJSONStrict(body)
		if err != nil {
			t.Fatal(err)
		}
		var fromYAML map[string]interface{}
		if err := utiljson.Unmarshal(js, &fromYAML); err != nil {
			t.Fatal(err)
		}
		got := s.fromJournal(path, rv)
		if got == nil {
			t.Fatalf("value %d: the object just written was not read from the journal", i)
		}
		if !reflect.DeepEqual(got.Object, fromYAML) {
			t.Errorf("value %d (%#v):\nfrom the journal %#v\nfrom the file    %#v", i, v, got.Object, fromYAML)
		}
		if s.fromJournal(path, rv-1) != nil {
			t.Errorf("value %d: another version was read from the journal", i)
		}
		if i > 0 && s.fromJournal(s.objectPath(r, "default", fmt.Sprintf("e%d", i-1)), rv) != nil {
			t.Errorf("value %d: another object was read from the journal", i)
		}
		written = append(written, fileVersion{path, rv, fromYAML})
	}
	// Earlier objects, no longer the journal's last entry, still read
	// back from their entries.
	for i, w := range written {
		got := s.fromJournal(w.path, w.rv)
		if got == nil || !reflect.DeepEqual(got.Object, w.obj) {
			t.Errorf("value %d read back after later writes: %v, want the file's %v", i, got, w.obj)
		}
	}
	// An entry taken back may see its resourceVersion issued again.
	size, err := s.journal.size()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.journal.rollback(size); err != nil {
		t.Fatal(err)
	}
	for i, w := range written {
		if s.fromJournal(w.path, w.rv) != nil {
			t.Errorf("value %d was read from an entry remembered across a rollback", i)
		}
	}
}

// fileVersion is one version of an object file, and the object its YAML gives.
type fileVersion struct {
	path string
	rv   uint64
	obj  map[string]interface{}
}

// TestRecentEntriesAreBounded checks that the journal remembers the
// entries of the last recentLimit objects written, and no more.
func TestRecentEntriesAreBounded(t *testing.T) {
	s := openCoreStore(t)
	n := recentLimit + 10
	for i := range n {
		s.journal.rememberRecent(&entry{Type: Added, Resource: "events", Namespace: "default", Name: fmt.Sprintf("e%d", i), RV: uint64(i + 1)})
	}
	s.journal.rememberRecent(&entry{Type: Modified, Resource: "events", Namespace: "default", Name: fmt.Sprintf("e%d", n-1), RV: uint64(n + 1)})
	for i := range n {
		got := s.journal.recentEntry("events", "default", fmt.Sprintf("e%d", i))
		kept := i >= n-recentLimit
		if (got != nil) != kept {
			t.Errorf("object %d of %d: remembered %v, want %v", i, n, got != nil, kept)
		}
	}
	if e := s.journal.recentEntry("events", "default", fmt.Sprintf("e%d", n-1)); e == nil || e.RV != uint64(n+1) {
		t.Errorf("the newest entry of an object rewritten: %+v", e)
	}
	s.journal.rememberRecent(&entry{Type: Deleted, Resource: "events", Namespace: "default", Name: "e20", RV: uint64(n + 2)})
	if s.journal.recentEntry("events", "default", "e20") != nil {
		t.Error("a deleted object is still remembered")
	}
	s.journal.rememberRecent(&entry{Type: Added, Resource: "events", Namespace: "default", Name: "e20", RV: uint64(n + 3)})
	if len(s.journal.recent) != len(s.journal.recentKeys) {
		t.Errorf("recent holds %d entries under %d keys", len(s.journal.recent), len(s.journal.recentKeys))
	}
	if len(s.journal.recent) > recentLimit || len(s.journal.recentKeys) > recentLimit {
		t.Errorf("recent holds %d entries and %d keys, limit %d", len(s.journal.recent), len(s.journal.recentKeys), recentLimit)
	}
}

// openCoreStore opens a store in a temporary directory serving the core
// kinds (Events among them), closed when the test ends.
func openCoreStore(t *testing.T) *Store {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.TempDir(), Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

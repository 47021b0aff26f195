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
// journal's last entry is the object its file's YAML gives, for values
// whose YAML form is tricky, and that the shortcut is taken only for that
// entry's version of that object.
func TestJournalTailReadMatchesFile(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.TempDir(), Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
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
		got := s.fromJournalTail(path, rv)
		if got == nil {
			t.Fatalf("value %d: the object just written was not read from the journal", i)
		}
		if !reflect.DeepEqual(got.Object, fromYAML) {
			t.Errorf("value %d (%#v):\nfrom the journal %#v\nfrom the file    %#v", i, v, got.Object, fromYAML)
		}
		if s.fromJournalTail(path, rv-1) != nil {
			t.Errorf("value %d: another version was read from the journal", i)
		}
		if i > 0 && s.fromJournalTail(s.objectPath(r, "default", fmt.Sprintf("e%d", i-1)), rv) != nil {
			t.Errorf("value %d: another object was read from the journal", i)
		}
	}
}

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

package yamlenc

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// scalars are strings whose YAML form needs a decision: quoting (they
// read back as another type, or start with an indicator), escaping,
// folding at 80 columns, key order; and what Encode declines.
var scalars = []interface{}{
	"", "a", "yes", "no", "on", "off", "y", "n", "Y", "N", "true", "False", "TRUE", "null", "Null", "NULL", "~",
	"1e3", "1_000", "0x1F", "0o17", "012", "+1", "-1", ".5", "1.", ".", "..", "...", "---", "--", "---x", "...x",
	".inf", "-.Inf", "+.INF", ".nan", ".NaN", "+", "-", "0b101", "-0b101", "0b2", "1:20", "190:20:30.15", "-1:2",
	"2026-11-24", "2026-11-24T19:33:49Z", "2026-11-24T19:33:49.123456Z", "2026-1-2", "2026-11-24 19:33:49", "12:30:00",
	"<<", "=", "- x", "-x", "a: b", "a:b", "a:", ":a", ": a", "?", "? a", "?a", "#", "a #b", "a#b", "'q'", "\"q\"",
	"it's", `say "hi"`, `back\slash`, "{x}", "[x]", "x,y", "&a", "*a", "!t", "%d", "@x", "`x`", "|", ">",
	" lead", "trail ", "two  spaces", "  ", " ", "<html>&amp;", "tether-rv-1", "9223372036854775808", "18446744073709551616",
	strings.Repeat("word ", 30), strings.Repeat("x", 100) + " y", "a " + strings.Repeat("long", 30) + " b c",
	strings.Repeat("double  spaced ", 12), strings.Repeat("'quoted' text ", 10), strings.Repeat(`"quoted" \text `, 10),
	": " + strings.Repeat("colon text ", 10), "# " + strings.Repeat("comment text ", 10) + " ",
	strings.Repeat("- ", 50), strings.Repeat("ab ", 27) + "  trailing",
	// Declined: outside printable ASCII.
	"tab\there", "line\nbreak", "ünïcødé", "\x7f", "\x01",
	int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), true, false, nil,
	[]interface{}{}, map[string]interface{}{}, []interface{}{"a", int64(1), nil, []interface{}{}, []interface{}{"b", []interface{}{"c"}}},
	map[string]interface{}{"1": "one", "true": "t", "": "empty", "a b": "c", "null": nil, "-": "-", "b": "x", "A": "y", "10": "ten", "9": "nine",
		"a10": 1, "a9": 2, "a09": 3, "a010": 4, "x0": 5, "x00": 6, "0": 7, "00": 8, "_": 9, "Z": 10},
	// Declined: a float, an int, a key too long to be simple.
	0.5, 3, map[string]interface{}{strings.Repeat("k", 129): "v"},
}

// tree puts v in an object's places: a value at each depth, a list item,
// a list of lists, a key.
func tree(v interface{}) map[string]interface{} {
	m := map[string]interface{}{
		"apiVersion": "agents.tether.dev/v1alpha1",
		"kind":       "Hook",
		"metadata":   map[string]interface{}{"name": "x", "namespace": "default", "resourceVersion": "12", "generation": int64(2)},
		"spec": map[string]interface{}{"v": v, "list": []interface{}{v, map[string]interface{}{"v": v, "w": []interface{}{v}}, []interface{}{v, []interface{}{v}}},
			"deep": map[string]interface{}{"deeper": map[string]interface{}{"deepest": v}}},
	}
	if s, ok := v.(string); ok {
		m["spec"].(map[string]interface{})[s] = "key"
	}
	return m
}

func TestEncodeIsYAMLv2(t *testing.T) {
	for i, v := range scalars {
		for _, m := range []map[string]interface{}{tree(v), {"v": v}} {
			want, err := yamlv2.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := Encode(m)
			if !ok {
				if covered(m) {
					t.Errorf("value %d (%#v): declined though covered", i, v)
				}
				continue
			}
			if string(got) != string(want) {
				t.Errorf("value %d (%#v):\ngot\n%s\nwant\n%s", i, v, got, want)
			}
		}
	}
}

func TestEncodeDeclines(t *testing.T) {
	cases := []struct {
		name string
		v    interface{}
	}{
		{"tab", "a\tb"},
		{"line break", "a\nb"},
		{"non-ASCII", "é"},
		{"DEL", "\x7f"},
		{"float", 1.5},
		{"int", 3},
		{"typed map", map[string]string{"a": "b"}},
		{"long key", map[string]interface{}{strings.Repeat("k", maxSimpleKey+1): int64(1)}},
		{"non-ASCII key", map[string]interface{}{"é": int64(1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := Encode(tree(tc.v)); ok {
				t.Errorf("%#v encoded; want it declined", tc.v)
			}
		})
	}
	if _, ok := Encode(map[string]interface{}{strings.Repeat("k", maxSimpleKey): int64(1)}); !ok {
		t.Error("a key of the longest simple length was declined")
	}
}

// The objects tether stores take the fast path: every Hook, Worker and
// Checkpoint in testdata, as a store holds them (decoded from JSON).
func TestEncodeCoversStoredObjects(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata objects: %v", err)
	}
	covered := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			continue // a file that is not one object
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			continue // not an object
		}
		asStored := u.Object
		want, err := yamlv2.Marshal(asStored)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Encode(asStored)
		if !ok {
			continue
		}
		covered++
		if string(got) != string(want) {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", f, got, want)
		}
	}
	t.Logf("%d of %d testdata files are objects Encode writes", covered, len(files))
	if covered*2 < len(files) {
		t.Errorf("only %d of %d testdata objects take the fast path", covered, len(files))
	}
}

func FuzzEncode(f *testing.F) {
	for _, v := range scalars {
		if s, ok := v.(string); ok {
			f.Add(s, s+" "+s, "k")
		}
	}
	f.Fuzz(func(t *testing.T, a, b, key string) {
		compareWithYAMLv2(t, a, b, key)
		// Most random strings are declined; the same bytes mapped to
		// printable ASCII are not.
		compareWithYAMLv2(t, printable(a), printable(b), printable(key))
	})
}

// printable maps each byte of s to a printable ASCII character, spaces
// and the characters YAML treats specially most often.
func printable(s string) string {
	const alphabet = " :#-'\"?,[]{}&*!|>%@`~.+_0123456789eEbxoyYnNtTfF abcz"
	out := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = alphabet[int(s[i])%len(alphabet)]
	}
	return string(out)
}

func compareWithYAMLv2(t *testing.T, a, b, key string) {
	t.Helper()
	{
		m := tree(a)
		m["other"] = map[string]interface{}{key: b, b: []interface{}{a, key}, "n": int64(len(a))}
		want, err := yamlv2.Marshal(m)
		if err != nil {
			return
		}
		got, ok := Encode(m)
		if !ok {
			if covered(m) {
				t.Fatalf("declined though covered: %q %q %q", a, b, key)
			}
			return
		}
		if string(got) != string(want) {
			t.Fatalf("%q %q %q:\ngot\n%s\nwant\n%s", a, b, key, got, want)
		}
	}
}

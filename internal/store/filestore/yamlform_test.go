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
	"encoding/json"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// trickyValues are values whose YAML form needs quoting, escaping or a
// number format decision.
var trickyValues = []interface{}{
	"yes", "no", "on", "off", "y", "n", "true", "False", "null", "Null", "~", "",
	"1e3", "1_000", "0x1F", "0o17", "012", "+1", "-1", ".5", "1.", ".inf", "-.Inf", ".nan",
	"2026-11-24", "2026-11-24T19:33:49Z", "12:30:00", "<<", "=",
	"-", "- x", "a: b", "a:b", "#", "a #b", "'q'", "\"q\"", "{x}", "[x]", "&a", "*a", "!t", "%d", "@x", "`x`", "|", ">",
	"line\nbreak\n", "two\n\nblank", "trailing\n", "\n", " lead", "trail ", "tab\there", "cr\rlf",
	"ünïcødé ✓", "\u2028", "\u0085", "\ufeffbom", "\x01control", "\x7f", "emoji 😀", "<html>&amp;",
	int64(0), int64(-1), int64(1) << 53, int64(math.MaxInt64), int64(math.MinInt64),
	true, false, nil,
	[]interface{}{}, map[string]interface{}{}, []interface{}{"a", int64(1), nil, []interface{}{}},
	map[string]interface{}{"1": "one", "true": "t", "": "empty", "a b": "c", "null": nil, "-": "-", "b": "x", "A": "y", "10": "ten", "9": "nine"},
}

// TestObjectYAMLIsJSONToYAML checks that objectYAML writes what JSONToYAML
// writes, byte for byte, whichever way it takes.
func TestObjectYAMLIsJSONToYAML(t *testing.T) {
	values := append([]interface{}{0.5, 1e-7, 1e21, 1e6, 3.0, 1e19, math.Copysign(0, -1), "\xff invalid"}, trickyValues...)
	for i, v := range values {
		obj := map[string]interface{}{
			"apiVersion": "agents.tether.dev/v1alpha1",
			"kind":       "Hook",
			"metadata":   map[string]interface{}{"name": "x", "namespace": "default", "resourceVersion": "12", "generation": int64(2)},
			"spec":       map[string]interface{}{"v": v, "list": []interface{}{v, map[string]interface{}{"v": v}}},
		}
		js, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := yaml.JSONToYAML(js)
		// The object as the store holds it: decoded from its JSON.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		for _, tree := range []map[string]interface{}{obj, u.Object} {
			got, err := objectYAML(tree, js)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("value %d (%#v): error %v, JSONToYAML's %v", i, v, err, wantErr)
			}
			if string(got) != string(want) {
				t.Errorf("value %d (%#v), direct %v:\ngot\n%s\nwant\n%s", i, v, sameAsFromJSON(tree), got, want)
			}
		}
	}
}

// TestObjectYAMLIsJSONToYAMLOnRandomText compares objectYAML with
// JSONToYAML on random strings, as keys and values, made of the characters
// YAML's quoting rules turn on. (A sweep of every rune up to U+2FFFF found
// differences only at DEL, U+0080 to U+009F and U+FFFE/U+FFFF, which
// plainText refuses.)
func TestObjectYAMLIsJSONToYAMLOnRandomText(t *testing.T) {
	alphabet := []string{" ", "\n", "\r", "\t", ":", "#", "-", "\"", "'", "a", "1", ".", "e", "ü", "\u2028", "\u2029",
		"\\", "?", "!", "&", "*", "|", ">", "{", "[", ",", "%", "@", "`", "~", "0x", "true", "null", "\x00", "\x1b",
		"\ufeff", "\u00a0", "\u0085", "\x7f", "\xff"}
	rng := rand.New(rand.NewSource(1))
	for range 3000 {
		var b strings.Builder
		for range rng.Intn(8) {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		s := b.String()
		for _, obj := range []map[string]interface{}{{"k": s}, {s: "v"}, {"k": []interface{}{s, map[string]interface{}{s: s}}}} {
			js, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := yaml.JSONToYAML(js)
			got, err := objectYAML(obj, js)
			if (err != nil) != (wantErr != nil) || string(got) != string(want) {
				t.Fatalf("%q: objectYAML gave %q (error %v), JSONToYAML %q (error %v)", s, got, err, want, wantErr)
			}
		}
	}
}

// BenchmarkObjectYAML compares objectYAML with JSONToYAML on a Hook.
func BenchmarkObjectYAML(b *testing.B) {
	js := []byte(`{"apiVersion":"agents.tether.dev/v1alpha1","kind":"Hook","metadata":{"creationTimestamp":"2026-11-24T19:33:49Z","generation":3,"name":"update","namespace":"default","resourceVersion":"123","uid":"0b7cbd59-41a3-4c1a-bb7c-7a3c3b0c6f11"},"spec":{"goal":"goal 17","maxAttempts":3,"steps":[{"name":"one"}]}}`)
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		b.Fatal(err)
	}
	b.Run("objectYAML", func(b *testing.B) {
		for b.Loop() {
			if _, err := objectYAML(u.Object, js); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("JSONToYAML", func(b *testing.B) {
		for b.Loop() {
			if _, err := yaml.JSONToYAML(js); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEncodeAheadIsTheEncoding checks that an object encoded before the
// write lock, with its resourceVersion written in afterwards, is byte for
// byte what encoding it with that resourceVersion gives, whichever way
// objectYAML takes, and that an object already holding the placeholder is
// not encoded ahead.
func TestEncodeAheadIsTheEncoding(t *testing.T) {
	encoders := []struct {
		name   string
		encode func(*unstructured.Unstructured) *encodedObject
	}{
		{"encodeAhead", encodeAhead},
		// From the JSON an update already made, as prepareUpdate does.
		{"encodeAheadFrom", func(obj *unstructured.Unstructured) *encodedObject {
			js, err := obj.MarshalJSON()
			if err != nil {
				return encodeAhead(obj)
			}
			return encodeAheadFrom(obj, js)
		}},
	}
	values := append([]interface{}{0.5, 1e21, "\xff invalid", "\u0085"}, trickyValues...)
	for _, e := range encoders {
		// A nested resourceVersion equal to the object's makes its text occur
		// twice in the JSON.
		for _, nestedRV := range []string{"7", "12"} {
			for i, v := range values {
				for _, rv := range []uint64{1, 9, 10, 42, 1000000, math.MaxUint64} {
					obj := &unstructured.Unstructured{Object: map[string]interface{}{
						"apiVersion": "agents.tether.dev/v1alpha1",
						"kind":       "Hook",
						"metadata":   map[string]interface{}{"name": "x", "namespace": "default", "resourceVersion": "12", "generation": int64(2)},
						"spec":       map[string]interface{}{"v": v, "resourceVersion": nestedRV, "list": []interface{}{v, map[string]interface{}{"v": v}}},
					}}
					enc := e.encode(obj)
					if enc == nil {
						// Only what cannot be encoded at all (the write then fails
						// under the lock with objectYAML's error) is left to stage.
						if js, err := obj.MarshalJSON(); err == nil {
							if _, err := objectYAML(obj.Object, js); err == nil {
								t.Errorf("value %d (%#v): not encoded ahead", i, v)
							}
						}
						continue
					}
					if got := obj.GetResourceVersion(); got != "12" {
						t.Fatalf("value %d: encodeAhead left resourceVersion %q", i, got)
					}
					js, body := enc.with(rv)
					obj.SetResourceVersion(strconv.FormatUint(rv, 10))
					wantJS, err := obj.MarshalJSON()
					if err != nil {
						t.Fatal(err)
					}
					wantBody, err := objectYAML(obj.Object, wantJS)
					if err != nil {
						t.Fatal(err)
					}
					if string(js) != string(wantJS) {
						t.Errorf("value %d, rv %d: JSON\n%s\nwant\n%s", i, rv, js, wantJS)
					}
					if string(body) != string(wantBody) {
						t.Errorf("value %d, rv %d: YAML\n%s\nwant\n%s", i, rv, body, wantBody)
					}
				}
			}
		}
		obj := &unstructured.Unstructured{Object: map[string]interface{}{
			"metadata": map[string]interface{}{"name": "x", "resourceVersion": "3"},
			"spec":     map[string]interface{}{"goal": "say " + string(rvPlaceholder)},
		}}
		if e.encode(obj) != nil {
			t.Errorf("%s: an object holding the placeholder was encoded ahead", e.name)
		}
	}
}

// TestSameContentAsItsJSON holds sameContentAs, which compares with an
// encoding already made, to sameContent.
func TestSameContentAsItsJSON(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Hook",
			"metadata": map[string]interface{}{"name": "x", "namespace": "default", "resourceVersion": "12"},
			"spec":     map[string]interface{}{"goal": "<b>&</b>", "n": int64(3)},
			"status":   map[string]interface{}{"state": "Running", "f": 0.5},
		}}
	}
	cases := []struct {
		name   string
		change func(*unstructured.Unstructured)
	}{
		{"unchanged", func(*unstructured.Unstructured) {}},
		{"status field", func(u *unstructured.Unstructured) { u.Object["status"].(map[string]interface{})["state"] = "Failed" }},
		{"status gone", func(u *unstructured.Unstructured) { delete(u.Object, "status") }},
		{"spec number", func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]interface{})["n"] = int64(4) }},
		{"html escaped alike", func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]interface{})["goal"] = "<b>&</b>" }},
		{"resourceVersion", func(u *unstructured.Unstructured) { u.SetResourceVersion("13") }},
		{"label", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.change(b)
			js, err := b.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := sameContentAs(a, js), sameContent(a, b); got != want {
				t.Errorf("sameContentAs %v, sameContent %v", got, want)
			}
		})
	}
}

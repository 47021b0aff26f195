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

package jsonc

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestAppendRemove(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		path []string // keys from the root to the container
		key  string
		item string
		unit string
		want string
	}{
		{name: "array on lines", doc: "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n", path: []string{"a"}, item: `{"x":[3]}`,
			want: "{\n  \"a\": [\n    1,\n    2,\n    {\n      \"x\": [\n        3\n      ]\n    }\n  ]\n}\n"},
		{name: "compact array", doc: `{"a":[1,2]}`, path: []string{"a"}, item: `{"x":3}`, want: `{"a":[1,2, {"x":3}]}`},
		{name: "empty array", doc: "{\n  \"a\": []\n}", path: []string{"a"}, item: `3`, want: "{\n  \"a\": [\n    3\n  ]\n}"},
		{name: "empty object, tabs", doc: "{\n\t\"a\": 1,\n\t\"b\": {}\n}", path: []string{"b"}, key: "k", item: `[1]`, unit: "\t",
			want: "{\n\t\"a\": 1,\n\t\"b\": {\n\t\t\"k\": [\n\t\t\t1\n\t\t]\n\t}\n}"},
		{name: "object with comments", doc: "{\n  // the theme\n  \"ui\": {\"theme\": \"x\"} /* kept */\n}\n", key: "hooks", item: `{}`,
			want: "{\n  // the theme\n  \"ui\": {\"theme\": \"x\"},\n  \"hooks\": {} /* kept */\n}\n"},
		{name: "empty document object", doc: "{}", key: "hooks", item: `{"a":1}`, want: "{\n  \"hooks\": {\n    \"a\": 1\n  }\n}"},
		{name: "four spaces", doc: "{\n    \"a\": 1\n}\n", key: "b", item: `{"c":2}`, want: "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": 2\n    }\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := find(t, tt.doc, tt.path)
			got, err := Append([]byte(tt.doc), c, tt.key, []byte(tt.item), cmp.Or(tt.unit, "  "))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("Append:\n%s\nwant:\n%s", got, tt.want)
			}
			c = find(t, string(got), tt.path)
			back := Remove(got, c, c.count()-1)
			if string(back) != tt.doc {
				t.Fatalf("Remove gave:\n%q\nwant the original:\n%q", back, tt.doc)
			}
		})
	}
}

func TestRemoveMiddle(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"[\n  1,\n  2,\n  3\n]", "[\n  1,\n  3\n]"},
		{"[1, 2, 3]", "[1, 3]"},
		{"[\n  1,\n  2, // two\n  3\n]", "[\n  1,\n  // two\n  3\n]"},
	}
	for _, tt := range tests {
		v, err := Parse([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(Remove([]byte(tt.doc), v, 1)); got != tt.want {
			t.Errorf("Remove(%q) = %q, want %q", tt.doc, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		doc       string
		line, col int
		msg       string
	}{
		{doc: "{\n  \"a\": 1,\n}", line: 3, col: 1, msg: "invalid character '}'"},
		{doc: "{\n  /* open\n", line: 2, col: 3, msg: "unterminated /* comment"},
		{doc: "{\"a\": {\"b\": 1, \"b\": 2}}", line: 1, col: 16, msg: `duplicate key "a.b"`},
		{doc: "{\"a\": \"//not a comment\",", line: 1, col: 25, msg: "unexpected end"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.doc))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Parse(%q) = %v, want a SyntaxError", tt.doc, err)
		}
		line, col := Position([]byte(tt.doc), se.Offset)
		if line != tt.line || col != tt.col || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Parse(%q): %d:%d: %s, want %d:%d: %s", tt.doc, line, col, se.Msg, tt.line, tt.col, tt.msg)
		}
	}
	if _, err := Parse([]byte("// settings\n{\"a\": \"x//y\" /* c */}\n")); err != nil {
		t.Errorf("comments: %v", err)
	}
}

func find(t *testing.T, doc string, path []string) *Value {
	t.Helper()
	v, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		v = v.Get(k)
	}
	return v
}

// FuzzParse: Parse never panics, Strip keeps every offset and line, and an
// accepted document's spans hold what encoding/json reads there.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"{}", "// c\n{\"a\": [1, {\"b\": \"/*\"}] /* x\n */}", "[1,]", "{\"a\":1,\"a\":2}", "/* open", `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		plain, err := Strip(data)
		if err == nil && (len(plain) != len(data) || bytes.Count(plain, []byte{'\n'}) != bytes.Count(data, []byte{'\n'})) {
			t.Fatalf("Strip changed offsets: %q -> %q", data, plain)
		}
		v, err := Parse(data)
		if err != nil {
			return
		}
		var walk func(v *Value)
		walk = func(v *Value) {
			if !json.Valid(plain[v.Start:v.End]) {
				t.Fatalf("span %d-%d of %q is not a value", v.Start, v.End, data)
			}
			for _, m := range v.Members {
				walk(m.Value)
			}
			for _, e := range v.Elems {
				walk(e)
			}
		}
		walk(v)
	})
}

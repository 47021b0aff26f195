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

// Package fieldpath locates a decoding error in its input: the JSON path of
// the field ("spec.steps[0].validate[0].timeout") and its line in the YAML
// (or JSON) the user wrote. Go's JSON decoders name the field of a type
// mismatch, but not of an error returned by a field's own UnmarshalJSON
// (metav1.Duration, metav1.Time, resource.Quantity), which is where a bad
// duration fails; Of finds that field too.
package fieldpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Error is a decoding error located in its input.
type Error struct {
	// Line is the one-based line of the offending node; 0 when unknown.
	Line int
	// Field is the JSON path of the offending field; empty when there is none.
	Field string
	// Err is the problem.
	Err error
	// Also are the other fields that fail in the same input, in the order
	// of the type's fields.
	Also []*Error
}

// Error formats the error as "line N: field: problem", followed by the
// other failing fields, each as "; line N: field: problem".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	for _, o := range e.Also {
		b.WriteString("; " + o.Error())
	}
	return b.String()
}

// Unwrap returns the problem.
func (e *Error) Unwrap() error { return e.Err }

var (
	yamlLine    = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	convertLine = regexp.MustCompile(`(?s)^(?:error converting YAML to JSON: )?yaml: unmarshal errors:\s*line (\d+): (.*?)\s*$`)
)

// DecodeYAML decodes data, one YAML document, strictly into out: unknown and
// duplicate fields, values of the wrong type and values a field's own decoder
// refuses are errors. It returns the document's root node, for Line, and a
// *Error locating any failure.
func DecodeYAML(data []byte, out any) (*yamlv3.Node, error) {
	var doc yamlv3.Node
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &yamlv3.Node{Kind: yamlv3.MappingNode, Line: 1}, nil
		}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &Error{Line: line, Err: errors.New(m[2])}
		}
		return nil, &Error{Err: errors.New(strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	var next yamlv3.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, &Error{Line: next.Line, Err: errors.New("only one YAML document is allowed")}
	}
	root := &doc
	if root.Kind == yamlv3.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind == yamlv3.ScalarNode && root.Tag == "!!null" {
		return &yamlv3.Node{Kind: yamlv3.MappingNode, Line: 1}, nil
	}
	fail := func(field string, err error) (*yamlv3.Node, error) {
		return nil, &Error{Line: Line(root, field), Field: field, Err: err}
	}
	if root.Kind != yamlv3.MappingNode {
		return fail("", errors.New("the document must be a mapping"))
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		if m := convertLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &Error{Line: line, Err: errors.New(m[2])}
		}
		return fail("", errors.New(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: yaml: ")))
	}
	strict, err := kjson.UnmarshalStrict(js, out)
	if err != nil {
		if failures := Failures(js, reflect.TypeOf(out)); len(failures) > 0 {
			return nil, Locate(root, failures)
		}
		return fail("", Clean(err))
	}
	if len(strict) > 0 {
		field := ""
		var fp interface{ FieldPath() string }
		if errors.As(strict[0], &fp) {
			field = fp.FieldPath()
		}
		return fail(field, strict[0])
	}
	return root, nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// Failure is one field whose value does not decode on its own.
type Failure struct {
	// Field is the field's JSON path, with list indices.
	Field string
	// Err is the field's own decoding error, reworded by Clean.
	Err error
}

// Failures returns every field whose value fails to decode when js is
// decoded into a value of type t, in the order of t's fields, each with its
// own error: the error of a whole-document decode names one field's value,
// which need not be the first field's. It decodes the fields one by one:
// call it only after a decode failed.
func Failures(js []byte, t reflect.Type) []Failure {
	var generic any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &generic); err != nil {
		return nil
	}
	var out []Failure
	find(generic, t, "", &out)
	return out
}

// Of returns the JSON path of the first field Failures finds, or "" when no
// single field fails on its own.
func Of(js []byte, t reflect.Type) string {
	if f := Failures(js, t); len(f) > 0 {
		return f[0].Field
	}
	return ""
}

// Locate turns failures, as Failures returns them, into one *Error with
// the line of each field below root, in the order of the lines: the first
// in the input, and the others in Also.
func Locate(root *yamlv3.Node, failures []Failure) *Error {
	errs := make([]*Error, len(failures))
	for i, f := range failures {
		errs[i] = &Error{Line: Line(root, f.Field), Field: f.Field, Err: f.Err}
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return a.Line - b.Line })
	errs[0].Also = errs[1:]
	return errs[0]
}

// find appends to out the path below prefix, and the error, of each value
// in v that does not decode into t.
func find(v any, t reflect.Type, prefix string, out *[]Failure) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return
	}
	check := func() {
		if err := decodeErr(v, t); err != nil {
			*out = append(*out, Failure{Field: prefix, Err: Clean(err)})
		}
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		check()
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			check()
			return
		}
		findInStruct(obj, t, prefix, out)
	case reflect.Slice, reflect.Array:
		items, ok := v.([]any)
		if !ok {
			check()
			return
		}
		for i, item := range items {
			find(item, t.Elem(), prefix+"["+strconv.Itoa(i)+"]", out)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			check()
			return
		}
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			find(obj[key], t.Elem(), join(prefix, key), out)
		}
	default:
		check()
	}
}

func findInStruct(obj map[string]any, t reflect.Type, prefix string, out *[]Failure) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			findInStruct(obj, f.Type, prefix, out)
			continue
		}
		if name == "" {
			name = f.Name
		}
		find(obj[name], f.Type, join(prefix, name), out)
	}
}

// decodeErr returns the error of decoding v, re-encoded, into a new value
// of type t.
func decodeErr(v any, t reflect.Type) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return kjson.UnmarshalCaseSensitivePreserveInts(js, reflect.New(t).Interface())
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

var segment = regexp.MustCompile(`([^.\[\]]+)|\[(\d+)\]`)

// Line returns the one-based line of the field at a JSON path such as
// "spec.steps[1].name" below root, or of the deepest node on the way there.
// Path segments without an index that cross a list descend into the first
// element holding the next key.
func Line(root *yamlv3.Node, field string) int {
	if root.Kind == yamlv3.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	line := root.Line
	n := root
	for _, m := range segment.FindAllStringSubmatch(field, -1) {
		key, idx := m[1], m[2]
		if n.Kind == yamlv3.SequenceNode && key != "" {
			var found *yamlv3.Node
			for _, item := range n.Content {
				if mappingValue(item, key) != nil {
					found = item
					break
				}
			}
			if found == nil {
				return line
			}
			n = found
		}
		switch {
		case idx != "":
			i, _ := strconv.Atoi(idx)
			if n.Kind != yamlv3.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			k := mappingKey(n, key)
			if k == nil {
				return line
			}
			line = k.Line
			n = mappingValue(n, key)
		}
	}
	return line
}

func mappingKey(n *yamlv3.Node, key string) *yamlv3.Node {
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

func mappingValue(n *yamlv3.Node, key string) *yamlv3.Node {
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

var typeErrorText = regexp.MustCompile(`^json: cannot unmarshal (.*) into Go (?:struct field \S+|value) of type (.*)$`)

// Clean rewords a JSON decoding error for a person: Go's type names become
// "invalid value: string, expected int32", and the "json: " prefix goes.
func Clean(err error) error {
	if m := typeErrorText.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("invalid value: %s, expected %s", m[1], m[2])
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

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

// Package manifest decodes multi-document YAML manifests strictly into typed
// API objects. Every error names the file, the line and, where there is one,
// the field, so that a person can fix the input without guessing.
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/internal/fieldpath"
)

// Document is one decoded YAML document of a manifest.
type Document struct {
	// Source is the file name the document came from, or "-" for stdin.
	Source string
	// Index is the zero-based position of the document in its source.
	Index int
	// Line is the one-based line at which the document starts.
	Line int
	// Object is the strictly decoded, typed object.
	Object client.Object
	// JSON is the document converted to JSON, as written by the user.
	JSON []byte

	root *yamlv3.Node
}

// FieldLine returns the one-based line of the field at a JSON path such as
// "spec.steps[1].name", or of its nearest ancestor present in the document.
func (d Document) FieldLine(field string) int {
	if d.root == nil {
		return d.Line
	}
	return lineOf(d.root, field)
}

// FieldLine returns the one-based line of the field at a JSON path such as
// "spec.steps[1].name" in data, a single YAML document, or of its nearest
// ancestor present in it; 0 when data is not YAML.
func FieldLine(data []byte, field string) int {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return 0
	}
	return lineOf(doc.Content[0], field)
}

// Error is a decoding error located in its source.
type Error struct {
	// Source is the file name.
	Source string
	// Line is the one-based line of the offending node; 0 when unknown.
	Line int
	// Index is the zero-based document index; -1 when the stream itself is broken.
	Index int
	// Field is the JSON path of the offending field, if any.
	Field string
	// Err is the underlying problem.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Index >= 0 {
		fmt.Fprintf(&b, " (document %d)", e.Index+1)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Decode splits data into YAML documents and decodes each strictly into the
// Go type that scheme registers for its apiVersion and kind. Empty documents
// are skipped. It fails on the first bad document and returns no documents then.
//
// A source whose name ends in ".json" is JSON, one object or a stream of
// them, and is parsed as strict JSON first: a trailing comma, a comment or
// anything else JSON refuses is an error with its line, although YAML would
// accept it.
func Decode(source string, data []byte, scheme *runtime.Scheme) ([]Document, error) {
	if strings.EqualFold(filepath.Ext(source), ".json") {
		return decodeJSON(source, data, scheme)
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var docs []Document
	for index := 0; ; index++ {
		var node yamlv3.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, syntaxError(source, index, err)
		}
		if isEmpty(&node) {
			continue
		}
		doc, err := decodeDocument(source, index, &node, scheme)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// decodeJSON checks each JSON value of data with a JSON parser, then decodes
// it as its YAML document, padded with newlines so that its lines are the
// file's.
func decodeJSON(source string, data []byte, scheme *runtime.Scheme) ([]Document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []Document
	for index := 0; ; index++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, jsonSyntaxError(source, index, data, dec.InputOffset(), err)
		}
		start := int(dec.InputOffset()) - len(raw)
		line := 1 + bytes.Count(data[:start], []byte("\n"))
		padded := append(bytes.Repeat([]byte("\n"), line-1), raw...)
		var node yamlv3.Node
		if err := yamlv3.Unmarshal(padded, &node); err != nil {
			return nil, syntaxError(source, index, err)
		}
		doc, err := decodeDocument(source, index, &node, scheme)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// jsonSyntaxError locates a JSON parser's error by its byte offset.
func jsonSyntaxError(source string, index int, data []byte, offset int64, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		offset = syn.Offset
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		offset, err = int64(len(data)), errors.New("unexpected end of JSON input")
	}
	offset = min(max(offset, 0), int64(len(data)))
	line := 1 + bytes.Count(bytes.TrimRight(data[:offset], "\n"), []byte("\n"))
	return &Error{Source: source, Line: line, Index: index, Err: fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))}
}

func syntaxError(source string, index int, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Source: source, Line: line, Index: index, Err: errors.New(m[2])}
	}
	return &Error{Source: source, Index: index, Err: errors.New(strings.TrimPrefix(msg, "yaml: "))}
}

func isEmpty(n *yamlv3.Node) bool {
	if n.Kind == yamlv3.DocumentNode {
		return len(n.Content) == 0 || isEmpty(n.Content[0])
	}
	return n.Kind == yamlv3.ScalarNode && n.Tag == "!!null"
}

func decodeDocument(source string, index int, node *yamlv3.Node, scheme *runtime.Scheme) (Document, error) {
	root := node
	if root.Kind == yamlv3.DocumentNode {
		root = root.Content[0]
	}
	fail := func(field string, err error) (Document, error) {
		return Document{}, &Error{Source: source, Line: lineOf(root, field), Index: index, Field: field, Err: err}
	}
	if root.Kind != yamlv3.MappingNode {
		return fail("", fmt.Errorf("a document must be a mapping (an object), found %s", kindName(root)))
	}
	if dup := findDuplicateKey(root, ""); dup != nil {
		return Document{}, &Error{Source: source, Line: dup.line, Index: index, Field: dup.path, Err: errors.New("duplicate field")}
	}
	raw, err := yamlv3.Marshal(root)
	if err != nil {
		return fail("", err)
	}
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return fail("", err)
	}

	var tm struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return fail("", err)
	}
	apiVersion, ok := tm.APIVersion.(string)
	if !ok || apiVersion == "" {
		return fail("apiVersion", errors.New("required string field is missing"))
	}
	kind, ok := tm.Kind.(string)
	if !ok || kind == "" {
		return fail("kind", errors.New("required string field is missing"))
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fail("apiVersion", err)
	}
	gvk := gv.WithKind(kind)
	if !scheme.Recognizes(gvk) {
		if versions := scheme.VersionsForGroupKind(gvk.GroupKind()); len(versions) > 0 {
			return fail("apiVersion", fmt.Errorf("kind %s is not served at %q; use %s", kind, apiVersion, versions[0].String()))
		}
		return fail("kind", fmt.Errorf("unknown kind %q in %q", kind, apiVersion))
	}
	obj, err := scheme.New(gvk)
	if err != nil {
		return fail("kind", err)
	}
	cobj, ok := obj.(client.Object)
	if !ok {
		return fail("kind", fmt.Errorf("%s is not an object kind", gvk))
	}
	strict, err := kjson.UnmarshalStrict(js, cobj)
	if err != nil {
		if failures := fieldpath.Failures(js, reflect.TypeOf(cobj)); len(failures) > 0 {
			// Each field with its own error: the whole decode's error
			// names the value of whichever field it met first.
			ferr := fieldpath.Locate(root, failures)
			return fail(ferr.Field, &fieldpath.Error{Err: ferr.Err, Also: ferr.Also})
		}
		return fail(typeErrorField(err), cleanJSONError(err))
	}
	if len(strict) > 0 {
		field := ""
		var fp interface{ FieldPath() string }
		if errors.As(strict[0], &fp) {
			field = fp.FieldPath()
		}
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return fail(field, errors.New(strings.Join(msgs, ", ")))
	}
	// A namespace becomes a path in the local store and a URL segment on a
	// cluster: one that is not a namespace name ("../x") is refused here,
	// with its line, before either is formed.
	if ns := cobj.GetNamespace(); ns != "" {
		if msgs := apivalidation.ValidateNamespaceName(ns, false); len(msgs) > 0 {
			return fail("metadata.namespace", fmt.Errorf("invalid namespace name %q: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	cobj.GetObjectKind().SetGroupVersionKind(gvk)
	return Document{Source: source, Index: index, Line: root.Line, Object: cobj, JSON: js, root: root}, nil
}

// typeErrorField extracts the field path from a json type error. The error
// type is internal to sigs.k8s.io/json, so it is read through reflection.
func typeErrorField(err error) string {
	v := reflect.ValueOf(err)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	f := v.Elem().FieldByName("Field")
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}

func cleanJSONError(err error) error { return fieldpath.Clean(err) }

func kindName(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.SequenceNode:
		return "a list"
	case yamlv3.ScalarNode:
		return "a scalar " + strconv.Quote(n.Value)
	case yamlv3.AliasNode:
		return "an alias"
	default:
		return "something else"
	}
}

type duplicateKey struct {
	path string
	line int
}

// findDuplicateKey reports the first mapping key that repeats, with its
// original line; after conversion to JSON the line would be lost.
func findDuplicateKey(n *yamlv3.Node, path string) *duplicateKey {
	switch n.Kind {
	case yamlv3.MappingNode:
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			child := key
			if path != "" {
				child = path + "." + key
			}
			if seen[key] {
				return &duplicateKey{path: child, line: n.Content[i].Line}
			}
			seen[key] = true
			if d := findDuplicateKey(n.Content[i+1], child); d != nil {
				return d
			}
		}
	case yamlv3.SequenceNode:
		for i, item := range n.Content {
			if d := findDuplicateKey(item, path+"["+strconv.Itoa(i)+"]"); d != nil {
				return d
			}
		}
	}
	return nil
}

// lineOf returns the line of the field at a JSON path below root.
func lineOf(root *yamlv3.Node, field string) int { return fieldpath.Line(root, field) }

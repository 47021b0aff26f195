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
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Fields is a list option of the file store: an unstructured list given
// it may return each object with only the fields at these paths (each a
// dotted field path such as "status.currentStep"; the whole value at the
// path is kept; "[]" after a name stands for each element of the array
// there, as in "status.conditions[].reason"), besides apiVersion, kind and the metadata a table or a
// selector reads (name, namespace, labels, creationTimestamp). The objects
// taken from the journal are decoded so, skipping the rest of their JSON
// undecoded; any other object is returned whole. A table needs only its
// columns' fields: `tether get` lists so, and prints what the full
// objects would print. Other clients ignore the option.
type Fields []string

// ApplyToList implements client.ListOption; the file store's List reads
// the option itself.
func (Fields) ApplyToList(*client.ListOptions) {}

// Transform is a list and watch option of the file store: it changes, in
// place, each object the list or watch returns, as an informer's transform
// does (cache.TransformFunc), and the store applies it as soon as it has
// decoded the object, on the goroutine that decoded it, before it decodes
// the next. A transform drops fields and swaps strings for shared copies:
// applied while a large list still decodes, what it throws away is the
// space the objects decoded after it take; applied once the list has
// ended, as an informer applies it, that space stays as holes among the
// cached objects for as long as they are held, since the collector never
// moves an object. A large list applies it on several goroutines at once.
// An informer applies its transform again, so it must change nothing the
// second time. A list with a label or field selector applies it after
// selecting. Other clients ignore the option.
type Transform func(client.Object)

// ApplyToList implements client.ListOption; the file store's List and
// Watch read the option themselves.
func (Transform) ApplyToList(*client.ListOptions) {}

// transformOf returns the Transform among opts, or nil.
func transformOf(opts []client.ListOption) Transform {
	for _, o := range opts {
		if t, ok := o.(Transform); ok {
			return t
		}
	}
	return nil
}

// alwaysProjected are the fields every projected object keeps.
var alwaysProjected = []string{"apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.labels", "metadata.creationTimestamp"}

// fieldTree is a set of field paths: a member with a nil subtree is kept
// whole; the subtree under elementsKey applies to each element of an
// array. Keeping more than asked (a member named "[]") is harmless.
type fieldTree map[string]fieldTree

// elementsKey marks the subtree of an array's elements.
const elementsKey = "[]"

// newFieldTree returns the tree of paths plus alwaysProjected.
func newFieldTree(paths []string) fieldTree {
	t := fieldTree{}
	for _, p := range append(append([]string(nil), alwaysProjected...), paths...) {
		node := t
		parts := strings.Split(strings.ReplaceAll(strings.Trim(p, "."), elementsKey, "."+elementsKey), ".")
		for i, part := range parts {
			child, seen := node[part]
			if seen && child == nil {
				break // an ancestor is kept whole
			}
			if i == len(parts)-1 {
				node[part] = nil
				break
			}
			if child == nil {
				child = fieldTree{}
				node[part] = child
			}
			node = child
		}
	}
	return t
}

// errProjection is a JSON text the projection cannot read; the caller
// decodes the object whole instead, which reports what is wrong.
var errProjection = errors.New("not a JSON object the projection can read")

// project decodes from the JSON object data only the members in want,
// checking the syntax of the rest without decoding it. Numbers decode as
// a whole-object decode (utiljson) decodes them.
func project(data []byte, want fieldTree) (map[string]interface{}, error) {
	p := &projector{data: data}
	p.space()
	m, err := p.object(want)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, errProjection
	}
	return m, nil
}

type projector struct {
	data []byte
	i    int
}

func (p *projector) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads the object at p.i, keeping the members in want.
func (p *projector) object(want fieldTree) (map[string]interface{}, error) {
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		return nil, errProjection
	}
	p.i++
	out := map[string]interface{}{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		p.space()
		start := p.i
		if err := p.skipString(); err != nil {
			return nil, err
		}
		rawKey := p.data[start:p.i]
		var sub fieldTree
		var wanted bool
		var key string
		var err error
		if bytes.IndexByte(rawKey, '\\') < 0 {
			// Looked up without making a string of every key.
			if sub, wanted = want[string(rawKey[1:len(rawKey)-1])]; wanted {
				key = string(rawKey[1 : len(rawKey)-1])
			}
		} else if key, err = unquote(rawKey); err != nil {
			return nil, err
		} else {
			sub, wanted = want[key]
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, errProjection
		}
		p.i++
		p.space()
		switch {
		case wanted && sub != nil && p.i < len(p.data) && p.data[p.i] == '{':
			m, err := p.object(sub)
			if err != nil {
				return nil, err
			}
			out[key] = m
		case wanted && sub[elementsKey] != nil && p.i < len(p.data) && p.data[p.i] == '[':
			a, err := p.elements(sub[elementsKey])
			if err != nil {
				return nil, err
			}
			out[key] = a
		case wanted:
			v, err := p.value(0)
			if err != nil {
				return nil, err
			}
			out[key] = v
		default:
			if err := p.skipValue(0); err != nil {
				return nil, err
			}
		}
		p.space()
		if p.i >= len(p.data) {
			return nil, errProjection
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return out, nil
		default:
			return nil, errProjection
		}
	}
}

// value decodes the JSON value at p.i as utiljson.Unmarshal decodes it
// into an interface{}: objects as maps, numbers without a "." that fit as
// int64, other numbers as float64.
func (p *projector) value(depth int) (interface{}, error) {
	if depth > maxProjectDepth || p.i >= len(p.data) {
		return nil, errProjection
	}
	start := p.i
	switch c := p.data[p.i]; {
	case c == '"':
		if err := p.skipString(); err != nil {
			return nil, err
		}
		raw := p.data[start+1 : p.i-1]
		if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			return string(raw), nil
		}
		return unquote(p.data[start:p.i])
	case c == '{':
		p.i++
		out := map[string]interface{}{}
		p.space()
		if p.i < len(p.data) && p.data[p.i] == '}' {
			p.i++
			return out, nil
		}
		for {
			p.space()
			k, err := p.value(depth + 1)
			key, isString := k.(string)
			if err != nil || !isString {
				return nil, errProjection
			}
			p.space()
			if p.i >= len(p.data) || p.data[p.i] != ':' {
				return nil, errProjection
			}
			p.i++
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out[key] = v
			p.space()
			if p.i >= len(p.data) {
				return nil, errProjection
			}
			switch p.data[p.i] {
			case ',':
				p.i++
			case '}':
				p.i++
				return out, nil
			default:
				return nil, errProjection
			}
		}
	case c == '[':
		return p.array(func() (interface{}, error) { return p.value(depth + 1) })
	case c == '-' || c >= '0' && c <= '9':
		if err := p.skipValue(depth); err != nil {
			return nil, err
		}
		s := string(p.data[start:p.i])
		if !strings.Contains(s, ".") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errProjection
		}
		return f, nil
	default:
		switch {
		case bytes.HasPrefix(p.data[p.i:], []byte("true")):
			p.i += 4
			return true, nil
		case bytes.HasPrefix(p.data[p.i:], []byte("false")):
			p.i += 5
			return false, nil
		case bytes.HasPrefix(p.data[p.i:], []byte("null")):
			p.i += 4
			return nil, nil
		}
		return nil, errProjection
	}
}

// unquote decodes a JSON string that holds escapes.
func unquote(raw []byte) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errProjection
	}
	return s, nil
}

// elements reads the array at p.i, keeping in each element that is an
// object the members in want.
func (p *projector) elements(want fieldTree) ([]interface{}, error) {
	return p.array(func() (interface{}, error) {
		if p.i < len(p.data) && p.data[p.i] == '{' {
			return p.object(want)
		}
		return p.value(0)
	})
}

// array reads the array at p.i, each element with element.
func (p *projector) array(element func() (interface{}, error)) ([]interface{}, error) {
	p.i++
	out := []interface{}{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		p.space()
		v, err := element()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, errProjection
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, nil
		default:
			return nil, errProjection
		}
	}
}

// maxProjectDepth bounds the nesting skipValue follows, as encoding/json
// bounds its own.
const maxProjectDepth = 10000

// skipValue moves past the JSON value at p.i, checking its syntax.
func (p *projector) skipValue(depth int) error {
	if depth > maxProjectDepth || p.i >= len(p.data) {
		return errProjection
	}
	switch c := p.data[p.i]; {
	case c == '"':
		return p.skipString()
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.data) && p.data[p.i] == end {
			p.i++
			return nil
		}
		for {
			p.space()
			if c == '{' {
				if err := p.skipString(); err != nil {
					return err
				}
				p.space()
				if p.i >= len(p.data) || p.data[p.i] != ':' {
					return errProjection
				}
				p.i++
				p.space()
			}
			if err := p.skipValue(depth + 1); err != nil {
				return err
			}
			p.space()
			if p.i >= len(p.data) {
				return errProjection
			}
			switch p.data[p.i] {
			case ',':
				p.i++
			case end:
				p.i++
				return nil
			default:
				return errProjection
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.data) && strings.IndexByte("+-.eE0123456789", p.data[p.i]) >= 0 {
			p.i++
		}
		if !json.Valid(p.data[start:p.i]) {
			return errProjection
		}
		return nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.data[p.i:], []byte(lit)) {
				p.i += len(lit)
				return nil
			}
		}
		return errProjection
	}
}

// skipString moves past the JSON string at p.i, checking its escapes.
func (p *projector) skipString() error {
	if p.i >= len(p.data) || p.data[p.i] != '"' {
		return errProjection
	}
	for p.i++; p.i < len(p.data); p.i++ {
		switch c := p.data[p.i]; {
		case c == '"':
			p.i++
			return nil
		case c < 0x20:
			return errProjection
		case c == '\\':
			p.i++
			if p.i >= len(p.data) {
				return errProjection
			}
			switch p.data[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if p.i+4 >= len(p.data) {
					return errProjection
				}
				for _, h := range p.data[p.i+1 : p.i+5] {
					if (h < '0' || h > '9') && (h < 'a' || h > 'f') && (h < 'A' || h > 'F') {
						return errProjection
					}
				}
				p.i += 4
			default:
				return errProjection
			}
		}
	}
	return errProjection
}

// readShape is what a list reads of each object it takes from the
// journal: everything, by default.
type readShape struct {
	// mention, when set, leaves out undecoded the objects whose JSON does
	// not contain it (see objectFiles.list).
	mention []byte
	// fields, when set, decodes an unstructured object with only these
	// fields (see Fields).
	fields fieldTree
	// transform, when set, is applied to each typed object as it is
	// decoded (see Transform).
	transform Transform
}

// shapeOf returns the shape a list with opts reads: the Fields option's,
// for an unstructured list.
func shapeOf(opts []client.ListOption, unstructuredList bool) readShape {
	if !unstructuredList {
		return readShape{}
	}
	for _, o := range opts {
		if f, ok := o.(Fields); ok {
			return readShape{fields: newFieldTree(f)}
		}
	}
	return readShape{}
}

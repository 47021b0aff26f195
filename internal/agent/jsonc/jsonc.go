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

// Package jsonc reads JSON with comments (the "//" and "/* */" comments that
// Gemini CLI strips before it parses its settings files) into a tree of byte
// spans, and edits it by splicing: an element or member is appended or
// removed and every other byte of the file, comments and whitespace included,
// stays as it was.
package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind is the JSON type of a [Value].
type Kind int

// The kinds of values.
const (
	Object Kind = iota
	Array
	Scalar
)

// Value is one JSON value of a document: Start and End delimit its bytes
// (End exclusive). An object has Members, an array Elems.
type Value struct {
	Kind       Kind
	Start, End int
	Members    []Member
	Elems      []*Value
}

// Member is one key of an object: KeyStart is the offset of its opening
// quote.
type Member struct {
	Key      string
	KeyStart int
	Value    *Value
}

// Get returns the value of key, or nil.
func (v *Value) Get(key string) *Value {
	for _, m := range v.Members {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// SyntaxError is a document that is not JSON with comments; Offset is the
// byte it fails at.
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error implements error.
func (e *SyntaxError) Error() string { return e.Msg }

// Strip returns data with every comment replaced by spaces (a newline inside a
// block comment is kept), so offsets and lines stay those of data, as Gemini
// CLI's strip-json-comments reads it: comments outside strings only.
func Strip(data []byte) ([]byte, error) {
	out := bytes.Clone(data)
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '"':
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 >= len(out) {
				continue
			}
			switch out[i+1] {
			case '/':
				for ; i < len(out) && out[i] != '\n'; i++ {
					if out[i] != '\r' {
						out[i] = ' '
					}
				}
			case '*':
				end := bytes.Index(out[i+2:], []byte("*/"))
				if end < 0 {
					return nil, &SyntaxError{Offset: i, Msg: "unterminated /* comment"}
				}
				for j := i; j < i+2+end+2; j++ {
					if out[j] != '\n' && out[j] != '\r' {
						out[j] = ' '
					}
				}
				i += 2 + end + 1
			}
		}
	}
	return out, nil
}

// Parse reads data, JSON with comments holding one value, into its tree.
// Duplicate keys are refused, naming the key's path: which one a client uses
// is not something to guess.
func Parse(data []byte) (*Value, error) {
	plain, err := Strip(data)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(plain, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset is just past the offending byte; at the end of the input
			// there is none, so point past the last byte.
			off := int(se.Offset) - 1
			if int(se.Offset) >= len(plain) && strings.Contains(se.Error(), "unexpected end") {
				off = len(plain)
			}
			return nil, &SyntaxError{Offset: max(off, 0), Msg: se.Error()}
		}
		return nil, err
	}
	p := &parser{data: plain}
	root, err := p.value("")
	if err != nil {
		return nil, err
	}
	return root, nil
}

type parser struct {
	data []byte
	i    int
}

func (p *parser) ws() {
	for p.i < len(p.data) && bytes.IndexByte([]byte(" \t\r\n"), p.data[p.i]) >= 0 {
		p.i++
	}
}

// value reads the value at p.i; the document is valid JSON, so only
// duplicate keys fail.
func (p *parser) value(path string) (*Value, error) {
	p.ws()
	v := &Value{Start: p.i}
	switch p.data[p.i] {
	case '{':
		v.Kind = Object
		p.i++
		seen := map[string]bool{}
		for {
			p.ws()
			if p.data[p.i] == '}' {
				p.i++
				break
			}
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			keyStart := p.i
			p.str()
			var key string
			_ = json.Unmarshal(p.data[keyStart:p.i], &key)
			kp := key
			if path != "" {
				kp = path + "." + key
			}
			if seen[key] {
				return nil, &SyntaxError{Offset: keyStart, Msg: fmt.Sprintf("duplicate key %q", kp)}
			}
			seen[key] = true
			p.ws()
			p.i++ // ':'
			val, err := p.value(kp)
			if err != nil {
				return nil, err
			}
			v.Members = append(v.Members, Member{Key: key, KeyStart: keyStart, Value: val})
		}
	case '[':
		v.Kind = Array
		p.i++
		for {
			p.ws()
			if p.data[p.i] == ']' {
				p.i++
				break
			}
			if p.data[p.i] == ',' {
				p.i++
				continue
			}
			el, err := p.value(fmt.Sprintf("%s[%d]", path, len(v.Elems)))
			if err != nil {
				return nil, err
			}
			v.Elems = append(v.Elems, el)
		}
	case '"':
		v.Kind = Scalar
		p.str()
	default:
		v.Kind = Scalar
		for p.i < len(p.data) && bytes.IndexByte([]byte(" \t\r\n,]}"), p.data[p.i]) < 0 {
			p.i++
		}
	}
	v.End = p.i
	return v, nil
}

func (p *parser) str() {
	for p.i++; p.data[p.i] != '"'; p.i++ {
		if p.data[p.i] == '\\' {
			p.i++
		}
	}
	p.i++
}

// Position returns the 1-based line and column (in bytes) of offset off.
func Position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col = off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// lineIndent is the whitespace that opens the line holding offset off.
func lineIndent(data []byte, off int) []byte {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return data[start:end]
}

// startsLine reports whether only whitespace precedes offset off on its line.
func startsLine(data []byte, off int) bool {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return len(bytes.Trim(data[start:off], " \t")) == 0
}

// Append returns data with item (compact JSON; for an object, a member
// `"key":value` given as key and item) added after the last element or member
// of container c. It is written in the document's layout: on its own line
// indented as the last one when they stand on their own lines, else after ",
// " on the same line. unit is the indentation unit for a container that was
// empty.
func Append(data []byte, c *Value, key string, item []byte, unit string) ([]byte, error) {
	text := item
	if c.Kind == Object {
		k, err := json.Marshal(key)
		if err != nil {
			return nil, err
		}
		text = append(append(k, ':'), item...)
	}
	var last int
	switch {
	case c.Kind == Object && len(c.Members) > 0:
		last = len(c.Members) - 1
	case c.Kind == Array && len(c.Elems) > 0:
		last = len(c.Elems) - 1
	default:
		last = -1
	}
	if last < 0 {
		indent := string(lineIndent(data, c.Start))
		body, err := indented(text, c.Kind == Object, indent+unit, unit)
		if err != nil {
			return nil, err
		}
		ins := "\n" + indent + unit + body
		closing := c.End - 1
		if !bytes.Contains(data[c.Start:closing], []byte{'\n'}) {
			ins += "\n" + indent
		}
		return splice(data, c.Start+1, c.Start+1, ins), nil
	}
	lastStart, lastEnd := c.elemSpan(last)
	if !startsLine(data, lastStart) {
		body, err := indented(text, c.Kind == Object, "", "")
		if err != nil {
			return nil, err
		}
		return splice(data, lastEnd, lastEnd, ", "+body), nil
	}
	indent := string(lineIndent(data, lastStart))
	body, err := indented(text, c.Kind == Object, indent, unitOf(data, c, unit))
	if err != nil {
		return nil, err
	}
	return splice(data, lastEnd, lastEnd, ",\n"+indent+body), nil
}

// unitOf guesses the indentation unit from the container's own indentation
// and its elements'; unit when there is no difference to see.
func unitOf(data []byte, c *Value, unit string) string {
	outer := lineIndent(data, c.Start)
	s, _ := c.elemSpan(0)
	inner := lineIndent(data, s)
	if len(inner) > len(outer) && bytes.HasPrefix(inner, outer) {
		return string(inner[len(outer):])
	}
	return unit
}

// indented renders text (compact JSON, or `"key":value` when member) as
// json.Indent does with prefix and unit; an empty unit keeps it compact with
// ", " and ": " as separators of the first level only.
func indented(text []byte, member bool, prefix, unit string) (string, error) {
	var head []byte
	if member {
		// The key is a JSON string: find its end.
		end := 1
		for ; text[end] != '"'; end++ {
			if text[end] == '\\' {
				end++
			}
		}
		head = append(slices.Clip(text[:end+1]), ": "...)
		text = text[end+2:]
	}
	if unit == "" {
		return string(head) + string(text), nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, text, prefix, unit); err != nil {
		return "", err
	}
	return string(head) + b.String(), nil
}

// elemSpan is the span of element or member i: a member from its key.
func (v *Value) elemSpan(i int) (int, int) {
	if v.Kind == Object {
		return v.Members[i].KeyStart, v.Members[i].Value.End
	}
	return v.Elems[i].Start, v.Elems[i].End
}

func (v *Value) count() int {
	if v.Kind == Object {
		return len(v.Members)
	}
	return len(v.Elems)
}

// Remove returns data without element or member i of container c, with the
// comma that separated it: the other elements keep their bytes, and a line
// the element had to itself goes with it. Removing the only element leaves
// the container as it was before it was added ("[]", or the brackets with
// only a comment between them kept).
func Remove(data []byte, c *Value, i int) []byte {
	plain, err := Strip(data)
	if err != nil {
		plain = data
	}
	start, end := c.elemSpan(i)
	n := c.count()
	switch {
	case n == 1:
		open, closing := c.Start+1, c.End-1
		if len(bytes.TrimSpace(plain[open:start])) == 0 && len(bytes.TrimSpace(plain[end:closing])) == 0 {
			return splice(data, open, closing, "")
		}
		return splice(data, start, end, "")
	case i == n-1:
		_, prevEnd := c.elemSpan(i - 1)
		comma := prevEnd + bytes.IndexByte(plain[prevEnd:], ',')
		return splice(data, comma, end, "")
	default:
		comma := end + bytes.IndexByte(plain[end:], ',')
		from, to := start, comma+1
		if nl := bytes.IndexByte(data[to:], '\n'); startsLine(data, start) && nl >= 0 && len(bytes.TrimSpace(data[to:to+nl])) == 0 {
			from, to = bytes.LastIndexByte(data[:start], '\n')+1, to+nl+1
		} else {
			for to < len(data) && (data[to] == ' ' || data[to] == '\t') {
				to++
			}
		}
		return splice(data, from, to, "")
	}
}

func splice(data []byte, from, to int, ins string) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(ins))
	out = append(out, data[:from]...)
	out = append(out, ins...)
	return append(out, data[to:]...)
}

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

package claudesettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is one key of a JSON object with its value kept as raw bytes, so a
// value tether does not touch keeps its key order, number spelling and string
// escapes.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object that remembers the order of its keys.
type object []member

// decodeObject decodes data, which must hold one JSON object, into an object.
// Duplicate keys are refused: which one Claude Code would use is unspecified.
func decodeObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", kindOf(data))
	}
	var o object
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		o = append(o, member{key: key, value: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON object")
	}
	return o, nil
}

// checkDuplicateKeys returns the path and byte offset of the first key that
// appears twice in one object, anywhere in data, which must be valid JSON.
// Such a file is refused as a whole: tether reads a group or an entry the way
// Claude Code does only if there is one way to read it.
func checkDuplicateKeys(data []byte) (path string, offset int64, found bool) {
	type frame struct {
		object bool
		keys   map[string]bool
		path   string
		index  int
		key    string // the key whose value comes next, in an object
		gotKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*frame
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			f.gotKey = false
			return joinPath(f.path, f.key)
		}
		f.index++
		return fmt.Sprintf("%s[%d]", f.path, f.index-1)
	}
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return "", 0, false
		}
		if len(stack) > 0 {
			if f := stack[len(stack)-1]; f.object && !f.gotKey {
				if d, ok := tok.(json.Delim); !ok || d != '}' {
					key, _ := tok.(string)
					if f.keys[key] {
						for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
							off++
						}
						return joinPath(f.path, key), off, true
					}
					f.keys[key] = true
					f.key, f.gotKey = key, true
					continue
				}
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, path: child()})
		case json.Delim('['):
			stack = append(stack, &frame{path: child()})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", 0, false
			}
		default:
			child()
		}
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// get returns the value of key and whether it is present.
func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces the value of key in place, or appends key at the end.
func (o object) set(key string, value json.RawMessage) object {
	for i := range o {
		if o[i].key == key {
			o[i].value = value
			return o
		}
	}
	return append(o, member{key: key, value: value})
}

// del removes key.
func (o object) del(key string) object {
	out := o[:0:0]
	for _, m := range o {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

// marshal encodes o compactly; values are copied as they are.
func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalString(m.key))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshalArray encodes raw values as a JSON array.
func marshalArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// decodeArray decodes a JSON array into its raw elements.
func decodeArray(data json.RawMessage) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if kindOf(data) != "an array" {
		return nil, fmt.Errorf("want an array, got %s", kindOf(data))
	}
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, err
	}
	return items, nil
}

// marshalString encodes s as a JSON string without HTML escaping, so that
// '<', '>' and '&' in a command stay readable.
func marshalString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// kindOf names the JSON type of a raw value for error messages.
func kindOf(data []byte) string {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

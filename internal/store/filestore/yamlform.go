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
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// objectYAML returns the YAML form of an object file's content: exactly
// yaml.JSONToYAML(objJSON), where objJSON is obj's JSON.
//
// JSONToYAML parses the JSON back into a tree and encodes that tree, and
// the parse costs as much as the encoding. When obj holds only what JSON
// decodes to as the same YAML tree (maps with string keys, lists, valid
// UTF-8 strings, int64, bools and nulls), the same encoder gives the same
// bytes from obj directly, in half the time. Floats are left to
// JSONToYAML: an integral float64 is written as an integer in JSON, and
// the two paths would then format it differently.
func objectYAML(obj map[string]interface{}, objJSON []byte) ([]byte, error) {
	if sameAsFromJSON(obj) {
		return yamlv2.Marshal(obj)
	}
	return yaml.JSONToYAML(objJSON)
}

// sameAsFromJSON tells whether v is a tree that decoding its JSON as YAML
// would give back, up to the map type, which the encoder treats alike.
func sameAsFromJSON(v interface{}) bool {
	switch v := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return plainText(v)
	case map[string]interface{}:
		for k, e := range v {
			if !plainText(k) || !sameAsFromJSON(e) {
				return false
			}
		}
		return true
	case []interface{}:
		for _, e := range v {
			if !sameAsFromJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// plainText tells whether s is valid UTF-8 without the characters that
// JSON leaves unescaped and YAML refuses to read: DEL, the C1 controls
// (U+0080 to U+009F, NEL among them) and the noncharacters U+FFFE and
// U+FFFF. JSONToYAML fails on those, or changes them; objectYAML leaves
// such strings to it. (C0 controls are fine: JSON escapes them.)
func plainText(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r <= 0x9f || r == 0xfffe || r == 0xffff {
			return false
		}
		i += n
	}
	return true
}

// encodedObject is an object's journal JSON and file YAML encoded before
// the write lock, when its resourceVersion is not known yet: both hold
// rvPlaceholder, once, where the resourceVersion goes.
type encodedObject struct {
	json, yaml []byte
}

// rvPlaceholder stands for the resourceVersion in an encodedObject. Its
// random part keeps it out of any object's content (an object holding it
// anyway is encoded under the lock: see encodeAhead); it is plain text in
// YAML, where a resourceVersion is a quoted string.
var rvPlaceholder = func() []byte {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return []byte("tether-rv-" + hex.EncodeToString(b))
}()

// encodeAhead encodes obj, as stage would, with rvPlaceholder for its
// resourceVersion. It returns nil when the placeholder does not appear
// exactly once in each encoding.
func encodeAhead(obj *unstructured.Unstructured) *encodedObject {
	rv := obj.GetResourceVersion()
	obj.SetResourceVersion(string(rvPlaceholder))
	defer obj.SetResourceVersion(rv)
	js, err := obj.MarshalJSON()
	if err != nil || bytes.Count(js, rvPlaceholder) != 1 {
		return nil
	}
	body, err := objectYAML(obj.Object, js)
	if err != nil || bytes.Count(body, rvPlaceholder) != 1 {
		return nil
	}
	return &encodedObject{json: js, yaml: body}
}

// with returns the JSON and YAML of the object at resourceVersion rv: the
// bytes obj.MarshalJSON and objectYAML give for it.
func (e *encodedObject) with(rv uint64) (js, body []byte) {
	v := strconv.FormatUint(rv, 10)
	return bytes.Replace(e.json, rvPlaceholder, []byte(v), 1), bytes.Replace(e.yaml, rvPlaceholder, []byte(strconv.Quote(v)), 1)
}

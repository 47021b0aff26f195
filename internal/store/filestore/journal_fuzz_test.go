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
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzJournalLines writes arbitrary bytes as a journal and reads them as a
// watch and the list's fast path do. Nothing panics; every complete line
// is returned, as an entry or as a corrupt one, and a torn last line is
// left unread; a decoded entry re-encodes to bytes that decode to the same
// entry; and for a line in the journal's own encoding, entryHead agrees
// with the full decode.
func FuzzJournalLines(f *testing.F) {
	valid := func(e entry) []byte {
		line, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		return append(line, '\n')
	}
	hookLine := valid(entry{RV: 7, Type: Modified, Resource: "hooks", Namespace: "default", Name: "a",
		Object: json.RawMessage(`{"apiVersion":"agents.tether.dev/v1alpha1","kind":"Hook","metadata":{"name":"a","namespace":"default","resourceVersion":"7"},"spec":{"goal":"g"}}`)})
	deleted := valid(entry{RV: 8, Type: Deleted, Resource: "workers", Namespace: "default", Name: "w", Group: 1})
	header := valid(entry{Compacted: 41})
	f.Add(hookLine)
	f.Add(append(append(append([]byte{}, header...), hookLine...), deleted...))
	// Torn: a writer killed midway through its line.
	f.Add(append(append([]byte{}, hookLine...), deleted[:len(deleted)/2]...))
	f.Add(hookLine[:len(hookLine)-1])
	// A torn tail longer than the line before it: reading keeps the tail
	// where the line was.
	f.Add(append(append([]byte{}, hookLine...), bytes.Repeat([]byte("x"), 2*len(hookLine))...))
	// Corrupted: a flipped byte, a NUL run, a line of another format, and a
	// corrupt line between two good ones.
	flipped := bytes.Clone(hookLine)
	flipped[3] ^= 0x20
	f.Add(flipped)
	f.Add(append(bytes.Repeat([]byte{0}, 64), '\n'))
	f.Add([]byte("rv: 1\ntype: ADDED\n"))
	f.Add(append(append(append([]byte{}, hookLine...), "{\"rv\":9,\"type\":\"MODIFIED\",\"obj\n"...), deleted...))
	f.Add([]byte(`{"rv":18446744073709551616,"type":"ADDED"}` + "\n"))
	f.Add([]byte(`{"rv":1,"object":{"a":1},"name":"x"}` + "\n"))
	f.Add([]byte(`{"rv":1,"object":` + "\n"))
	f.Add([]byte("\n\n{}\n"))
	// Oversized: an object beyond what the store takes, on one line.
	f.Add(valid(entry{RV: 9, Type: Added, Resource: "hooks", Namespace: "default", Name: "big",
		Object: json.RawMessage(`{"spec":{"goal":"` + strings.Repeat("x", 2<<20) + `"}}`)}))

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "journal")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = file.Close() }()
		r := &journalReader{f: file, end: func(size int64) int64 { return size }}
		entries, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.Count(data, []byte{'\n'}); len(entries) != want {
			t.Fatalf("%d entries from %d complete lines", len(entries), want)
		}
		if torn := len(data) - (bytes.LastIndexByte(data, '\n') + 1); len(r.buf) != torn {
			t.Fatalf("%d bytes left unread, want the torn %d", len(r.buf), torn)
		}
		headsOnly := &journalReader{f: file, end: r.end}
		heads, err := headsOnly.nextAfter(math.MaxUint64, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(heads) != len(entries) || len(headsOnly.buf) != len(r.buf) {
			t.Fatalf("nextAfter: %d entries and %d bytes unread; next: %d and %d", len(heads), len(headsOnly.buf), len(entries), len(r.buf))
		}
		lines := bytes.SplitAfter(data, []byte{'\n'})
		for i, e := range entries {
			line := bytes.TrimSuffix(lines[i], []byte{'\n'})
			if e.corrupt != nil {
				if json.Valid(line) && json.Unmarshal(line, &entry{}) == nil {
					t.Fatalf("line %d decodes but was reported corrupt: %v", i, e.corrupt.err)
				}
				continue
			}
			again, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("line %d decoded to an entry that does not encode: %v", i, err)
			}
			var back entry
			if err := json.Unmarshal(again, &back); err != nil {
				t.Fatalf("line %d re-encoded to %q, which does not decode: %v", i, again, err)
			}
			if !sameEntry(&e, &back) {
				t.Fatalf("line %d: %+v re-encodes to %+v", i, e, back)
			}
			if bytes.Equal(again, line) {
				head, err := entryHead(line)
				if err != nil || !sameEntry(head, &e) {
					t.Fatalf("line %d: entryHead gives %+v, %v; the full decode %+v", i, head, err, e)
				}
				if e.RV > 0 && !sameEntry(&heads[i], &e) {
					t.Fatalf("line %d: nextAfter gives %+v; next %+v", i, heads[i], e)
				}
			}
		}
	})
}

// sameEntry compares two entries, their objects as compacted, HTML-escaped
// JSON.
func sameEntry(a, b *entry) bool {
	x, y := *a, *b
	x.Object, y.Object = compactJSON(x.Object), compactJSON(y.Object)
	return reflect.DeepEqual(x, y)
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	// encoding/json writes a RawMessage compacted and HTML-escaped (& as
	// \u0026): the same string, in other bytes.
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, b.Bytes())
	return escaped.Bytes()
}

// FuzzParseKeys checks the journal's reflection-free key decoder against
// encoding/json: whatever head it accepts, encoding/json decodes to the
// same entry.
func FuzzParseKeys(f *testing.F) {
	for _, e := range []entry{
		{RV: 7, Type: Modified, Resource: "hooks", Namespace: "default", Name: "a"},
		{RV: 8, Type: Deleted, Resource: "workers", Name: "w", Group: 3},
		{Compacted: 41},
		{RV: 18446744073709551615, Type: Added, Resource: "hooks", Namespace: "n", Name: "x.y-z"},
	} {
		line, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(line[:len(line)-1])
	}
	f.Add([]byte(`{"rv":01`))
	f.Add([]byte(`{"rv":18446744073709551616`))
	f.Add([]byte(`{"RV":1`))
	f.Add([]byte(`{"type":"ADDED","rv":1`))
	f.Add([]byte(`{"rv":1,"rv":2`))
	f.Add([]byte(`{"name":"a\"b"`))
	f.Add([]byte(`{"name":"é"`))
	f.Add([]byte(`{"group":-1`))
	f.Add([]byte(`{"group":9223372036854775807`))
	f.Add([]byte(`{"group":9223372036854775808`))
	f.Add([]byte(`{"compacted":99999999999999999999`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, head []byte) {
		got, ok := parseKeys(head)
		if !ok {
			return
		}
		want := &entry{}
		if err := json.Unmarshal(append(bytes.Clone(head), '}'), want); err != nil {
			t.Fatalf("parseKeys accepts %q, which encoding/json refuses: %v", head, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseKeys(%q) = %+v; encoding/json gives %+v", head, got, want)
		}
	})
}

// FuzzLineKeys checks the allocation-free reading of a journal line that
// large lists and their index use against entryHead: whatever line it
// reads, entryHead reads the same keys and the same object.
func FuzzLineKeys(f *testing.F) {
	for _, e := range []entry{
		{RV: 7, Type: Modified, Resource: "hooks", Namespace: "default", Name: "a", Object: json.RawMessage(`{"kind":"Hook"}`)},
		{RV: 8, Type: Deleted, Resource: "workers", Name: "w", Group: 3, Object: json.RawMessage(`{}`)},
		{Compacted: 41, Live: 9},
	} {
		line, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(line)
	}
	f.Add([]byte(`{"rv":1,"object":{"a":"\"object\":"}}`))
	f.Add([]byte(`{"rv":1,"name":"x","object":{}`))
	f.Add([]byte(`{"object":{}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, object, ok := lineKeys(line)
		if !ok {
			return
		}
		e, err := entryHead(line)
		if err != nil {
			t.Fatalf("lineKeys reads %q, which entryHead refuses: %v", line, err)
		}
		if want := keysOf(e); !reflect.DeepEqual(normalKeys(got), normalKeys(want)) || !bytes.Equal(object, e.Object) {
			t.Fatalf("lineKeys(%q) = %+v, %q; entryHead reads %+v, %q", line, got, object, want, e.Object)
		}
	})
}

// normalKeys makes empty text keys nil, so that keys read from a line and
// from an entry compare equal.
func normalKeys(k entryKeys) entryKeys {
	for _, b := range []*[]byte{&k.typ, &k.resource, &k.namespace, &k.name} {
		if len(*b) == 0 {
			*b = nil
		}
	}
	return k
}

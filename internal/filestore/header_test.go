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
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// headerRE is the header's grammar as a regular expression, which
// parseHeader once used and is checked against.
var headerRE = regexp.MustCompile(`^# Managed by tether \(resourceVersion (\d+), sha256 ([0-9a-f]{64})\)\.[^\n]*\n`)

func parseHeaderRE(data []byte) (rv uint64, body []byte, ok bool) {
	m := headerRE.FindSubmatchIndex(data)
	if m == nil {
		return 0, data, false
	}
	body = data[m[1]:]
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != string(data[m[4]:m[5]]) {
		return 0, body, false
	}
	rv, err := strconv.ParseUint(string(data[m[2]:m[3]]), 10, 64)
	return rv, body, err == nil
}

func checkHeader(t *testing.T, data []byte) {
	t.Helper()
	rv, body, ok := parseHeader(data)
	wantRV, wantBody, wantOK := parseHeaderRE(data)
	if rv != wantRV || ok != wantOK || !bytes.Equal(body, wantBody) || len(body) != len(wantBody) {
		t.Fatalf("parseHeader(%q) = %d, %q, %v; want %d, %q, %v", data, rv, body, ok, wantRV, wantBody, wantOK)
	}
}

// TestParseHeaderGrammar checks parseHeader against the regular expression
// on valid headers and on every way of breaking one.
func TestParseHeaderGrammar(t *testing.T) {
	body := []byte("apiVersion: v1\nkind: Event\n")
	good := []byte(fileHeader(42, body) + string(body))
	checkHeader(t, good)
	if rv, b, ok := parseHeader(good); !ok || rv != 42 || !bytes.Equal(b, body) {
		t.Fatalf("a store header was not read: %d %q %v", rv, b, ok)
	}
	checkHeader(t, []byte(fileHeader(18446744073709551615, body)+string(body)))
	checkHeader(t, []byte(strings.Replace(fileHeader(1, body), "1,", "18446744073709551616,", 1)+string(body)))
	checkHeader(t, nil)
	checkHeader(t, []byte("#"))
	// Every truncation, and every single-byte change, of a valid file.
	for i := range good {
		checkHeader(t, good[:i])
		for _, c := range []byte{0, '\n', ' ', '0', '9', 'a', 'f', 'g', 'A', 'F', ')', '.', ',', 0xff} {
			mutated := bytes.Clone(good)
			mutated[i] = c
			checkHeader(t, mutated)
		}
		checkHeader(t, append(bytes.Clone(good[:i]), good[i+1:]...))
	}
	checkHeader(t, []byte(strings.ToUpper(string(good[:120]))+string(good[120:])))
	checkHeader(t, []byte("# Managed by tether (resourceVersion 7, sha256 "+strings.Repeat("0", 64)+").\n"))
	empty := sha256.Sum256(nil)
	checkHeader(t, []byte("# Managed by tether (resourceVersion 7, sha256 "+hex.EncodeToString(empty[:])+").\n"))
	checkHeader(t, []byte("# Managed by tether (resourceVersion 7, sha256 "+hex.EncodeToString(empty[:])+").\xff\xfe anything\n"))
	checkHeader(t, []byte("# Managed by tether (resourceVersion 7, sha256 "+hex.EncodeToString(empty[:])+")."))
}

// FuzzParseHeader compares parseHeader with the regular expression.
func FuzzParseHeader(f *testing.F) {
	body := []byte("kind: Hook\n")
	f.Add([]byte(fileHeader(3, body) + string(body)))
	f.Add([]byte("# Managed by tether (resourceVersion 1, sha256 x)."))
	f.Fuzz(func(t *testing.T, data []byte) { checkHeader(t, data) })
}

func BenchmarkParseHeader(b *testing.B) {
	body := bytes.Repeat([]byte("spec:\n  goal: g\n"), 25)
	data := []byte(fileHeader(123456, body) + string(body))
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			parseHeader(data)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		for b.Loop() {
			parseHeaderRE(data)
		}
	})
}

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

// headerSpec is the header's grammar as a regular expression, which
// parseHeader reads by hand.
var headerSpec = regexp.MustCompile(`^# Managed by tether \(resourceVersion (\d+), sha256 ([0-9a-f]{64})\)\.[^\n]*\n`)

// parseHeaderSpec is parseHeader by headerSpec.
func parseHeaderSpec(data []byte) (uint64, []byte, bool) {
	m := headerSpec.FindSubmatchIndex(data)
	if m == nil {
		return 0, data, false
	}
	body := data[m[1]:]
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != string(data[m[4]:m[5]]) {
		return 0, body, false
	}
	rv, err := strconv.ParseUint(string(data[m[2]:m[3]]), 10, 64)
	return rv, body, err == nil
}

func headerCases() []string {
	body := "apiVersion: v1\nkind: Hook\n"
	good := fileHeader(42, []byte(body)) + body
	sum := good[strings.Index(good, "sha256 ")+7 : strings.Index(good, ")")]
	return []string{
		good,
		fileHeader(0, nil),
		fileHeader(18446744073709551615, []byte(body)) + body,
		strings.Replace(good, "42", "18446744073709551616", 1), // overflows
		strings.Replace(good, "42", "", 1),
		strings.Replace(good, "42", "4x2", 1),
		strings.Replace(good, "42", "٤٢", 1), // digits, but not ASCII
		strings.Replace(good, sum, strings.ToUpper(sum), 1),
		strings.Replace(good, sum, sum[:63], 1),
		strings.Replace(good, sum, sum+"0", 1),
		strings.Replace(good, ").", ")", 1),
		strings.Replace(good, "Edits are picked up; the store rewrites this file.", "", 1),
		good + "more: x\n", // the checksum no longer matches
		strings.TrimSuffix(fileHeader(42, []byte(body)), "\n"),
		" " + good,
		"# Managed by tether (resourceVersion 1, sha256 " + sum + ").\n" + body,
		"# Managed by tether (resourceVersion 1, sha256 , sha256 " + sum + ").\n",
		body,
		"",
	}
}

// TestParseHeaderMatchesItsGrammar compares parseHeader with the header's
// regular expression on headers that are the store's and near misses.
func TestParseHeaderMatchesItsGrammar(t *testing.T) {
	for _, c := range headerCases() {
		rv, body, ok := parseHeader([]byte(c))
		wantRV, wantBody, wantOK := parseHeaderSpec([]byte(c))
		if rv != wantRV || !bytes.Equal(body, wantBody) || ok != wantOK {
			t.Errorf("parseHeader(%q) = %d, %q, %v; want %d, %q, %v", c, rv, body, ok, wantRV, wantBody, wantOK)
		}
	}
	if rv, _, ok := parseHeader([]byte(headerCases()[0])); rv != 42 || !ok {
		t.Errorf("the store's own header reads as %d, %v; want 42, true", rv, ok)
	}
}

// FuzzParseHeader checks parseHeader against the header's regular
// expression on arbitrary files.
func FuzzParseHeader(f *testing.F) {
	for _, c := range headerCases() {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rv, body, ok := parseHeader(data)
		wantRV, wantBody, wantOK := parseHeaderSpec(data)
		if rv != wantRV || !bytes.Equal(body, wantBody) || ok != wantOK {
			t.Fatalf("parseHeader(%q) = %d, %q, %v; want %d, %q, %v", data, rv, body, ok, wantRV, wantBody, wantOK)
		}
	})
}

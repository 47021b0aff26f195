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
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// dnsNameCases are names at every edge of the two grammars.
var dnsNameCases = []string{
	"", "a", "0", "-", ".", "a.", ".a", "a..b", "a.b", "a-b", "-a", "a-", "a.-b", "a-.b",
	"A", "aB", "a_b", "a b", "a/b", "ä", "a\x00", "0x1f", "1.2.3", "my-hook.v2",
	strings.Repeat("a", 63), strings.Repeat("a", 64),
	strings.Repeat("a", 253), strings.Repeat("a", 254),
	strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 126) + "ab",
	strings.Repeat("a", 63) + "." + strings.Repeat("b", 63),
	strings.Repeat("a", 64) + ".b",
}

// TestDNSNamesAgreeWithValidation checks the hand-written name checks
// against apimachinery's on names at every edge.
func TestDNSNamesAgreeWithValidation(t *testing.T) {
	for _, name := range dnsNameCases {
		checkDNSNames(t, name)
	}
}

// FuzzDNSNames checks the hand-written name checks against apimachinery's
// on any string.
func FuzzDNSNames(f *testing.F) {
	for _, name := range dnsNameCases {
		f.Add(name)
	}
	f.Fuzz(checkDNSNames)
}

func checkDNSNames(t *testing.T, name string) {
	if got, want := isDNS1123Subdomain(name), len(validation.IsDNS1123Subdomain(name)) == 0; got != want {
		t.Errorf("isDNS1123Subdomain(%q) = %v, validation says %v", name, got, want)
	}
	if got, want := isDNS1123Label(name), len(validation.IsDNS1123Label(name)) == 0; got != want {
		t.Errorf("isDNS1123Label(%q) = %v, validation says %v", name, got, want)
	}
}

// TestKeyOfPathAgreesWithRel checks keyOfPath's shortcut for paths below
// the store against the filepath.Rel reading of every path, clean or not.
func TestKeyOfPathAgreesWithRel(t *testing.T) {
	s := &layout{dir: "/run/store", byPlural: map[string]*resource{
		"hooks": {plural: "hooks", namespaced: true},
		"nodes": {plural: "nodes"},
	}}
	viaRel := func(path string) (string, string, string, bool) {
		rel, err := filepath.Rel(s.dir, path)
		if err != nil {
			return "", "", "", false
		}
		r, ns, name, ok := s.keyOfRel(rel)
		if !ok {
			return "", "", "", false
		}
		return r.plural, ns, name, true
	}
	for _, path := range []string{
		"/run/store/hooks/default/a.yaml", "/run/store/nodes/a.yaml", "/run/store/hooks/a.yaml",
		"/run/store/hooks/default/x/a.yaml", "/run/store/hooks/default/.a.yaml", "/run/store/hooks/default/a.yml",
		"/run/store/hooks/Default/a.yaml", "/run/store/hooks/default/a.b.yaml", "/run/store/hooks/default/.yaml",
		"/run/store/hooks/x/../default/a.yaml", "/run/store/hooks/./default/a.yaml", "/run/store//hooks/default/a.yaml",
		"/run/store/../store/hooks/default/a.yaml", "/run/store2/hooks/default/a.yaml", "/run/storehooks/default/a.yaml",
		"/run/store", "/run/store/", "/run/hooks/default/a.yaml", "run/store/hooks/default/a.yaml",
		"/run/store/events/default/a.yaml", "/run/store/hooks/default/a..b.yaml", "/run/store/nodes/x/../a.yaml",
	} {
		r, ns, name, ok := s.keyOfPath(path)
		plural := ""
		if ok {
			plural = r.plural
		}
		wantPlural, wantNS, wantName, wantOK := viaRel(path)
		if plural != wantPlural || ns != wantNS || name != wantName || ok != wantOK {
			t.Errorf("keyOfPath(%q) = %q %q %q %v, filepath.Rel reads %q %q %q %v", path, plural, ns, name, ok, wantPlural, wantNS, wantName, wantOK)
		}
	}
}

// TestKeyOfRel pins what names an object below the store: PLURAL/NS/NAME.yaml
// for a namespaced kind, PLURAL/NAME.yaml for a cluster-scoped one, with
// valid names, and nothing else.
func TestKeyOfRel(t *testing.T) {
	s := &layout{dir: "/run/store", byPlural: map[string]*resource{
		"hooks": {plural: "hooks", namespaced: true},
		"nodes": {plural: "nodes"},
	}}
	cases := []struct {
		rel, plural, ns, name string
	}{
		{"hooks/default/a.yaml", "hooks", "default", "a"},
		{"hooks/team-1/a.b-c.yaml", "hooks", "team-1", "a.b-c"},
		{"nodes/a.yaml", "nodes", "", "a"},
		{"hooks/a.yaml", "", "", ""},
		{"nodes/x/a.yaml", "", "", ""},
		{"hooks/default/x/a.yaml", "", "", ""},
		{"hooks/Default/a.yaml", "", "", ""},
		{"hooks/de.fault/a.yaml", "", "", ""},
		{"hooks/default/.a.yaml", "", "", ""},
		{"hooks/default/A.yaml", "", "", ""},
		{"hooks/default/a.yml", "", "", ""},
		{"hooks/default/.yaml", "", "", ""},
		{"events/default/a.yaml", "", "", ""},
		{"a.yaml", "", "", ""},
		{"hooks//a.yaml", "", "", ""},
		{"", "", "", ""},
	}
	for _, c := range cases {
		r, ns, name, ok := s.keyOfRel(c.rel)
		plural := ""
		if ok {
			plural = r.plural
		}
		if plural != c.plural || ns != c.ns || name != c.name || ok != (c.plural != "") {
			t.Errorf("keyOfRel(%q) = %q %q %q %v, want %q %q %q", c.rel, plural, ns, name, ok, c.plural, c.ns, c.name)
		}
	}
}

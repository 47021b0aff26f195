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

import "k8s.io/apimachinery/pkg/util/validation"

// isDNS1123Subdomain answers as validation.IsDNS1123Subdomain does, without
// its regular expression: a list or a scan asks it of every file name, and
// the expression cost more than reading the object from its stamp.
// TestDNSNamesAgreeWithValidation and FuzzDNSNames hold the two together.
func isDNS1123Subdomain(s string) bool {
	if len(s) == 0 || len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	for start := 0; start <= len(s); {
		end := start
		for end < len(s) && s[end] != '.' {
			end++
		}
		if !isDNS1123LabelChars(s[start:end]) {
			return false
		}
		start = end + 1
	}
	return true
}

// isDNS1123Label answers as validation.IsDNS1123Label does.
func isDNS1123Label(s string) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && isDNS1123LabelChars(s)
}

// isDNS1123LabelChars tells whether s is one or more of [a-z0-9-],
// beginning and ending with an alphanumeric.
func isDNS1123LabelChars(s string) bool {
	if len(s) == 0 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

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

package notranslations_test

import (
	"testing"

	"k8s.io/kubectl/pkg/util/i18n"

	_ "github.com/tether-dev/tether/internal/notranslations"
)

// With a German locale, kubectl's catalogue would translate this text; with
// the catalogue never loaded it stays as written.
func TestCatalogueIsNeverLoaded(t *testing.T) {
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	const text = "Display one or many resources"
	if got := i18n.T(text); got != text {
		t.Fatalf("i18n.T(%q) = %q: kubectl's catalogue was loaded", text, got)
	}
}

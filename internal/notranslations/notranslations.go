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

// Package notranslations stops kubectl's packages from loading their
// message catalogue. Their package-level help texts call i18n.T, which
// unzips the catalogue at start-up: about 90 ms on every tether command,
// for texts tether shows in English anyway. Import it, blank, from main,
// before any kubectl package initialises; Go initialises it first because
// it depends only on the i18n package and sorts before k8s.io.
package notranslations

import "k8s.io/kubectl/pkg/util/i18n"

func init() {
	if err := i18n.SetLoadTranslationsFunc(func() error { return nil }); err != nil {
		panic(err)
	}
}

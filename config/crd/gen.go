//go:build ignore

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

// gen writes zz_generated.crds.pb, the protobuf form of bases/*.yaml that
// Load decodes: a CustomResourceDefinitionList in file-name order. Run by
// `go generate` (from `make manifests`) in config/crd.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "config/crd/gen.go:", err)
		os.Exit(1)
	}
}

func run() error {
	names, err := filepath.Glob("bases/*.yaml")
	if err != nil {
		return err
	}
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		// Decoding strictly rejects what the API server would: duplicate
		// or unknown fields.
		c := apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		list.Items = append(list.Items, c)
	}
	data, err := list.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile("zz_generated.crds.pb", data, 0o644)
}

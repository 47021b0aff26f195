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

// gen writes zz_generated.crds.json, the JSON form of bases/*.yaml that
// Load decodes, as a JSON array in file-name order. Run by `go generate`
// (from `make manifests`) in config/crd.
package main

import (
	"bytes"
	"encoding/json"
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
	var out bytes.Buffer
	out.WriteString("[\n")
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		// Decoding strictly rejects what the API server would: duplicate
		// or unknown fields.
		if err := yaml.UnmarshalStrict(data, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		js, err := yaml.YAMLToJSONStrict(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if i > 0 {
			out.WriteString(",\n")
		}
		if err := json.Indent(&out, js, "", " "); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	out.WriteString("\n]\n")
	return os.WriteFile("zz_generated.crds.json", out.Bytes(), 0o644)
}

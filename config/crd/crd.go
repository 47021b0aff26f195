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

// Package crd embeds the CustomResourceDefinitions that controller-gen
// generates into bases/. They are the one source of truth for the schema,
// defaults and validation rules in both modes: a cluster installs them, and
// the local file store validates against them.
package crd

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

//go:generate go run gen.go

// crdsJSON is bases/*.yaml in JSON form, in file-name order: decoding the
// YAML took most of a CLI verb's own time.
//
//go:embed zz_generated.crds.json
var crdsJSON []byte

// Load returns every CRD of bases/, in file-name order. They are decoded
// once per process, strictly; each call returns its own copies, which the
// caller may change.
func Load() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	decoded, err := decodeOnce()
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(decoded))
	for i, c := range decoded {
		crds[i] = c.DeepCopy()
	}
	return crds, nil
}

// decodeOnce decodes the embedded CRDs on its first call: a CLI verb loads
// them more than once (its backend, the store, the type names).
var decodeOnce = sync.OnceValues(decode)

// decode decodes crdsJSON as sigs.k8s.io/yaml.UnmarshalStrict decodes the
// JSON it converts YAML to.
func decode() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	d := json.NewDecoder(bytes.NewReader(crdsJSON))
	d.DisallowUnknownFields()
	var crds []*apiextensionsv1.CustomResourceDefinition
	if err := d.Decode(&crds); err != nil {
		return nil, fmt.Errorf("config/crd/zz_generated.crds.json: %w", err)
	}
	return crds, nil
}

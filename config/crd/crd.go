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
	"embed"
	"fmt"
	"io/fs"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// Load returns every embedded CRD, decoded strictly, in file-name order.
// The files are decoded once per process; each call returns its own copies,
// which the caller may change.
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

// decodeOnce decodes the embedded files on its first call. A CLI verb loads
// the CRDs more than once (its backend, the store, the type names), and
// decoding the YAML is most of the cost.
var decodeOnce = sync.OnceValues(decode)

func decode() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		data, err := bases.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("config/crd/%s: %w", name, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

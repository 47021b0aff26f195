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
	_ "embed"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

//go:generate go run gen.go

// crdsProto is bases/*.yaml as a protobuf CustomResourceDefinitionList,
// in file-name order, checked strictly when generated: decoding the YAML,
// and then JSON, took most of a CLI verb's own time.
//
//go:embed zz_generated.crds.pb
var crdsProto []byte

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

// decode decodes crdsProto.
func decode() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := list.Unmarshal(crdsProto); err != nil {
		return nil, fmt.Errorf("config/crd/zz_generated.crds.pb: %w", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(list.Items))
	for i := range list.Items {
		// Protobuf carries no TypeMeta; the YAML does.
		list.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"}
		crds[i] = &list.Items[i]
	}
	return crds, nil
}

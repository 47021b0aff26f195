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

package crdschema

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CELCompiled reports whether gvk's CEL rules have been compiled.
func CELCompiled(v *Validator, gvk schema.GroupVersionKind) bool {
	ver, _ := v.versions[gvk]()
	return ver.celCompiled.Load()
}

// ValidatesStatusByProperty reports whether gvk's status is validated
// property by property beside the status it replaces.
func ValidatesStatusByProperty(v *Validator, gvk schema.GroupVersionKind) bool {
	ver, _ := v.versions[gvk]()
	return ver.statusProperties != nil
}

// PruneWhole is Prune with every pass run on the whole object, none
// skipped: the reference that Prune's shortcuts must match.
func PruneWhole(v *Validator, gvk schema.GroupVersionKind, obj map[string]interface{}) []string {
	ver, ok, err := v.compiled(gvk)
	if !ok || err != nil {
		return nil
	}
	objectMeta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		foundMeta, unknown = false, nil
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(obj, ver.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, ver.structural)
	if ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, ver.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true}); ferr == nil {
		unknown = append(unknown, paths...)
	}
	if foundMeta {
		_ = schemaobjectmeta.SetObjectMeta(obj, objectMeta)
	}
	return unknown
}

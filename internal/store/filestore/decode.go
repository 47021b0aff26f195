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
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// decodeTyped converts content into r's Go type with the converter the
// store's client fills typed objects with (Client.fill), which is how every
// reconciler and verb receives an object. An object that passes the schema
// but not this (a duration Go cannot hold, such as 99999999999999999999h)
// would make every typed list of its kind fail, so the store admits only
// objects that decode.
func (s *objectFiles) decodeTyped(r *resource, content map[string]interface{}) error {
	obj, err := s.scheme.New(r.gvk)
	if err != nil {
		return nil // a kind without a Go type is served unstructured only
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(content, obj)
}

// typedErrors returns decodeTyped's failure as a field error naming the
// field that does not decode, or nil. Only custom resources are checked:
// they are the objects the reconcilers act on.
func (s *objectFiles) typedErrors(r *resource, obj *unstructured.Unstructured) field.ErrorList {
	if !r.crd {
		return nil
	}
	err := s.decodeTyped(r, obj.Object)
	if err == nil {
		return nil
	}
	path, value := culprit(obj.DeepCopy().Object, func(m map[string]interface{}) bool { return s.decodeTyped(r, m) == nil })
	if path == nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, fmt.Sprintf("does not decode into a %s: %v", r.gvk.Kind, err))}
	}
	return field.ErrorList{field.Invalid(path, value, fmt.Sprintf("does not decode into a %s: %v", r.gvk.Kind, err))}
}

// culprit finds the deepest field of work whose removal makes decodes
// succeed: the field that does not decode. work is modified and restored.
func culprit(work map[string]interface{}, decodes func(map[string]interface{}) bool) (*field.Path, interface{}) {
	var path *field.Path
	var node interface{} = work
	for {
		switch n := node.(type) {
		case map[string]interface{}:
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			found := false
			for _, k := range keys {
				saved := n[k]
				delete(n, k)
				ok := decodes(work)
				n[k] = saved
				if ok {
					path, node, found = childPath(path, k), saved, true
					break
				}
			}
			if !found {
				return path, nil
			}
		case []interface{}:
			found := false
			for i := range n {
				saved := n[i]
				n[i] = nil
				ok := decodes(work)
				n[i] = saved
				if ok {
					path, node, found = path.Index(i), saved, true
					break
				}
			}
			if !found {
				return path, nil
			}
		default:
			return path, n
		}
	}
}

func childPath(p *field.Path, k string) *field.Path {
	if p == nil {
		return field.NewPath(k)
	}
	return p.Child(k)
}

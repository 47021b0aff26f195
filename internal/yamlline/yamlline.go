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

// Package yamlline finds the line of a field, given as a JSON path such
// as "spec.steps[1].name", in a YAML document, so that an error about a
// decoded value can point at its source.
package yamlline

import (
	"regexp"
	"strconv"

	yamlv3 "go.yaml.in/yaml/v3"
)

// Field returns the one-based line of the field at a JSON path in data, a
// single YAML document, or of its nearest ancestor present in it; 0 when
// data is not YAML.
func Field(data []byte, field string) int {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return 0
	}
	return Of(doc.Content[0], field)
}

var pathSegment = regexp.MustCompile(`([^.\[\]]+)|\[(\d+)\]`)

// Of returns the line of the node at the JSON path field below root, or
// of the deepest node on the way there. Path segments without an index
// that cross a list descend into the first element holding the next key.
func Of(root *yamlv3.Node, field string) int {
	line := root.Line
	n := root
	for _, m := range pathSegment.FindAllStringSubmatch(field, -1) {
		key, idx := m[1], m[2]
		if n.Kind == yamlv3.SequenceNode && key != "" {
			var found *yamlv3.Node
			for _, item := range n.Content {
				if mappingValue(item, key) != nil {
					found = item
					break
				}
			}
			if found == nil {
				return line
			}
			n = found
		}
		switch {
		case idx != "":
			i, _ := strconv.Atoi(idx)
			if n.Kind != yamlv3.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			k := mappingKey(n, key)
			if k == nil {
				return line
			}
			line = k.Line
			n = mappingValue(n, key)
		}
	}
	return line
}

func mappingKey(n *yamlv3.Node, key string) *yamlv3.Node {
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

func mappingValue(n *yamlv3.Node, key string) *yamlv3.Node {
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

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

package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/mitchellh/go-wordwrap"
	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/tether-dev/tether/config/crd"
)

// explainWidth is the column at which descriptions wrap, as in kubectl explain.
const explainWidth = 80

func newExplainCommand() *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "explain TYPE[.FIELD.PATH]",
		Short: "Document a type or one of its fields, from the CRD schema",
		Long: `Print the documentation of a type or of a field, read from the CRD's
OpenAPI schema (the same schema the store and a cluster validate with), as
kubectl explain does. --recursive prints the whole field tree.`,
		Example: `  tether explain hooks
  tether explain hook.spec.steps.validate
  tether explain workers.spec --recursive`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeTypes(toComplete), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			crds, err := crd.Load()
			if err != nil {
				return err
			}
			return Explain(cmd.OutOrStdout(), NewTypes(crds), args[0], recursive)
		},
	}
	cmd.Flags().BoolVar(&recursive, "recursive", false, "print every field below, by name and type")
	return cmd
}

// Explain writes the documentation of path ("hooks", "hk.spec.steps") to w.
func Explain(w io.Writer, types *Types, path string, recursive bool) error {
	typeName, fieldPath, _ := strings.Cut(path, ".")
	// A group-qualified type ("hooks.agents.tether.dev.spec") is not
	// supported: the group would be read as fields; kubectl has --api-version for that.
	matches, err := types.Resolve(typeName)
	if err != nil {
		return err
	}
	if len(matches) != 1 || matches[0].CRD == nil {
		return fmt.Errorf("explain needs one tether type (hooks, workers, checkpoints), not %q", typeName)
	}
	rt := matches[0]
	v := rt.Version()
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return fmt.Errorf("%s has no schema", rt.Qualified())
	}
	schema := v.Schema.OpenAPIV3Schema
	var fields []string
	if fieldPath != "" {
		fields = strings.Split(fieldPath, ".")
	}
	for i, f := range fields {
		next, ok := child(schema, f)
		if !ok {
			return fmt.Errorf("field %q does not exist in %s%s", f, strings.ToLower(rt.GVK.Kind), pathPrefix(fields[:i]))
		}
		schema = next
	}
	fmt.Fprintf(w, "GROUP:      %s\nKIND:       %s\nVERSION:    %s\n\n", rt.GVK.Group, rt.GVK.Kind, rt.GVK.Version)
	if len(fields) > 0 {
		fmt.Fprintf(w, "FIELD: %s <%s>\n\n", fields[len(fields)-1], typeOf(schema))
	}
	fmt.Fprintf(w, "DESCRIPTION:\n%s\n", indent(orText(schema.Description, "<empty>"), 4))
	props := properties(schema)
	if len(props) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nFIELDS:\n")
	if recursive {
		writeTree(w, props, 1)
		return nil
	}
	required := requiredSet(schema)
	for i, name := range sortedKeys(props) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		p := props[name]
		fmt.Fprintf(w, "  %s\t<%s>%s\n", name, typeOf(&p), requiredMark(required[name]))
		if p.Description != "" {
			fmt.Fprintln(w, indent(p.Description, 4))
		}
	}
	return nil
}

func pathPrefix(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return "." + strings.Join(fields, ".")
}

// child descends into a field, through arrays and maps of objects.
func child(s *apiextensionsv1.JSONSchemaProps, name string) (*apiextensionsv1.JSONSchemaProps, bool) {
	props := properties(s)
	p, ok := props[name]
	if !ok {
		return nil, false
	}
	return &p, true
}

// properties returns the fields of an object, or of the items of an array
// or the values of a map.
func properties(s *apiextensionsv1.JSONSchemaProps) map[string]apiextensionsv1.JSONSchemaProps {
	for {
		switch {
		case len(s.Properties) > 0:
			return s.Properties
		case s.Items != nil && s.Items.Schema != nil:
			s = s.Items.Schema
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
		default:
			return nil
		}
	}
}

// typeOf names a schema's type as kubectl explain does: string, integer,
// Object, []Object, map[string]string.
func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return "[]" + typeOf(s.Items.Schema)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(s.AdditionalProperties.Schema)
	case s.Type == "object" || s.Type == "" && len(s.Properties) > 0:
		return "Object"
	case s.XIntOrString:
		return "IntOrString"
	case s.Type == "":
		return "Object"
	}
	return s.Type
}

func requiredSet(s *apiextensionsv1.JSONSchemaProps) map[string]bool {
	for s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
		s = s.Items.Schema
	}
	out := map[string]bool{}
	for _, r := range s.Required {
		out[r] = true
	}
	return out
}

func requiredMark(required bool) string {
	if required {
		return " -required-"
	}
	return ""
}

func writeTree(w io.Writer, props map[string]apiextensionsv1.JSONSchemaProps, depth int) {
	for _, name := range sortedKeys(props) {
		p := props[name]
		fmt.Fprintf(w, "%s%s\t<%s>\n", strings.Repeat("  ", depth), name, typeOf(&p))
		if sub := properties(&p); len(sub) > 0 {
			writeTree(w, sub, depth+1)
		}
	}
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func indent(text string, n int) string {
	pad := strings.Repeat(" ", n)
	wrapped := wordwrap.WrapString(strings.TrimSpace(text), uint(explainWidth-n))
	lines := strings.Split(wrapped, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

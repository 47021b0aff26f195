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
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/config/crd"
)

// completeTypesAndNames completes the first argument with resource type
// names and the following ones with the names of that type's objects in
// the selected namespace, as kubectl's completion does.
func completeTypesAndNames(g *GlobalOptions) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return completeTypes(toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return completeNames(cmd.Context(), g, args[0], toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func completeTypes(prefix string) []string {
	crds, err := crd.Load()
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range append([]string{"all"}, typeNames(NewTypes(crds))...) {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	return out
}

func typeNames(t *Types) []string {
	var names []string
	for _, rt := range t.All() {
		names = append(names, rt.Plural)
	}
	return names
}

func completeNames(ctx context.Context, g *GlobalOptions, typeArg, prefix string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := g.Backend(ctx)
	if err != nil {
		return nil
	}
	defer func() { _ = b.Close() }()
	types, err := b.Types.Resolve(typeArg)
	if err != nil || len(types) != 1 {
		return nil
	}
	rt := types[0]
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(rt.GVK.GroupVersion().WithKind(rt.GVK.Kind + "List"))
	var opts []client.ListOption
	if rt.Namespaced {
		opts = append(opts, client.InNamespace(b.Namespace))
	}
	if err := b.Client.List(ctx, list, opts...); err != nil {
		return nil
	}
	var out []string
	for _, u := range list.Items {
		if strings.HasPrefix(u.GetName(), prefix) {
			out = append(out, u.GetName())
		}
	}
	return out
}

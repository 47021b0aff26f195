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
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/kubectl/follow"
)

type eventsOptions struct {
	g             *GlobalOptions
	forObject     string
	types         []string
	watch         bool
	allNamespaces bool
	noHeaders     bool
}

func newEventsCommand(g *GlobalOptions) *cobra.Command {
	o := &eventsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "events [--for TYPE/NAME] [-w]",
		Short: "List Events, oldest first, as kubectl events does",
		Long: `List the Events of the namespace (or of every namespace with -A), oldest
first, as kubectl events does. --for keeps the Events about one object;
--types keeps Events of the given types (Normal, Warning); -w prints new
Events as they are recorded.`,
		Example: `  tether events
  tether events --for hook/fix-login
  tether events --types Warning -w`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGCForReading()
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.forObject, "for", "", "only the Events about this object, as TYPE/NAME")
	fs.StringSliceVar(&o.types, "types", nil, "only Events of these types: Normal, Warning")
	fs.BoolVarP(&o.watch, "watch", "w", false, "after listing the Events, print new ones as they are recorded")
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the Events of every namespace")
	fs.BoolVar(&o.noHeaders, "no-headers", false, "do not print the header line")
	_ = cmd.RegisterFlagCompletionFunc("for", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		typ, name, found := strings.Cut(toComplete, "/")
		if !found {
			var out []string
			for _, t := range completeTypes(typ) {
				if t != "all" {
					out = append(out, t+"/")
				}
			}
			return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range completeNames(cmd.Context(), g, typ, name) {
			out = append(out, typ+"/"+n)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// eventFilter keeps the Events about one object and of some types.
type eventFilter struct {
	kind, group, name string
	types             []string
}

func (f *eventFilter) keep(e *corev1.Event) bool {
	if len(f.types) > 0 && !slices.ContainsFunc(f.types, func(t string) bool { return strings.EqualFold(t, e.Type) }) {
		return false
	}
	if f.name == "" {
		return true
	}
	ref := e.InvolvedObject
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	if !strings.Contains(ref.APIVersion, "/") {
		group = ""
	}
	return ref.Kind == f.kind && ref.Name == f.name && (ref.APIVersion == "" || group == f.group)
}

func (o *eventsOptions) filter(b *Backend) (*eventFilter, error) {
	f := &eventFilter{types: o.types}
	for _, t := range o.types {
		if !strings.EqualFold(t, corev1.EventTypeNormal) && !strings.EqualFold(t, corev1.EventTypeWarning) {
			return nil, fmt.Errorf("--types: %q is not an Event type; use Normal or Warning", t)
		}
	}
	if o.forObject == "" {
		return f, nil
	}
	if !strings.Contains(o.forObject, "/") {
		return nil, fmt.Errorf("--for %q: give the object as TYPE/NAME, such as hook/fix-login", o.forObject)
	}
	targets, err := b.Types.ParseTargets([]string{o.forObject})
	if err != nil {
		return nil, fmt.Errorf("--for: %w", err)
	}
	t := targets[0]
	f.kind, f.group, f.name = t.Type.GVK.Kind, t.Type.GVK.Group, t.Names[0]
	return f, nil
}

func (o *eventsOptions) run(ctx context.Context, out, errOut io.Writer) error {
	b, err := o.g.ReadBackend(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	f, err := o.filter(b)
	if err != nil {
		return err
	}
	ns := b.Namespace
	if o.allNamespaces {
		ns = ""
	}
	list := &corev1.EventList{}
	if err := b.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	var kept []corev1.Event
	for i := range list.Items {
		if f.keep(&list.Items[i]) {
			kept = append(kept, list.Items[i])
		}
	}
	sort.Sort(events.SortableEvents(kept))
	p := events.NewEventPrinter(o.noHeaders, o.allNamespaces)
	w := printers.GetNewTabWriter(out)
	if len(kept) > 0 {
		if err := p.PrintObj(&corev1.EventList{Items: kept}, w); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	} else if !o.watch {
		if o.allNamespaces {
			fmt.Fprintln(errOut, "No events found.")
		} else {
			fmt.Fprintf(errOut, "No events found in %s namespace.\n", b.Namespace)
		}
	}
	if !o.watch {
		return nil
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return follow.Watch(ctx, b.Client, &corev1.EventList{}, func(typ watch.EventType, obj runtime.Object) error {
		e, ok := obj.(*corev1.Event)
		if !ok || typ == watch.Deleted || !f.keep(e) {
			return nil
		}
		if err := p.PrintObj(e, w); err != nil {
			return err
		}
		return w.Flush()
	}, &client.ListOptions{Namespace: ns, Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
}

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
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// decodeTableFieldsOnly lets a table's list decode only the fields its
// columns print (see Backend.tableListOptions); tests turn it off to
// compare with the tables of whole objects.
var decodeTableFieldsOnly = true

type getOptions struct {
	g              *GlobalOptions
	print          *get.PrintFlags
	allNamespaces  bool
	labelSelector  string
	fieldSelector  string
	watch          bool
	watchOnly      bool
	watchEvents    bool
	ignoreNotFound bool

	labels labels.Selector
	fields fields.Selector
	out    io.Writer
	errOut io.Writer
}

func newGetCommand(g *GlobalOptions) *cobra.Command {
	o := &getOptions{g: g, print: get.NewGetPrintFlags()}
	cmd := &cobra.Command{
		Use:   "get TYPE [NAME...] | TYPE/NAME...",
		Short: "Display one or many objects",
		Long: `Display one or many objects, as kubectl get does.

TYPE is hooks (hook, hk), workers (worker, wk), checkpoints (checkpoint, cp),
events (event, ev), optionally qualified with the group, or all (every
tether type). The default table holds the CRD's printer columns, exactly as
kubectl prints them; -o wide adds the wide ones.`,
		Example: `  tether get hooks
  tether get hk fix-login add-tests -o wide
  tether get hook/fix-login -o yaml
  tether get all -A --show-labels
  tether get hooks -l team=web --sort-by .status.state
  tether get hooks -o jsonpath='{.items[*].metadata.name}'
  tether get hooks -w`,
		ValidArgsFunction: completeTypesAndNames(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForReading()
			o.out, o.errOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return o.run(cmd.Context(), args)
		},
	}
	o.print.AddFlags(cmd)
	fs := cmd.Flags()
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the objects of every namespace")
	fs.StringVarP(&o.labelSelector, "selector", "l", "", "label selector to filter on, such as -l key1=value1,key2!=value2")
	fs.StringVar(&o.fieldSelector, "field-selector", "", "field selector to filter on: metadata.name and metadata.namespace, with =, == and !=")
	fs.BoolVarP(&o.watch, "watch", "w", false, "after listing the objects, print every change to them")
	fs.BoolVar(&o.watchOnly, "watch-only", false, "print the changes to the objects without listing them first")
	fs.BoolVar(&o.watchEvents, "output-watch-events", false, "with --watch, print the kind of each change (ADDED, MODIFIED, DELETED)")
	fs.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "treat a named object that does not exist as success")
	return cmd
}

// fetched is what one target yielded: its objects and, for a list, the
// list's resourceVersion.
type fetched struct {
	rt   ResourceType
	objs []*unstructured.Unstructured
	rv   string
}

func (o *getOptions) parseSelectors() error {
	var err error
	if o.labels, err = labels.Parse(o.labelSelector); err != nil {
		return fmt.Errorf("--selector %q: %w", o.labelSelector, err)
	}
	if o.fields, err = fields.ParseSelector(o.fieldSelector); err != nil {
		return fmt.Errorf("--field-selector %q: %w", o.fieldSelector, err)
	}
	return nil
}

func (o *getOptions) humanReadable() bool {
	format := *o.print.OutputFormat
	template := ""
	if o.print.TemplateFlags != nil && o.print.TemplateFlags.TemplateArgument != nil {
		template = *o.print.TemplateFlags.TemplateArgument
	}
	return format == "" && template == "" || format == "wide"
}

func (o *getOptions) run(ctx context.Context, args []string) error {
	if err := o.parseSelectors(); err != nil {
		return err
	}
	// Fail on a bad -o before touching the backend.
	pf := o.print.Copy()
	if _, err := pf.ToPrinter(); err != nil {
		return err
	}
	b, err := o.g.ReadBackend(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	targets, err := b.Types.ParseTargets(args)
	if err != nil {
		return err
	}
	ns := b.Namespace
	if o.allNamespaces {
		ns = ""
	}
	if o.watch || o.watchOnly {
		return o.runWatch(ctx, b, targets, ns)
	}
	results, errs := o.fetch(ctx, b, targets, ns)
	if !o.humanReadable() {
		return o.printGeneric(targets, results, errs)
	}
	return o.printTables(ctx, b, results, errs)
}

// fetch gets the named objects of every target, or lists the target's
// objects when it names none. A missing name is an error, reported after
// the objects that were found, as kubectl does.
func (o *getOptions) fetch(ctx context.Context, b *Backend, targets []Target, ns string) ([]fetched, []error) {
	var out []fetched
	var errs []error
	for _, t := range targets {
		if len(t.Names) == 0 {
			var opts []client.ListOption
			if decodeTableFieldsOnly && o.humanReadable() && *o.print.HumanReadableFlags.SortBy == "" {
				// A table prints a few fields of each object: the
				// local store decodes only those.
				opts = b.tableListOptions(t.Type)
			}
			list, err := o.list(ctx, b, t.Type, ns, opts...)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			f := fetched{rt: t.Type, rv: list.GetResourceVersion()}
			for i := range list.Items {
				f.objs = append(f.objs, &list.Items[i])
			}
			out = append(out, f)
			continue
		}
		f := fetched{rt: t.Type}
		for _, name := range t.Names {
			u, err := getObject(ctx, b, t.Type, b.Namespace, name)
			if err != nil {
				if !o.ignoreNotFound || !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
				continue
			}
			if o.labels.Matches(labels.Set(u.GetLabels())) && o.fields.Matches(objectFields(u)) {
				f.objs = append(f.objs, u)
			}
		}
		if len(f.objs) > 0 {
			out = append(out, f)
		}
	}
	return out, errs
}

func objectFields(u *unstructured.Unstructured) fields.Set {
	return fields.Set{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace()}
}

// getObject reads one object of type rt.
func getObject(ctx context.Context, b *Backend, rt ResourceType, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rt.GVK)
	if !rt.Namespaced {
		ns = ""
	}
	if err := b.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil, err
	}
	return u, nil
}

func (o *getOptions) listOptions(rt ResourceType, ns string) *client.ListOptions {
	lo := &client.ListOptions{LabelSelector: o.labels, FieldSelector: o.fields}
	if rt.Namespaced {
		lo.Namespace = ns
	}
	if o.labels.Empty() {
		lo.LabelSelector = nil
	}
	if o.fields.Empty() {
		lo.FieldSelector = nil
	}
	return lo
}

func (o *getOptions) list(ctx context.Context, b *Backend, rt ResourceType, ns string, extra ...client.ListOption) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(rt.GVK.GroupVersion().WithKind(rt.GVK.Kind + "List"))
	if err := b.Client.List(ctx, list, append([]client.ListOption{o.listOptions(rt, ns)}, extra...)...); err != nil {
		return nil, err
	}
	return list, nil
}

// printer returns the printer for objects of rt, configured as kubectl get
// configures it.
func (o *getOptions) printer(rt ResourceType, withNamespace, withKind bool) (printers.ResourcePrinter, error) {
	pf := o.print.Copy()
	pf.SetKind(rt.GVK.GroupKind())
	if withNamespace && rt.Namespaced {
		if err := pf.EnsureWithNamespace(); err != nil {
			return nil, err
		}
	}
	if withKind {
		if err := pf.EnsureWithKind(); err != nil {
			return nil, err
		}
	}
	p, err := pf.ToPrinter()
	if err != nil {
		return nil, err
	}
	if sortBy := *o.print.HumanReadableFlags.SortBy; sortBy != "" {
		p = &get.SortingPrinter{Delegate: p, SortField: sortBy}
	}
	return p, nil
}

// printTables prints each target's table, as kubectl get prints the
// tables the API server returns: one header per type, a blank line
// between types, the kind before each name when several types are shown.
func (o *getOptions) printTables(ctx context.Context, b *Backend, results []fetched, errs []error) error {
	// The tab writer writes cell by cell: one system call each, unbuffered.
	out := bufio.NewWriterSize(o.out, 64<<10)
	defer func() { _ = out.Flush() }()
	tracking := &trackingWriter{w: out}
	sep := &separatorWriter{w: tracking}
	w := printers.GetNewTabWriter(sep)
	withKind := len(results) > 1
	noHeaders := *o.print.NoHeaders
	for i, f := range results {
		table, err := ToTable(ctx, f.rt, f.objs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := w.Flush(); err != nil {
			return err
		}
		w.SetRememberedWidths(nil)
		if i > 0 && !noHeaders && tracking.written > 0 {
			sep.ready = true
		}
		p, err := o.printer(f.rt, o.allNamespaces, withKind)
		if err != nil {
			return err
		}
		if err := p.PrintObj(table, w); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if tracking.written == 0 && len(errs) == 0 && !o.ignoreNotFound {
		if o.allNamespaces {
			fmt.Fprintln(o.errOut, "No resources found")
		} else {
			fmt.Fprintf(o.errOut, "No resources found in %s namespace.\n", b.Namespace)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// printGeneric prints one object when one was named, else a v1 List of
// every object, as kubectl does for -o yaml, json, name and templates.
func (o *getOptions) printGeneric(targets []Target, results []fetched, errs []error) error {
	single := len(targets) == 1 && len(targets[0].Names) == 1
	if single && len(errs) > 0 {
		return errs[0]
	}
	if len(results) == 0 && o.ignoreNotFound {
		return utilerrors.NewAggregate(errs)
	}
	pf := o.print.Copy()
	p, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	if sortBy := *o.print.HumanReadableFlags.SortBy; sortBy != "" {
		p = &get.SortingPrinter{Delegate: p, SortField: sortBy}
	}
	var obj runtime.Object
	if single && len(results) == 1 && len(results[0].objs) == 1 {
		obj = results[0].objs[0]
	} else {
		list := &unstructured.UnstructuredList{Object: map[string]interface{}{
			"kind": "List", "apiVersion": "v1", "metadata": map[string]interface{}{"resourceVersion": ""},
		}}
		for _, f := range results {
			for _, u := range f.objs {
				list.Items = append(list.Items, *u)
			}
		}
		obj = list
	}
	if err := p.PrintObj(obj, o.out); err != nil {
		errs = append(errs, err)
	}
	return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
}

// trackingWriter counts what was written, to tell "nothing found" apart.
type trackingWriter struct {
	w       io.Writer
	written int
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.written += len(p)
	return t.w.Write(p)
}

// separatorWriter writes a blank line before the next output once ready.
type separatorWriter struct {
	w     io.Writer
	ready bool
}

func (s *separatorWriter) Write(p []byte) (int, error) {
	if len(p) > 0 && s.ready {
		if _, err := s.w.Write([]byte("\n")); err != nil {
			return 0, err
		}
		s.ready = false
	}
	return s.w.Write(p)
}

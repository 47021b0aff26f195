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
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/kubectl/apply"
	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

type deleteOptions struct {
	files          []string
	recursive      bool
	selector       string
	all            bool
	ignoreNotFound bool
	wait           bool
	timeout        time.Duration
	dryRun         string
}

func newDeleteCommand(g *GlobalOptions) *cobra.Command {
	o := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete ([-f FILENAME] | TYPE [NAME... | -l label | --all])",
		Short: "Delete objects by type and name, by label, or named in YAML files",
		Long: `Delete objects as kubectl delete does.

An object with finalizers is only marked for deletion; the reconciler that
owns a finalizer removes it. With --wait (the default) the command waits until
every object is gone. A missing object is an error with exit code 2, unless
--ignore-not-found.`,
		Example: `  tether delete hook fix-login
  tether delete hk/a hk/b
  tether delete -f task.yaml
  tether delete hooks -l team=x --wait=false`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, g, args)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVarP(&o.files, "filename", "f", nil, "file, directory or - (stdin) naming the objects to delete; repeatable")
	fs.BoolVarP(&o.recursive, "recursive", "R", false, "process the directories given with -f recursively")
	fs.StringVarP(&o.selector, "selector", "l", "", "delete the objects of TYPE matching this label selector")
	fs.BoolVar(&o.all, "all", false, "delete every object of TYPE in the namespace")
	fs.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "treat a missing object as a successful delete")
	fs.BoolVar(&o.wait, "wait", true, "wait until the objects are gone (finalizers removed) before returning")
	fs.DurationVar(&o.timeout, "timeout", 0, "with --wait, how long to wait before giving up; 0 waits until done")
	fs.StringVar(&o.dryRun, "dry-run", "none", `"none", "client" (print what would be deleted) or "server" (the backend checks and deletes nothing)`)
	fs.Lookup("dry-run").NoOptDefVal = string(apply.DryRunClient)
	return cmd
}

// deletion is one object a delete acts on.
type deletion struct {
	gvk       schema.GroupVersionKind
	qualified string
	namespace string
	name      string
}

func (o *deleteOptions) run(cmd *cobra.Command, g *GlobalOptions, args []string) error {
	dry, err := apply.ParseDryRun(o.dryRun)
	if err != nil {
		return fmt.Errorf("--dry-run: %w", err)
	}
	switch {
	case len(o.files) > 0 && len(args) > 0:
		return errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form or with -f")
	case len(o.files) == 0 && len(args) == 0:
		return errors.New("you must provide one or more resources by argument or filename (-f)")
	case o.all && o.selector != "":
		return errors.New("--all and --selector (-l) cannot be used together")
	}
	selector := labels.Everything()
	if o.selector != "" {
		if selector, err = labels.Parse(o.selector); err != nil {
			return fmt.Errorf("--selector: %w", err)
		}
	}
	ctx := cmd.Context()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	b, err := g.Backend(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()

	var dels []deletion
	var errs []error
	if len(o.files) > 0 {
		dels, err = o.fromFiles(cmd.InOrStdin(), b)
	} else {
		dels, err = o.fromArgs(ctx, b, args, selector)
	}
	if err != nil {
		return err
	}
	if len(dels) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "No resources found in %s namespace.\n", b.Namespace)
		return nil
	}

	out := cmd.OutOrStdout()
	var waits []pendingDelete
	for _, d := range dels {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(d.gvk)
		u.SetNamespace(d.namespace)
		u.SetName(d.name)
		var opts []client.DeleteOption
		if dry == apply.DryRunServer {
			opts = append(opts, client.DryRunAll)
		}
		if dry == apply.DryRunClient {
			err = b.Client.Get(ctx, client.ObjectKeyFromObject(u), u)
		} else {
			var uid types.UID
			if getErr := b.Client.Get(ctx, client.ObjectKeyFromObject(u), u); getErr == nil {
				uid = u.GetUID()
			}
			if err = b.Client.Delete(ctx, u, opts...); err == nil && dry == apply.DryRunNone {
				waits = append(waits, pendingDelete{deletion: d, uid: uid})
			}
		}
		switch {
		case apierrors.IsNotFound(err) && o.ignoreNotFound:
		case err != nil:
			errs = append(errs, err)
		default:
			fmt.Fprintf(out, "%s %q deleted%s\n", d.qualified, d.name, dryRunSuffix(dry))
		}
	}
	if o.wait {
		for _, p := range waits {
			if err := waitGone(ctx, b.Client, p); err != nil {
				errs = append(errs, fmt.Errorf("waiting for %s %q to be deleted: %w", p.qualified, p.name, err))
			}
		}
	}
	return commandErrors(cmd.ErrOrStderr(), errs)
}

func (o *deleteOptions) fromFiles(stdin io.Reader, b *Backend) ([]deletion, error) {
	sources, err := apply.Read(o.files, o.recursive, stdin)
	if err != nil {
		return nil, err
	}
	var out []deletion
	for _, src := range sources {
		docs, err := manifest.Decode(src.Name, src.Data, b.Scheme)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			rt, err := b.Types.ForGVK(d.Object.GetObjectKind().GroupVersionKind())
			if err != nil {
				return nil, err
			}
			ns := d.Object.GetNamespace()
			if ns == "" && rt.Namespaced {
				ns = b.Namespace
			}
			out = append(out, deletion{gvk: rt.GVK, qualified: rt.Qualified(), namespace: ns, name: d.Object.GetName()})
		}
	}
	return out, nil
}

func (o *deleteOptions) fromArgs(ctx context.Context, b *Backend, args []string, selector labels.Selector) ([]deletion, error) {
	targets, err := b.Types.ParseTargets(args)
	if err != nil {
		return nil, err
	}
	var out []deletion
	for _, t := range targets {
		ns := ""
		if t.Type.Namespaced {
			ns = b.Namespace
		}
		d := deletion{gvk: t.Type.GVK, qualified: t.Type.Qualified(), namespace: ns}
		if len(t.Names) > 0 {
			if o.all || o.selector != "" {
				return nil, errors.New("name cannot be provided when a selector or --all is specified")
			}
			for _, n := range t.Names {
				d.name = n
				out = append(out, d)
			}
			continue
		}
		if !o.all && o.selector == "" {
			return nil, errors.New("resource(s) were provided, but no name was specified; give NAME, -l SELECTOR or --all")
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(t.Type.GVK.GroupVersion().WithKind(t.Type.GVK.Kind + "List"))
		if err := b.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, err
		}
		for _, item := range list.Items {
			d.name = item.GetName()
			out = append(out, d)
		}
	}
	return out, nil
}

// pendingDelete is an object deleted by this command that --wait waits for.
type pendingDelete struct {
	deletion
	uid types.UID
}

// waitGone returns once the object is gone, or replaced by a new object of
// the same name. It watches the one object from the resourceVersion it read,
// so no change between the read and the watch is missed.
func waitGone(ctx context.Context, c client.WithWatch, p pendingDelete) error {
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(p.gvk)
		err := c.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: p.name}, u)
		if apierrors.IsNotFound(err) || (err == nil && p.uid != "" && u.GetUID() != p.uid) {
			return nil
		}
		if err != nil {
			return err
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(p.gvk.GroupVersion().WithKind(p.gvk.Kind + "List"))
		w, err := c.Watch(ctx, list, client.InNamespace(p.namespace), client.MatchingFields{"metadata.name": p.name},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: u.GetResourceVersion()}})
		if err != nil {
			return err
		}
		gone, err := untilDeleted(ctx, w)
		w.Stop()
		if gone || err != nil {
			return err
		}
	}
}

// untilDeleted reads w until a Deleted event (true), the watch ends or
// fails (false, so the caller reads again), or ctx ends.
func untilDeleted(ctx context.Context, w watch.Interface) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				return true, nil
			}
		}
	}
}

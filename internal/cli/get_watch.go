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
	"os"
	"os/signal"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/tether-dev/tether/internal/kubectl/follow"
)

// runWatch lists the target's objects (unless --watch-only), then prints
// every change as it happens until interrupted, as kubectl get -w does:
// one header, then a row per change.
func (o *getOptions) runWatch(ctx context.Context, b *Backend, targets []Target, ns string) error {
	if len(targets) != 1 {
		return errors.New("you may only specify a single resource type with --watch")
	}
	t := targets[0]
	if len(t.Names) > 1 {
		return fmt.Errorf("watch is only supported on one object or a whole type, not %d names", len(t.Names))
	}
	if len(t.Names) == 1 {
		if _, err := getObject(ctx, b, t.Type, b.Namespace, t.Names[0]); err != nil {
			return err
		}
		sel := fields.OneTermEqualSelector("metadata.name", t.Names[0])
		if !o.fields.Empty() {
			sel = fields.AndSelectors(sel, o.fields)
		}
		o.fields, ns = sel, b.Namespace
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	list, err := o.list(ctx, b, t.Type, ns)
	if err != nil {
		return err
	}
	p, err := o.printer(t.Type, o.allNamespaces, false)
	if err != nil {
		return err
	}
	human := o.humanReadable()
	w := printers.GetNewTabWriter(o.out)
	print := func(typ watch.EventType, u *unstructured.Unstructured, list []*unstructured.Unstructured) error {
		var obj runtime.Object = u
		if human {
			table, err := ToTable(ctx, t.Type, list)
			if err != nil {
				return err
			}
			obj = table
		}
		if o.watchEvents {
			obj = &metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Object: obj}}
		}
		if err := p.PrintObj(obj, w); err != nil {
			return err
		}
		return w.Flush()
	}
	if !o.watchOnly {
		for i := range list.Items {
			u := &list.Items[i]
			if err := print(watch.Added, u, []*unstructured.Unstructured{u}); err != nil {
				return err
			}
		}
	}

	lo := o.listOptions(t.Type, ns)
	lo.Raw = &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}
	watchList := &unstructured.UnstructuredList{}
	watchList.SetGroupVersionKind(list.GroupVersionKind())
	return follow.Watch(ctx, b.Client, watchList, func(typ watch.EventType, obj runtime.Object) error {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("watch: unexpected object %T", obj)
		}
		return print(typ, u, []*unstructured.Unstructured{u})
	}, lo)
}

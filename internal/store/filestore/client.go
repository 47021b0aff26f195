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
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Client is the store's controller-runtime client.WithWatch.
type Client struct {
	s *Store
}

var _ client.WithWatch = &Client{}

// Client returns a controller-runtime client over the store.
func (s *Store) Client() *Client { return &Client{s: s} }

// Scheme returns the scheme the client converts objects with.
func (c *Client) Scheme() *runtime.Scheme { return c.s.scheme }

// RESTMapper returns the store's static REST mapper.
func (c *Client) RESTMapper() meta.RESTMapper { return c.s.mapper }

// GroupVersionKindFor returns the kind of obj.
func (c *Client) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, c.s.scheme)
}

// IsObjectNamespaced tells whether obj's kind is namespaced.
func (c *Client) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	return apiutil.IsObjectNamespaced(obj, c.s.scheme, c.s.mapper)
}

func (c *Client) resourceOf(obj runtime.Object) (*resource, error) {
	gvk, err := apiutil.GVKForObject(obj, c.s.scheme)
	if err != nil {
		return nil, err
	}
	return c.s.resourceFor(gvk)
}

// toUnstructured converts a typed or unstructured object to the store's form.
func (c *Client) toUnstructured(r *resource, obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(r.gvk)
	return u, nil
}

// fill copies the stored object into obj. Typed objects come back without
// TypeMeta, as from controller-runtime's client against an API server.
func (c *Client) fill(u *unstructured.Unstructured, obj runtime.Object) error {
	if out, ok := obj.(*unstructured.Unstructured); ok {
		out.Object = u.DeepCopy().Object
		return nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return nil
}

// namespaceError refuses a namespace that is not a DNS-1123 label before
// any path is formed from it: "../x" would name a directory outside its
// kind's. An empty namespace (all namespaces, or a cluster-scoped kind) is
// no error here.
func namespaceError(r *resource, namespace string) error {
	if namespace == "" || !r.namespaced || isDNS1123Label(namespace) {
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("metadata.namespace: Invalid value: %q: %s", namespace, strings.Join(validation.IsDNS1123Label(namespace), ", ")))
}

// Get reads one object.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r, err := c.resourceOf(obj)
	if err != nil {
		return err
	}
	if err := namespaceError(r, key.Namespace); err != nil {
		return err
	}
	if err := contextDone(ctx); err != nil {
		return err
	}
	// A read is a read; a file holding a hand edit (or one that cannot be
	// read) is adopted in a step of its own, which may write.
	so, err := c.s.read(r, key.Namespace, key.Name)
	switch {
	case err == nil && !so.handEdited:
		return c.fill(so.obj, obj)
	case apierrors.IsNotFound(err):
		return err
	}
	u, err := c.s.adoptEdit(ctx, r, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	return c.fill(u, obj)
}

// matcher filters objects by label and field selectors.
type matcher struct {
	namespace string
	labels    labels.Selector
	fields    fields.Selector
}

func newMatcher(opts *client.ListOptions) (*matcher, error) {
	m := &matcher{namespace: opts.Namespace, labels: opts.LabelSelector, fields: opts.FieldSelector}
	if m.fields != nil {
		for _, req := range m.fields.Requirements() {
			if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
	}
	return m, nil
}

// selective tells whether objects can enter and leave the selection.
func (m *matcher) selective() bool {
	return m.labels != nil && !m.labels.Empty() || m.fields != nil && !m.fields.Empty()
}

func (m *matcher) matches(u metav1.Object) bool {
	if m.namespace != "" && u.GetNamespace() != m.namespace {
		return false
	}
	if m.labels != nil && !m.labels.Matches(labels.Set(u.GetLabels())) {
		return false
	}
	if m.fields != nil && !m.fields.Matches(fields.Set{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace()}) {
		return false
	}
	return true
}

// List reads the objects matching opts. The result is one consistent
// resourceVersion of the store. Limit is not paginated: like the API
// server's watch cache, the store returns every match in one page.
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r, err := c.resourceOf(list)
	if err != nil {
		return err
	}
	if err := contextDone(ctx); err != nil {
		return err
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if err := namespaceError(r, lo.Namespace); err != nil {
		return err
	}
	m, err := newMatcher(lo)
	if err != nil {
		return err
	}
	out, isUnstructured := list.(*unstructured.UnstructuredList)
	var slots *itemSlots
	if !isUnstructured {
		slots = newItemSlots(list)
	}
	shape := shapeOf(opts, isUnstructured)
	transform := transformOf(opts)
	if !isUnstructured && !m.selective() {
		// The selector may read what the transform drops.
		shape.transform = transform
	}
	rv, items, err := c.s.listSettled(ctx, r, lo.Namespace, slots, shape)
	if err != nil {
		return err
	}
	matched := items[:0]
	for _, so := range items {
		if m.matches(so.object()) {
			matched = append(matched, so)
		}
	}
	if isUnstructured {
		out.Object = map[string]interface{}{}
		out.SetGroupVersionKind(r.gvk.GroupVersion().WithKind(r.gvk.Kind + "List"))
		out.SetResourceVersion(strconv.FormatUint(rv, 10))
		out.Items = make([]unstructured.Unstructured, len(matched))
		for i, so := range matched {
			out.Items[i] = *so.obj
			if transform != nil {
				transform(&out.Items[i])
			}
		}
		return nil
	}
	return c.toTypedList(r, rv, matched, list, slots, transform)
}

// toTypedList puts items into the typed list: where they were decoded,
// when all were decoded into slots, or else converting those read as
// unstructured objects. Converting by reflection costs as much as
// decoding, so a large list converts on every CPU too.
func (c *Client) toTypedList(r *resource, rv uint64, items []*storedObject, list client.ObjectList, slots *itemSlots, transform Transform) error {
	if transform != nil {
		// What the list decoded straight into its Go type it transformed
		// then; the rest are transformed here, as they are converted.
		forEachParallel(len(items), func(i int) {
			if so := items[i]; so.typed != nil && !so.transformed {
				transform(so.typed)
				so.transformed = true
			}
		})
	}
	if slots.take(list, items) {
		list.SetResourceVersion(strconv.FormatUint(rv, 10))
		list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		return nil
	}
	objs := make([]runtime.Object, len(items))
	errs := make([]error, len(items))
	forEachParallel(len(items), func(i int) {
		if items[i].typed != nil {
			objs[i] = items[i].typed
			return
		}
		obj, err := c.s.scheme.New(r.gvk)
		if err == nil {
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].obj.Object, obj)
		}
		if co, ok := obj.(client.Object); ok && err == nil && transform != nil {
			transform(co)
		}
		objs[i], errs[i] = obj, err
	})
	// An object that does not decode (stored before the store checked
	// decoding, or under a forged header) is skipped and reported: one bad
	// object must not fail the list every informer depends on.
	kept := objs[:0]
	for i, obj := range objs {
		if errs[i] != nil {
			c.s.reportUndecodable(r, items[i].obj, errs[i])
			continue
		}
		kept = append(kept, obj)
	}
	if err := meta.SetList(list, kept); err != nil {
		return err
	}
	list.SetResourceVersion(strconv.FormatUint(rv, 10))
	list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return nil
}

func dryRun(values []string) bool {
	for _, v := range values {
		if v == metav1.DryRunAll {
			return true
		}
	}
	return false
}

func strict(validation string) bool { return validation == metav1.FieldValidationStrict }

// Create stores a new object.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	defer c.s.observeWrite("create", time.Now())
	r, err := c.resourceOf(obj)
	if err != nil {
		return err
	}
	co := (&client.CreateOptions{}).ApplyOptions(opts)
	u, err := c.toUnstructured(r, obj)
	if err != nil {
		return err
	}
	out, err := c.s.create(ctx, r, u, writeOptions{dryRun: dryRun(co.DryRun), strict: strict(co.FieldValidation), typed: isTyped(obj)})
	if err != nil {
		return err
	}
	return c.fill(out, obj)
}

// Update replaces an object's spec and metadata; status is ignored.
func (c *Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	uo := (&client.UpdateOptions{}).ApplyOptions(opts)
	return c.update(ctx, obj, false, writeOptions{dryRun: dryRun(uo.DryRun), strict: strict(uo.FieldValidation)})
}

func (c *Client) update(ctx context.Context, obj client.Object, subresource bool, wo writeOptions) error {
	defer c.s.observeWrite("update", time.Now())
	r, err := c.resourceOf(obj)
	if err != nil {
		return err
	}
	u, err := c.toUnstructured(r, obj)
	if err != nil {
		return err
	}
	if r.namespaced && u.GetNamespace() == "" {
		return apierrors.NewBadRequest("the namespace of the object is required for namespaced resource " + r.plural)
	}
	if err := namespaceError(r, u.GetNamespace()); err != nil {
		return err
	}
	wo.typed = isTyped(obj)
	out, err := c.s.update(ctx, r, u, subresource, wo)
	if err != nil {
		return err
	}
	return c.fill(out, obj)
}

// Patch applies a merge or JSON patch.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := (&client.PatchOptions{}).ApplyOptions(opts)
	return c.patch(ctx, obj, patch, false, writeOptions{dryRun: dryRun(po.DryRun), strict: strict(po.FieldValidation)})
}

func (c *Client) patch(ctx context.Context, obj client.Object, patch client.Patch, subresource bool, wo writeOptions) error {
	defer c.s.observeWrite("patch", time.Now())
	r, err := c.resourceOf(obj)
	if err != nil {
		return err
	}
	if err := namespaceError(r, obj.GetNamespace()); err != nil {
		return err
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	out, err := c.s.patch(ctx, r, obj.GetNamespace(), obj.GetName(), patch.Type(), data, subresource, wo)
	if err != nil {
		return err
	}
	return c.fill(out, obj)
}

// Apply is server-side apply, which the file store does not implement.
func (c *Client) Apply(_ context.Context, _ runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
	return apierrors.NewMethodNotSupported(schema.GroupResource{Group: "agents.tether.dev"}, "apply")
}

// Delete deletes an object, honouring finalizers and preconditions.
func (c *Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	defer c.s.observeWrite("delete", time.Now())
	r, err := c.resourceOf(obj)
	if err != nil {
		return err
	}
	if err := namespaceError(r, obj.GetNamespace()); err != nil {
		return err
	}
	do := (&client.DeleteOptions{}).ApplyOptions(opts)
	return c.s.remove(ctx, r, obj.GetNamespace(), obj.GetName(), deleteOptionsFrom(do))
}

func deleteOptionsFrom(do *client.DeleteOptions) deleteOptions {
	o := deleteOptions{dryRun: dryRun(do.DryRun)}
	if do.Preconditions != nil {
		o.uid = do.Preconditions.UID
		o.rv = do.Preconditions.ResourceVersion
	}
	if do.PropagationPolicy != nil && *do.PropagationPolicy == metav1.DeletePropagationOrphan {
		o.orphanDeps = true
	}
	return o
}

// DeleteAllOf deletes every object of obj's kind matching opts.
func (c *Client) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	r, err := c.resourceOf(obj)
	if err != nil {
		return err
	}
	dao := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	if err := namespaceError(r, dao.Namespace); err != nil {
		return err
	}
	m, err := newMatcher(&dao.ListOptions)
	if err != nil {
		return err
	}
	_, items, err := c.s.listSettled(ctx, r, dao.Namespace, nil, readShape{})
	if err != nil {
		return err
	}
	for _, so := range items {
		u := so.obj
		if !m.matches(u) {
			continue
		}
		err := c.s.remove(ctx, r, u.GetNamespace(), u.GetName(), deleteOptionsFrom(&dao.DeleteOptions))
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// Status returns a writer for the status subresource.
func (c *Client) Status() client.SubResourceWriter { return &subResourceClient{c: c, name: "status"} }

// SubResource returns a client for a subresource; only status is served.
func (c *Client) SubResource(name string) client.SubResourceClient {
	return &subResourceClient{c: c, name: name}
}

type subResourceClient struct {
	c    *Client
	name string
}

func (s *subResourceClient) check(obj client.Object) error {
	if s.name != "status" {
		return apierrors.NewNotFound(schema.GroupResource{}, obj.GetName()+"/"+s.name)
	}
	return nil
}

func (s *subResourceClient) Get(ctx context.Context, obj client.Object, sub client.Object, _ ...client.SubResourceGetOption) error {
	if err := s.check(obj); err != nil {
		return err
	}
	return s.c.Get(ctx, client.ObjectKeyFromObject(obj), sub)
}

func (s *subResourceClient) Create(_ context.Context, obj client.Object, _ client.Object, _ ...client.SubResourceCreateOption) error {
	return apierrors.NewMethodNotSupported(schema.GroupResource{}, "create "+obj.GetName()+"/"+s.name)
}

func (s *subResourceClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := s.check(obj); err != nil {
		return err
	}
	uo := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	return s.c.update(ctx, obj, true, writeOptions{dryRun: dryRun(uo.DryRun)})
}

func (s *subResourceClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := s.check(obj); err != nil {
		return err
	}
	po := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
	return s.c.patch(ctx, obj, patch, true, writeOptions{dryRun: dryRun(po.DryRun)})
}

func (s *subResourceClient) Apply(_ context.Context, _ runtime.ApplyConfiguration, _ ...client.SubResourceApplyOption) error {
	return apierrors.NewMethodNotSupported(schema.GroupResource{}, "apply")
}

// isTyped tells whether obj is a Go typed object rather than unstructured.
func isTyped(obj runtime.Object) bool {
	_, u := obj.(*unstructured.Unstructured)
	return !u
}

func (s *Store) observeWrite(verb string, start time.Time) {
	if s.observer != nil {
		s.observer.Wrote(verb, time.Since(start))
	}
}

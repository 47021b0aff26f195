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

// Package apply is kubectl's client-side apply for tether's resources: the
// last-applied-configuration annotation and a three-way JSON merge patch, so
// fields other writers own (reconcilers, agent verbs, defaults) survive a
// re-apply of the same file. It works through any controller-runtime client,
// so on the local store and on a cluster alike.
package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

// LastAppliedAnnotation holds the configuration last applied, as kubectl
// keeps it; it is the "original" of the three-way merge.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// DryRun says whether and where an apply only pretends.
type DryRun string

const (
	// DryRunNone applies for real; it is the zero value.
	DryRunNone DryRun = ""
	// DryRunClient computes the result without sending any write.
	DryRunClient DryRun = "client"
	// DryRunServer sends every write with dryRun=All, so the backend
	// validates and defaults it and stores nothing.
	DryRunServer DryRun = "server"
)

// ParseDryRun reads a --dry-run value as kubectl does.
func ParseDryRun(s string) (DryRun, error) {
	switch DryRun(s) {
	case "", "none":
		return DryRunNone, nil
	case DryRunClient, DryRunServer:
		return DryRun(s), nil
	}
	return "", fmt.Errorf(`invalid dry-run value (%q); must be "none", "server", or "client"`, s)
}

// Result is what an apply did to one object.
type Result string

const (
	// Created means the object did not exist and was created.
	Created Result = "created"
	// Configured means the object existed and was patched.
	Configured Result = "configured"
	// Unchanged means the object already matched the configuration.
	Unchanged Result = "unchanged"
)

// Options tune an apply.
type Options struct {
	// DryRun selects a real, client-side or server-side dry run.
	DryRun DryRun
	// FieldValidation is sent with every write: metav1.FieldValidationStrict
	// (the default when empty), Warn or Ignore.
	FieldValidation string
	// Namespace is set on namespaced objects that name none.
	Namespace string
	// EnforceNamespace rejects objects whose namespace differs from
	// Namespace, as kubectl does when -n is given.
	EnforceNamespace bool
	// Labels are added to every object, on top of the file's.
	Labels map[string]string
	// Annotations are added to every object, on top of the file's.
	Annotations map[string]string
}

// Applier applies configurations through a client.
type Applier struct {
	// Client reads the live objects and writes the changes.
	Client client.Client
	// Reader, if set, reads the live objects instead of Client, such as a
	// Manager's API reader when Client reads from a cache.
	Reader client.Reader
	// Mapper tells namespaced types from cluster-scoped ones.
	Mapper meta.RESTMapper
}

func (a *Applier) reader() client.Reader {
	if a.Reader != nil {
		return a.Reader
	}
	return a.Client
}

// Object returns the configuration a document asks for, as the user wrote
// it (no typed zero values), with opts' namespace, labels and annotations.
func (a *Applier) Object(doc manifest.Document, opts Options) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(doc.JSON); err != nil {
		return nil, err
	}
	if u.GetName() == "" && u.GetGenerateName() != "" {
		return nil, &FieldError{Field: "metadata.generateName", Err: fmt.Errorf("from %s: cannot use generate name with apply", u.GetGenerateName())}
	}
	gvk := u.GroupVersionKind()
	mapping, err := a.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		switch ns := u.GetNamespace(); {
		case ns == "":
			u.SetNamespace(opts.Namespace)
		case opts.EnforceNamespace && ns != opts.Namespace:
			return nil, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation", ns, opts.Namespace, ns)
		}
	} else {
		u.SetNamespace("")
	}
	if len(opts.Labels) > 0 {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, opts.Labels)
		u.SetLabels(l)
	}
	if len(opts.Annotations) > 0 {
		an := u.GetAnnotations()
		if an == nil {
			an = map[string]string{}
		}
		maps.Copy(an, opts.Annotations)
		u.SetAnnotations(an)
	}
	return u, nil
}

// FieldError is a configuration refused by apply itself, before anything is
// sent, because of one field.
type FieldError struct {
	// Field is the JSON path of the field.
	Field string
	// Err says what is wrong with it.
	Err error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// modifiedConfiguration returns obj's JSON carrying its own serialization,
// without the annotation, in the last-applied annotation, as kubectl's
// GetModifiedConfiguration does.
func modifiedConfiguration(obj *unstructured.Unstructured) ([]byte, error) {
	u := obj.DeepCopy()
	an := u.GetAnnotations()
	delete(an, LastAppliedAnnotation)
	if len(an) == 0 {
		an = nil
	}
	u.SetAnnotations(an)
	bare, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if an == nil {
		an = map[string]string{}
	}
	an[LastAppliedAnnotation] = string(bare)
	u.SetAnnotations(an)
	return u.MarshalJSON()
}

// Apply creates obj or merges it into the live object. It returns what it
// did and, unless it was a client-side dry run of a change, the object as
// stored (or as it would be stored).
func (a *Applier) Apply(ctx context.Context, obj *unstructured.Unstructured, opts Options) (Result, *unstructured.Unstructured, error) {
	modified, err := modifiedConfiguration(obj)
	if err != nil {
		return "", nil, err
	}
	desired := &unstructured.Unstructured{}
	if err := desired.UnmarshalJSON(modified); err != nil {
		return "", nil, err
	}
	validation := opts.FieldValidation
	if validation == "" {
		validation = metav1.FieldValidationStrict
	}

	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err = a.reader().Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		if opts.DryRun == DryRunClient {
			return Created, desired, nil
		}
		createOpts := []client.CreateOption{client.FieldValidation(validation)}
		if opts.DryRun == DryRunServer {
			createOpts = append(createOpts, client.DryRunAll)
		}
		if err := a.Client.Create(ctx, desired, createOpts...); err != nil {
			return "", nil, err
		}
		return Created, desired, nil
	case err != nil:
		return "", nil, err
	}

	current, err := live.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	var original []byte
	if s, ok := live.GetAnnotations()[LastAppliedAnnotation]; ok {
		original = []byte(s)
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current,
		mergepatch.RequireKeyUnchanged("apiVersion"),
		mergepatch.RequireKeyUnchanged("kind"),
		mergepatch.RequireMetadataKeyUnchanged("name"))
	if err != nil {
		if mergepatch.IsPreconditionFailed(err) {
			return "", nil, errors.New("at least one of apiVersion, kind and name was changed")
		}
		return "", nil, fmt.Errorf("computing the merge patch: %w", err)
	}
	if isEmptyPatch(patch) {
		return Unchanged, live, nil
	}
	if opts.DryRun == DryRunClient {
		return Configured, live, nil
	}
	patchOpts := []client.PatchOption{client.FieldValidation(validation)}
	if opts.DryRun == DryRunServer {
		patchOpts = append(patchOpts, client.DryRunAll)
	}
	if err := a.Client.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch), patchOpts...); err != nil {
		return "", nil, err
	}
	return Configured, live, nil
}

func isEmptyPatch(patch []byte) bool {
	var m map[string]any
	return json.Unmarshal(patch, &m) == nil && len(m) == 0
}

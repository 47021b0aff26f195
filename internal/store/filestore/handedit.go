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
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tether-dev/tether/internal/kubectl/manifest"
	"github.com/tether-dev/tether/internal/store/crdschema"
)

// A hand edit is a store file changed by something other than the store:
// an editor, sed -i, cp. Its header checksum no longer matches. The store
// adopts a valid edit as an update (new resourceVersion, generation bumped
// when the spec changed; a new file becomes a new object with a new uid)
// and rewrites the file in its own form. An invalid edit is reported with
// file and line; the last valid version, kept in the journal, stays in
// effect, and the file is left as the person wrote it.

// adopter is the hand-edit adoption layer, on top of commit, object files,
// the journal and the layout, none of which calls it back: a read returns
// a file holding a hand edit as such, and the reader asks for its adoption
// (adopt, adoptFile) as a step of its own, which takes the write lock and
// may write. An adoption can delete an object that names only absent
// owners; the Store above collects that one's dependents afterwards
// (Store.collectOrphans), as adoption never calls up into the Store.
type adopter struct {
	*groupCommitter
	// validator compiles the CRDs' schemas on first use: a process that
	// only reads never needs them.
	validator func() (*crdschema.Validator, error)
	now       func() time.Time
	observer  Observer
	// lockedAdoptions counts the adoption checks made under the write lock.
	lockedAdoptions atomic.Uint64
	// orphans are objects deleted for naming only absent owners, whose own
	// dependents are still to be collected (see Store.collectOrphans).
	orphansMu sync.Mutex
	orphans   []*unstructured.Unstructured
}

// InvalidEditError is a hand edit the store refused.
type InvalidEditError struct {
	// File is the store file and, when known, its line.
	File *FileError
	// Object is the last valid version, still in effect; nil for a new file.
	Object *unstructured.Unstructured
}

func (e *InvalidEditError) Error() string { return "invalid hand edit: " + e.File.Error() }

// adoptFile adopts the hand edit of one store file, if it has one. It
// returns an *InvalidEditError for an edit it refuses. The caller then
// collects the dependents of an object the adoption deleted.
func (s *adopter) adoptFile(ctx context.Context, path string) error {
	s.lockedAdoptions.Add(1)
	return s.withWriteLock(func() error { return s.adoptLocked(ctx, path) })
}

// adoptLocked is adoptFile for a caller that holds the write lock.
func (s *adopter) adoptLocked(ctx context.Context, path string) error {
	r, namespace, name, ok := s.keyOfPath(path)
	if !ok {
		return nil
	}
	{
		so, fi, held, err := s.readObjectFileStat(path)
		if held != nil {
			defer func() { _ = held.Close() }()
		}
		if errors.Is(err, os.ErrNotExist) {
			return s.adoptRemoval(r, namespace, name)
		}
		last, lerr := s.lastValid(r, namespace, name)
		if lerr != nil {
			return lerr
		}
		var fe *FileError
		if errors.As(err, &fe) {
			return &InvalidEditError{File: fe, Object: last}
		}
		if err != nil {
			return err
		}
		if !so.handEdited {
			return nil
		}
		next, errs := s.prepareAdoption(ctx, r, namespace, name, so.obj, last)
		if len(errs) > 1 {
			// The schema validator adds an error of no field saying that
			// rules were skipped because of the others: it names nothing.
			errs = slices.DeleteFunc(errs, func(e *field.Error) bool { return e.Field == "" || e.Field == "<nil>" })
		}
		if len(errs) > 0 {
			return &InvalidEditError{File: &FileError{Path: path, Line: s.lineOfField(path, errs[0].Field), Err: errs.ToAggregate()}, Object: last}
		}
		if js, err := next.MarshalJSON(); err != nil || len(js) > maxObjectBytes {
			return &InvalidEditError{File: &FileError{Path: path, Err: fmt.Errorf("the object is %d bytes of JSON; the limit is %d", len(js), maxObjectBytes)}, Object: last}
		}
		typ := Modified
		if last == nil {
			typ = Added
		} else if sameContent(last, next) {
			// Only formatting or comments changed: put the store's form back,
			// unless the person has saved again meanwhile.
			return s.writeObjectFileFrom(path, last, fi)
		}
		s.log.Info("adopted a hand edit", "file", path)
		if fi == nil {
			err = s.commit(r, typ, next)
		} else {
			err = s.commitIf(r, typ, next, fi)
		}
		if err == nil {
			s.observeHandEdit(true)
			err = s.collectIfOrphanedLocked(r, last, next)
		}
		return err
	}
}

// currentLocked returns the object in effect for a key, adopting a pending
// hand edit first. The caller holds the write lock.
func (s *adopter) currentLocked(ctx context.Context, r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	so, err := s.get(r, namespace, name)
	return s.adoptIfChanged(ctx, r, namespace, name, so, err)
}

// adoptIfChanged is where a read of the core path meets adoption: given
// what get returned for a key, it returns the object when the store wrote
// its file, and otherwise adopts the file's hand edit and returns the
// object then in effect: the adopted edit, or the last valid version when
// the edit is refused. The caller holds the write lock.
func (s *adopter) adoptIfChanged(ctx context.Context, r *resource, namespace, name string, so *storedObject, err error) (*unstructured.Unstructured, error) {
	if err == nil && !so.handEdited {
		return so.obj, nil
	}
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	var inv *InvalidEditError
	if aerr := s.adoptLocked(ctx, s.objectPath(r, namespace, name)); errors.As(aerr, &inv) {
		if inv.Object == nil {
			return nil, apierrors.NewNotFound(r.groupResource(), name)
		}
		return inv.Object, nil
	} else if aerr != nil {
		return nil, aerr
	}
	so, err = s.get(r, namespace, name)
	if err != nil {
		return nil, err
	}
	return so.obj, nil
}

// adopt returns the object in effect for a key after adopting the hand
// edit its file holds, under the write lock: the adopted edit, or the last
// valid version when the edit is refused. A reader asks for it when its
// read found a hand edit (see Store.settled). The caller then collects
// the dependents of an object the adoption deleted.
func (s *adopter) adopt(ctx context.Context, r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := s.withWriteLock(func() error {
		var err error
		out, err = s.currentLocked(ctx, r, namespace, name)
		return err
	})
	return out, err
}

func (s *adopter) writeObjectFileFrom(path string, obj *unstructured.Unstructured, read os.FileInfo) error {
	js, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	rv, err := parseRV(obj.GetResourceVersion())
	if err != nil {
		return err
	}
	return s.writeObjectFileIf(path, rv, js, func(replaced string) bool { return read == nil || s.isFile(replaced, read) })
}

// adoptRemoval records a store file that a person deleted as a deletion.
// It bypasses finalizers: the file is already gone.
func (s *adopter) adoptRemoval(r *resource, namespace, name string) error {
	last, err := s.lastValid(r, namespace, name)
	if err != nil || last == nil {
		return err
	}
	s.log.Info("a store file was removed by hand; recording the deletion", "resource", r.plural, "namespace", namespace, "name", name)
	return s.commit(r, Deleted, last)
}

// prepareAdoption validates edited content as an update of last, or as a
// create when there is no last version, and returns the object to store.
func (s *adopter) prepareAdoption(ctx context.Context, r *resource, namespace, name string, edited, last *unstructured.Unstructured) (*unstructured.Unstructured, field.ErrorList) {
	next := edited.DeepCopy()
	if next.GroupVersionKind() != r.gvk {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), next.GetAPIVersion()+" "+next.GetKind(),
			fmt.Sprintf("a file under %s/ must hold a %s", r.plural, r.gvk.GroupVersion().WithKind(r.gvk.Kind)))}
	}
	if last != nil {
		if errs := identityErrors(r, namespace, name, next); len(errs) > 0 {
			return nil, errs
		}
	}
	next.SetName(name)
	next.SetNamespace(namespace)
	next.SetManagedFields(nil)
	var v *crdschema.Validator
	if r.crd {
		var err error
		if v, err = s.validator(); err != nil {
			return nil, field.ErrorList{field.InternalError(nil, err)}
		}
		if pruned := v.Prune(r.gvk, next.Object); len(pruned) > 0 {
			var errs field.ErrorList
			for _, p := range pruned {
				errs = append(errs, field.NotSupported(field.NewPath(p), "", []string{"fields declared in the schema"}))
			}
			return nil, errs
		}
		if err := v.Default(r.gvk, next.Object); err != nil {
			return nil, field.ErrorList{field.InternalError(nil, err)}
		}
	}
	if last == nil {
		next.SetUID(uuid.NewUUID())
		next.SetCreationTimestamp(metav1.NewTime(s.now()))
		next.SetGeneration(1)
		next.SetDeletionTimestamp(nil)
		next.SetResourceVersion("")
		if r.status {
			delete(next.Object, "status")
		}
		if r.crd {
			if errs := v.ValidateCreate(ctx, r.gvk, next.Object); len(errs) > 0 {
				return nil, errs
			}
		}
		return next, s.typedErrors(r, next)
	}
	next.SetUID(last.GetUID())
	next.SetCreationTimestamp(last.GetCreationTimestamp())
	next.SetGeneration(last.GetGeneration())
	next.SetDeletionTimestamp(last.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(last.GetDeletionGracePeriodSeconds())
	next.SetResourceVersion(last.GetResourceVersion())
	if errs := finalizerErrors(last, next); len(errs) > 0 {
		return nil, errs
	}
	if r.crd {
		if errs := v.ValidateUpdate(ctx, r.gvk, next.Object, last.Object); len(errs) > 0 {
			return nil, errs
		}
	}
	if errs := s.typedErrors(r, next); len(errs) > 0 {
		return nil, errs
	}
	if !bytesEqualWithout(last, next, "metadata", "status") {
		next.SetGeneration(last.GetGeneration() + 1)
	}
	return next, nil
}

// identityErrors refuses an edit of an object's file whose metadata names
// another object than its path: the path is the object's identity, and
// adopting the edit under it would drop the change the person made. An
// absent name or namespace is taken from the path. A new file (a copy)
// is named by its path instead, and never gets here.
func identityErrors(r *resource, namespace, name string, edited *unstructured.Unstructured) field.ErrorList {
	key := name
	if r.namespaced {
		key = namespace + "/" + name
	}
	detail := func(field, value string) string {
		return fmt.Sprintf("the file's path names %s %s, which an edit cannot change: set %s back to %q, or apply a copy of the object under its new identity", r.gvk.Kind, key, field, value)
	}
	var errs field.ErrorList
	if got := edited.GetName(); got != "" && got != name {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), got, detail("metadata.name", name)))
	}
	if got := edited.GetNamespace(); got != "" && got != namespace {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), got, detail("metadata.namespace", namespace)))
	}
	return errs
}

func bytesEqualWithout(a, b *unstructured.Unstructured, drop ...string) bool {
	return bytes.Equal(contentWithout(a, drop...), contentWithout(b, drop...))
}

// lineOfField returns the line of a field path in the YAML file at path,
// or of its nearest ancestor, for error messages; 0 when it is unknown.
func (s *adopter) lineOfField(path, fieldPath string) int {
	if fieldPath == "" || fieldPath == "<nil>" {
		return 0
	}
	data, err := s.readRegular(path)
	if err != nil {
		return 0
	}
	return manifest.FieldLine(data, fieldPath)
}

// reportFileError reports the entry of a refused read or edit.
func (s *adopter) reportFileError(fe *FileError, last *unstructured.Unstructured) {
	p, regarding := s.fileProblem(fe, last)
	s.quarantine.reportEntry(quarantined{problem: p, regarding: regarding, fromFile: true})
}

// fileProblem is the problem of a refused read or edit and what its Event
// regards: the last valid version, or a reference built from the path.
func (s *adopter) fileProblem(fe *FileError, last *unstructured.Unstructured) (Problem, runtime.Object) {
	p := Problem{Path: fe.Path, Reason: fe.Error(), Fix: "fix or remove the file; the last valid version stays in effect"}
	var ee *EntryError
	if errors.As(fe.Err, &ee) {
		p.Reason, p.Fix = ee.Reason, ee.Fix
	}
	var regarding runtime.Object
	if last != nil {
		regarding = last
	} else if r, ns, name, ok := s.keyOfPath(fe.Path); ok {
		regarding = &corev1.ObjectReference{APIVersion: r.gvk.GroupVersion().String(), Kind: r.gvk.Kind, Namespace: ns, Name: name}
	}
	return p, regarding
}

// collectIfOrphanedLocked deletes next, just adopted from a hand edit of
// last (nil for a new file), when the edit added owner references and every
// owner they name is absent: no object of its kind and name, or one of
// another uid. Such an edit names owners already deleted, whose collection
// could not see it, as it was not in the journal. An object with
// finalizers gets a deletionTimestamp; a deleted one's own dependents are
// collected once the lock is released (collectOrphans). The caller holds
// the write lock.
func (s *adopter) collectIfOrphanedLocked(r *resource, last, next *unstructured.Unstructured) error {
	refs := next.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	if last != nil && slices.EqualFunc(refs, last.GetOwnerReferences(), func(a, b metav1.OwnerReference) bool { return a.UID == b.UID }) {
		return nil
	}
	for _, ref := range refs {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return nil
		}
		or, known := s.byGVK[gv.WithKind(ref.Kind)]
		if !known {
			return nil // an owner the store cannot look up may exist
		}
		ns := ""
		if or.namespaced {
			ns = next.GetNamespace()
		}
		owner, err := s.get(or, ns, ref.Name)
		if err == nil && owner.obj.GetUID() == ref.UID {
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return nil
		}
	}
	s.log.Info("a hand edit names only owners that are gone; collecting the object", "resource", r.plural, "namespace", next.GetNamespace(), "name", next.GetName())
	if len(next.GetFinalizers()) > 0 {
		if next.GetDeletionTimestamp() != nil {
			return nil
		}
		now := metav1.NewTime(s.now())
		zero := int64(0)
		next.SetDeletionTimestamp(&now)
		next.SetDeletionGracePeriodSeconds(&zero)
		next.SetGeneration(next.GetGeneration() + 1)
		return s.commit(r, Modified, next)
	}
	if err := s.commit(r, Deleted, next); err != nil {
		return err
	}
	s.orphansMu.Lock()
	s.orphans = append(s.orphans, next)
	s.orphansMu.Unlock()
	return nil
}

func (s *adopter) observeHandEdit(adopted bool) {
	if s.observer != nil {
		s.observer.HandEdit(adopted)
	}
}

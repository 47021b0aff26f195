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
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tether-dev/tether/internal/store/crdschema"
)

// optimisticLockMessage is kube-apiserver's text for a stale resourceVersion.
const optimisticLockMessage = "the object has been modified; please apply your changes to the latest version and try again"

// writeOptions are the parts of create, update and patch options the store honours.
type writeOptions struct {
	dryRun bool
	strict bool
	// typed is set when the object comes from a Go typed object, which
	// therefore decodes into one: the decoding check is skipped.
	typed bool
}

// admit prunes, defaults and sizes obj as the API server does before validation.
func (s *Store) admit(r *resource, obj *unstructured.Unstructured, opts writeOptions) error {
	if !r.crd {
		return nil
	}
	v, err := s.validator()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	pruned := v.Prune(r.gvk, obj.Object)
	if opts.strict && len(pruned) > 0 {
		msgs := make([]string, len(pruned))
		for i, p := range pruned {
			msgs[i] = fmt.Sprintf("unknown field %q", p)
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s",
			r.gvk.Kind, r.gvk.Version, r.gvk.Kind, strings.Join(msgs, ", ")))
	}
	return v.Default(r.gvk, obj.Object)
}

// admitMerged is admit for the object an update merged. When the update
// is a status update whose status checkStatus gave, that status is left
// out of the pass: checkStatus pruned and defaulted it with the same
// schema, so a second pass would change nothing.
func (s *Store) admitMerged(r *resource, next *unstructured.Unstructured, checkedStatus interface{}, opts writeOptions) error {
	if checkedStatus == nil {
		return s.admit(r, next, opts)
	}
	delete(next.Object, "status")
	err := s.admit(r, next, opts)
	next.Object["status"] = checkedStatus
	return err
}

func checkSize(r *resource, obj *unstructured.Unstructured) error {
	js, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	return sizeError(r, obj.GetName(), len(js))
}

// sizeError refuses an object whose JSON is size bytes long when that is
// over the limit.
func sizeError(r *resource, name string, size int) error {
	if size > maxObjectBytes {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("%s %q is %d bytes; the limit is %d", r.plural, name, size, maxObjectBytes))
	}
	return nil
}

func nameErrors(name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name, strings.Join(msgs, ", "))}
	}
	return nil
}

func (s *Store) create(ctx context.Context, r *resource, in *unstructured.Unstructured, opts writeOptions) (*unstructured.Unstructured, error) {
	if err := contextDone(ctx); err != nil {
		return nil, err
	}
	obj := in.DeepCopy()
	obj.SetGroupVersionKind(r.gvk)
	if obj.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(obj.GetGenerateName() + utilrand.String(5))
	}
	if errs := nameErrors(obj.GetName()); len(errs) > 0 {
		return nil, crdschema.ToAPIError(r.gvk, obj.GetName(), errs)
	}
	if !r.namespaced {
		obj.SetNamespace("")
	} else if obj.GetNamespace() == "" {
		return nil, apierrors.NewBadRequest("the namespace of the object is required for namespaced resource " + r.plural)
	} else if msgs := validation.IsDNS1123Label(obj.GetNamespace()); len(msgs) > 0 {
		return nil, crdschema.ToAPIError(r.gvk, obj.GetName(), field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), obj.GetNamespace(), strings.Join(msgs, ", "))})
	}
	if r.status {
		delete(obj.Object, "status")
	}
	if err := s.admit(r, obj, opts); err != nil {
		return nil, err
	}
	obj.SetUID(uuid.NewUUID())
	obj.SetCreationTimestamp(metav1.NewTime(s.now()))
	obj.SetGeneration(1)
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetManagedFields(nil)
	if r.crd {
		v, err := s.validator()
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if errs := v.ValidateCreate(ctx, r.gvk, obj.Object); len(errs) > 0 {
			return nil, crdschema.ToAPIError(r.gvk, obj.GetName(), errs)
		}
	}
	if !opts.typed {
		if errs := s.typedErrors(r, obj); len(errs) > 0 {
			return nil, crdschema.ToAPIError(r.gvk, obj.GetName(), errs)
		}
	}
	if err := checkSize(r, obj); err != nil {
		return nil, err
	}
	if opts.dryRun {
		if fileExists(s.objectPath(r, obj.GetNamespace(), obj.GetName())) {
			return nil, apierrors.NewAlreadyExists(r.groupResource(), obj.GetName())
		}
		return obj, nil
	}
	err := s.groupWrite(s.objectPath(r, obj.GetNamespace(), obj.GetName()), func() error {
		if fileExists(s.objectPath(r, obj.GetNamespace(), obj.GetName())) {
			return apierrors.NewAlreadyExists(r.groupResource(), obj.GetName())
		}
		err := s.commit(r, Added, obj)
		return err
	})
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// update replaces an object, or only its status when subresource is true,
// with optimistic concurrency on resourceVersion.
func (s *Store) update(ctx context.Context, r *resource, in *unstructured.Unstructured, subresource bool, opts writeOptions) (*unstructured.Unstructured, error) {
	if err := contextDone(ctx); err != nil {
		return nil, err
	}
	if subresource && !r.status {
		return nil, apierrors.NewNotFound(r.groupResource(), in.GetName()+"/status")
	}
	ahead := s.readAhead(r, in.GetNamespace(), in.GetName())
	var checkedStatus interface{}
	if subresource {
		var oldStatus interface{}
		if ahead != nil {
			oldStatus = ahead.obj.Object["status"]
		}
		checkedStatus = s.checkStatus(r, in, oldStatus)
	}
	var early *preparedUpdate
	if ahead != nil {
		// Everything an update computes from the object it replaces, done
		// side by side with the other writers; the lock holder takes it when
		// the file still holds that object (see currentAfter).
		early = s.prepareUpdate(ctx, r, in, ahead.obj, subresource, checkedStatus, opts, true)
	}
	var pre *tempAhead
	if early != nil && early.encoded != nil {
		pre = s.createTempAhead(ahead.path)
		defer pre.discard()
	}
	var out *unstructured.Unstructured
	err := s.groupWrite(s.objectPath(r, in.GetNamespace(), in.GetName()), func() error {
		old, err := s.currentAfter(ctx, r, in.GetNamespace(), in.GetName(), ahead)
		if err != nil {
			return err
		}
		p := early
		if ahead == nil || old != ahead.obj {
			// The status was checked beside the status read ahead; against
			// another, it is checked here, whole, with ratcheting.
			if ahead != nil {
				checkedStatus = nil
			}
			p = s.prepareUpdate(ctx, r, in, old, subresource, checkedStatus, opts, false)
		}
		if p.err != nil {
			return p.err
		}
		next := p.next
		out = next
		// A changed spec is a change; only otherwise is the whole object compared.
		if p.same || opts.dryRun {
			return nil
		}
		if next.GetDeletionTimestamp() != nil && len(next.GetFinalizers()) == 0 {
			return s.commit(r, Deleted, next)
		}
		if p != early {
			pre = nil
		}
		return s.commitEncoded(r, Modified, next, p.encoded, pre)
	})
	s.collectOrphans(ctx)
	if err != nil {
		return nil, err
	}
	if out.GetDeletionTimestamp() != nil && len(out.GetFinalizers()) == 0 && !opts.dryRun {
		s.collectDependents(ctx, out)
	}
	return out, nil
}

// preparedUpdate is what an update computes from the object it replaces:
// the object to store or the error to return, whether it changes
// nothing, and, when prepared before the write lock, its encoding.
type preparedUpdate struct {
	next *unstructured.Unstructured
	err  error
	// same is set when next is old's content.
	same bool
	// encoded is next's JSON and YAML with the resourceVersion left open
	// (see encodeAhead); nil when not prepared ahead or not encodable so.
	encoded *encodedObject
}

// prepareUpdate checks in against old, the stored object it replaces, and
// builds the object to store (see update). It depends on nothing but its
// arguments, so that it can run before the write lock on the object
// readAhead read, and be used under the lock if the file still holds it.
// ahead asks for the encoding too.
func (s *Store) prepareUpdate(ctx context.Context, r *resource, in, old *unstructured.Unstructured, subresource bool, checkedStatus interface{}, opts writeOptions, ahead bool) *preparedUpdate {
	fail := func(err error) *preparedUpdate { return &preparedUpdate{err: err} }
	if in.GetUID() != "" && in.GetUID() != old.GetUID() {
		return fail(apierrors.NewConflict(r.groupResource(), in.GetName(), fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", in.GetUID(), old.GetUID())))
	}
	if in.GetResourceVersion() == "" {
		// kube-apiserver names the resource, not the kind, in this one message.
		return fail(apierrors.NewInvalid(schema.GroupKind{Group: r.gvk.Group, Kind: r.plural}, in.GetName(),
			field.ErrorList{field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")}))
	}
	if in.GetResourceVersion() != old.GetResourceVersion() {
		return fail(apierrors.NewConflict(r.groupResource(), in.GetName(), errors.New(optimisticLockMessage)))
	}
	next := s.merge(r, old, in, subresource, checkedStatus)
	if err := s.admitMerged(r, next, checkedStatus, writeOptions{strict: opts.strict && !subresource}); err != nil {
		return fail(err)
	}
	if errs := finalizerErrors(old, next); len(errs) > 0 {
		return fail(crdschema.ToAPIError(r.gvk, in.GetName(), errs))
	}
	if r.crd {
		v, err := s.validator()
		if err != nil {
			return fail(apierrors.NewInternalError(err))
		}
		validate := v.ValidateUpdate
		switch {
		case checkedStatus != nil:
			validate = v.ValidateCheckedStatusUpdate
		case subresource:
			validate = v.ValidateStatusUpdate
		}
		if errs := validate(ctx, r.gvk, next.Object, old.Object); len(errs) > 0 {
			return fail(crdschema.ToAPIError(r.gvk, in.GetName(), errs))
		}
	}
	// A typed object decodes, and so does the stored object it is
	// merged with (only such objects are stored).
	if !opts.typed {
		if errs := s.typedErrors(r, next); len(errs) > 0 {
			return fail(crdschema.ToAPIError(r.gvk, in.GetName(), errs))
		}
	}
	specChanged := !subresource && !bytes.Equal(contentWithout(old, "metadata", "status"), contentWithout(next, "metadata", "status"))
	if specChanged {
		next.SetGeneration(old.GetGeneration() + 1)
	}
	// One encoding of next serves the size check, the comparison with old
	// and the encoding ahead of the lock.
	js, err := next.MarshalJSON()
	if err != nil {
		return fail(err)
	}
	if err := sizeError(r, next.GetName(), len(js)); err != nil {
		return fail(err)
	}
	p := &preparedUpdate{next: next, same: !specChanged && sameContentAs(old, js)}
	if ahead && !p.same && !opts.dryRun && (next.GetDeletionTimestamp() == nil || len(next.GetFinalizers()) > 0) {
		p.encoded = encodeAheadFrom(next, js)
	}
	return p
}

// checkStatus prunes, defaults and validates a copy of the status of a
// status update, before the write lock is taken: all three depend on the
// status alone, and are the larger part of a status write's work, which
// writers then do side by side instead of one at a time under the lock.
// Only what the status changes from old, the stored status read ahead
// (nil when none was), is validated: ratcheting forgives the rest. It
// returns that status when the status schema finds it valid, and nil
// otherwise (no status, not a custom resource, or invalid: the write then
// checks it under the lock, with ratcheting, as before).
func (s *Store) checkStatus(r *resource, in *unstructured.Unstructured, old interface{}) interface{} {
	st, ok := in.Object["status"]
	if !ok || !r.crd || !r.status {
		return nil
	}
	v, err := s.validator()
	if err != nil {
		return nil
	}
	obj := map[string]interface{}{"apiVersion": r.gvk.GroupVersion().String(), "kind": r.gvk.Kind, "status": runtimeDeepCopy(st)}
	_ = v.Prune(r.gvk, obj)
	if err := v.Default(r.gvk, obj); err != nil {
		return nil
	}
	status, ok := obj["status"]
	if !ok || !v.StatusValidBeside(r.gvk, status, old) {
		return nil
	}
	return status
}

// aheadRead is an object file read and decoded before the write lock.
type aheadRead struct {
	path string
	data []byte
	obj  *unstructured.Unstructured
}

// readAhead reads and decodes the object an update replaces before the
// update takes the write lock, so that writers decode side by side what
// the lock holder would otherwise decode one at a time. It returns nil
// when the file cannot be read or holds a hand edit: only the lock holder
// adopts edits.
func (s *Store) readAhead(r *resource, namespace, name string) *aheadRead {
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return nil
	}
	path := s.objectPath(r, namespace, name)
	data, err := s.readRegular(path)
	if err != nil {
		return nil
	}
	so, err := s.decodeObjectFile(path, data)
	if err != nil || so.handEdited {
		return nil
	}
	return &aheadRead{path: path, data: data, obj: so.obj}
}

// currentAfter is currentLocked given what readAhead read: that object,
// when the file still holds the very bytes it decoded (the same bytes
// decode to the same object, hand edit or not), and otherwise the file's
// content now. The caller holds the write lock.
func (s *Store) currentAfter(ctx context.Context, r *resource, namespace, name string, ahead *aheadRead) (*unstructured.Unstructured, error) {
	if ahead != nil {
		if data, err := s.readRegular(ahead.path); err == nil && bytes.Equal(data, ahead.data) {
			return ahead.obj, nil
		}
	}
	return s.currentLocked(ctx, r, namespace, name)
}

// merge builds the object an update stores: the main resource ignores
// status and the status subresource ignores everything but status, and
// system metadata always comes from the stored object. A status update
// takes checkedStatus, when checkStatus gave one, instead of a copy of the
// request's.
func (s *Store) merge(r *resource, old, in *unstructured.Unstructured, subresource bool, checkedStatus interface{}) *unstructured.Unstructured {
	var next *unstructured.Unstructured
	if subresource {
		next = old.DeepCopy()
		if checkedStatus != nil {
			next.Object["status"] = checkedStatus
		} else if st, ok := in.Object["status"]; ok {
			next.Object["status"] = runtimeDeepCopy(st)
		} else {
			delete(next.Object, "status")
		}
	} else {
		next = in.DeepCopy()
		if r.status {
			if st, ok := old.Object["status"]; ok {
				next.Object["status"] = runtimeDeepCopy(st)
			} else {
				delete(next.Object, "status")
			}
		}
	}
	next.SetGroupVersionKind(r.gvk)
	next.SetUID(old.GetUID())
	next.SetCreationTimestamp(old.GetCreationTimestamp())
	next.SetGeneration(old.GetGeneration())
	next.SetDeletionTimestamp(old.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	next.SetResourceVersion(old.GetResourceVersion())
	next.SetManagedFields(nil)
	return next
}

func runtimeDeepCopy(v interface{}) interface{} {
	return (&unstructured.Unstructured{Object: map[string]interface{}{"v": v}}).DeepCopy().Object["v"]
}

// deleteOptions are the parts of delete options the store honours.
type deleteOptions struct {
	dryRun     bool
	uid        *types.UID
	rv         *string
	orphanDeps bool
}

// remove deletes an object, or marks it with a deletionTimestamp while it
// has finalizers. Its dependents are then deleted by the store's collector.
func (s *Store) remove(ctx context.Context, r *resource, namespace, name string, opts deleteOptions) error {
	if err := contextDone(ctx); err != nil {
		return err
	}
	var gone *unstructured.Unstructured
	err := s.groupWrite(s.objectPath(r, namespace, name), func() error {
		obj, err := s.currentLocked(ctx, r, namespace, name)
		if err != nil {
			return err
		}
		if opts.uid != nil && *opts.uid != obj.GetUID() {
			return apierrors.NewConflict(r.groupResource(), name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *opts.uid, obj.GetUID()))
		}
		if opts.rv != nil && *opts.rv != obj.GetResourceVersion() {
			return apierrors.NewConflict(r.groupResource(), name, fmt.Errorf("precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *opts.rv, obj.GetResourceVersion()))
		}
		if opts.dryRun {
			return nil
		}
		if len(obj.GetFinalizers()) > 0 {
			if obj.GetDeletionTimestamp() != nil {
				return nil
			}
			now := metav1.NewTime(s.now())
			zero := int64(0)
			obj.SetDeletionTimestamp(&now)
			obj.SetDeletionGracePeriodSeconds(&zero)
			obj.SetGeneration(obj.GetGeneration() + 1)
			err := s.commit(r, Modified, obj)
			return err
		}
		gone = obj
		err = s.commit(r, Deleted, obj)
		return err
	})
	if err == nil && gone != nil && !opts.orphanDeps {
		s.collectDependents(ctx, gone)
	}
	s.collectOrphans(ctx)
	return err
}

// collectDependents deletes, in the background, every object in the owner's
// namespace whose ownerReferences name the owner's uid, as Kubernetes'
// garbage collector does with background propagation. The owner index
// names them (see owners.go); when it cannot tell, every kind is listed.
func (s *Store) collectDependents(ctx context.Context, owner *unstructured.Unstructured) {
	deps, ok := s.owners.dependentsOf(string(owner.GetUID()), owner.GetNamespace())
	if !ok || s.listDependents {
		s.collectDependentsListing(ctx, owner)
		return
	}
	for _, d := range deps {
		r, known := s.byPlural[d.resource]
		if !known || r.namespaced != (owner.GetNamespace() != "") {
			continue
		}
		// The index is a hint: the object as it is now, its hand edit
		// adopted, decides.
		obj, err := s.settled(ctx, r, d.namespace, d.name)
		if err != nil {
			continue
		}
		s.removeIfOwnedBy(ctx, r, obj, owner.GetUID())
	}
}

// removeIfOwnedBy deletes obj when its ownerReferences name uid.
func (s *Store) removeIfOwnedBy(ctx context.Context, r *resource, obj metav1.Object, uid types.UID) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID != uid {
			continue
		}
		err := s.remove(ctx, r, obj.GetNamespace(), obj.GetName(), deleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			s.log.Error(err, "garbage collection: deleting dependent", "resource", r.plural, "name", obj.GetName())
		}
		return
	}
}

// collectDependentsListing is collectDependents without the owner index:
// it lists every kind in the owner's namespace.
func (s *Store) collectDependentsListing(ctx context.Context, owner *unstructured.Unstructured) {
	for _, r := range s.byPlural {
		if r.namespaced && owner.GetNamespace() == "" {
			continue
		}
		// Only an object whose JSON holds the owner's uid can name it.
		_, objs, err := s.listSettled(ctx, r, owner.GetNamespace(), nil, readShape{mention: []byte(owner.GetUID())})
		if err != nil {
			s.log.Error(err, "garbage collection: listing", "resource", r.plural)
			continue
		}
		for _, so := range objs {
			s.removeIfOwnedBy(ctx, r, so.obj, owner.GetUID())
		}
	}
}

// patch applies a JSON merge, JSON or (for built-in kinds) strategic merge
// patch, retrying on conflicts unless the patch pins a resourceVersion.
func (s *Store) patch(ctx context.Context, r *resource, namespace, name string, pt types.PatchType, data []byte, subresource bool, opts writeOptions) (*unstructured.Unstructured, error) {
	for attempt := 0; ; attempt++ {
		cur, err := s.settled(ctx, r, namespace, name)
		if err != nil {
			return nil, err
		}
		curJSON, err := cur.MarshalJSON()
		if err != nil {
			return nil, err
		}
		var patched []byte
		switch pt {
		case types.MergePatchType:
			patched, err = jsonpatch.MergePatch(curJSON, data)
		case types.JSONPatchType:
			var p jsonpatch.Patch
			if p, err = jsonpatch.DecodePatch(data); err == nil {
				patched, err = p.Apply(curJSON)
			}
		case types.StrategicMergePatchType:
			if r.crd {
				return nil, apierrors.NewGenericServerResponse(415, "patch", r.groupResource(), name,
					"strategic merge patch is not supported for custom resources; use application/merge-patch+json or application/json-patch+json", 0, false)
			}
			var typed interface{}
			if typed, err = s.scheme.New(r.gvk); err == nil {
				patched, err = strategicpatch.StrategicMergePatch(curJSON, data, typed)
			}
		default:
			return nil, apierrors.NewGenericServerResponse(415, "patch", r.groupResource(), name, fmt.Sprintf("patch type %q is not supported by the file store", pt), 0, false)
		}
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("applying the patch: %v", err))
		}
		next := &unstructured.Unstructured{}
		if err := next.UnmarshalJSON(patched); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched object is invalid: %v", err))
		}
		pinned := next.GetResourceVersion() != cur.GetResourceVersion()
		if next.GetName() != name || next.GetNamespace() != namespace {
			return nil, apierrors.NewBadRequest("a patch may not change the name or namespace")
		}
		out, err := s.update(ctx, r, next, subresource, opts)
		if apierrors.IsConflict(err) && !pinned && attempt < 16 {
			continue
		}
		return out, err
	}
}

// collectOrphans collects the dependents of the objects
// collectIfOrphanedLocked deleted. The caller holds no lock.
func (s *Store) collectOrphans(ctx context.Context) {
	for {
		s.orphansMu.Lock()
		if len(s.orphans) == 0 {
			s.orphansMu.Unlock()
			return
		}
		gone := s.orphans[0]
		s.orphans = s.orphans[1:]
		s.orphansMu.Unlock()
		s.collectDependents(ctx, gone)
	}
}

// settled reads an object for a reader that holds no lock, as a client
// does. The read is a read (objectFiles.read, under the shared lock); only
// when it finds a hand edit, or a file it cannot read, does settled ask
// for the edit's adoption (adopter.adopt), a step of its own that takes
// the write lock and may write, and then collect the dependents of an
// object the adoption deleted. A refused edit yields the last valid
// version.
func (s *Store) settled(ctx context.Context, r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	so, err := s.read(r, namespace, name)
	if err == nil && !so.handEdited {
		return so.obj, nil
	}
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	return s.adoptEdit(ctx, r, namespace, name)
}

// adoptEdit adopts the hand edit in the file of a key (adopter.adopt), the
// step a reader asks for when its read found one, and then collects the
// dependents of an object the adoption deleted. It returns the object in
// effect: the adopted edit, or the last valid version.
func (s *Store) adoptEdit(ctx context.Context, r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	out, err := s.adopt(ctx, r, namespace, name)
	s.collectOrphans(ctx)
	return out, err
}

// listSettled lists like list, after adopting pending hand edits; a file
// whose edit is refused contributes its last valid version. As settled,
// it reads first, under the shared lock, and asks for each adoption
// (adoptFile) as a step of its own. The objects
// are sorted by namespace and name. Given a mention, it may leave out,
// undecoded, objects whose JSON does not contain it (see list).
func (s *Store) listSettled(ctx context.Context, r *resource, namespace string, slots *itemSlots, shape readShape) (uint64, []*storedObject, error) {
	for attempt := 0; ; attempt++ {
		var rv uint64
		var items []*storedObject
		var pending []string
		err := s.withReadLock(func() error {
			var err error
			if rv, err = s.journal.lastRV(); err != nil {
				return err
			}
			items, pending, err = s.list(r, namespace, slots, shape)
			if err != nil || len(pending) > 0 && attempt == 0 {
				return err
			}
			for _, path := range pending {
				_, ns, name, _ := s.keyOfPath(path)
				last, err := s.lastValid(r, ns, name)
				if err != nil {
					return err
				}
				if last != nil {
					items = append(items, &storedObject{obj: last})
				}
			}
			return nil
		})
		if err != nil {
			return 0, nil, err
		}
		if len(pending) > 0 && attempt == 0 {
			for _, path := range pending {
				// A file that cannot be adopted (refused, unreadable, or a
				// store that cannot be written: a full disk, a read-only
				// filesystem) is skipped and its last valid version listed;
				// one bad entry never fails the list.
				err := s.adoptFile(ctx, path)
				s.collectOrphans(ctx)
				var inv *InvalidEditError
				switch {
				case errors.As(err, &inv):
					s.reportFileError(inv.File, inv.Object)
				case err != nil:
					s.quarantine.report(Problem{Path: path, Reason: err.Error(), Fix: "fix the file or the store; the last valid version stays in effect"}, nil)
				default:
					s.quarantine.cleared(path)
				}
			}
			continue
		}
		return rv, sortedByKey(items), nil
	}
}

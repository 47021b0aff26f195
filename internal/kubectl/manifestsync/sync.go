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

// Package manifestsync keeps the objects described by the YAML files of a
// user's directory applied, as the kubelet does with static manifests: a
// file added or changed is applied, an object whose file (or document) is
// gone is deleted, and an invalid file is reported and leaves its objects
// as they were. It only ever reads the directory.
package manifestsync

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/kubectl/apply"
)

const (
	// ManagedLabel marks the objects applied from a manifests directory. Its
	// value identifies the directory, so two directories never prune each
	// other's objects.
	ManagedLabel = "agents.tether.dev/manifests"
	// FileAnnotation names the file, relative to the directory, that an
	// object was applied from.
	FileAnnotation = "agents.tether.dev/manifest-file"
)

// debounce lets an editor's burst of writes and renames settle into one sync.
const debounce = 100 * time.Millisecond

// Syncer applies a directory's manifests and prunes what they no longer hold.
type Syncer struct {
	// Dir is the manifests directory; it is never written to.
	Dir string
	// Client reads live objects and writes changes.
	Client client.Client
	// Reader, if set, reads live objects instead of Client, such as a
	// Manager's API reader when Client reads from the Manager's cache.
	Reader client.Reader
	// Mapper tells namespaced types from cluster-scoped ones.
	Mapper meta.RESTMapper
	// Scheme decodes the manifests strictly.
	Scheme *runtime.Scheme
	// Kinds are the kinds whose objects may be pruned.
	Kinds []schema.GroupVersionKind
	// Namespace is used for objects whose manifest names none.
	Namespace string
	// Log receives what was applied, pruned and rejected.
	Log logr.Logger

	reported map[string]string
}

// ID is the ManagedLabel value for a directory: a hash of its absolute path.
func ID(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return "dir-" + hex.EncodeToString(sum[:8]), nil
}

func (s *Syncer) reader() client.Reader {
	if s.Reader != nil {
		return s.Reader
	}
	return s.Client
}

// Start syncs once, then again after every change in the directory, until
// ctx ends. It implements controller-runtime's manager.Runnable.
func (s *Syncer) Start(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	if err := w.Add(s.Dir); err != nil {
		return fmt.Errorf("watching --manifests %s: %w", s.Dir, err)
	}
	s.Log.Info("applying manifests", "dir", s.Dir)
	if err := s.Sync(ctx); err != nil {
		s.Log.Error(err, "syncing manifests", "dir", s.Dir)
	}
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ignored(filepath.Base(ev.Name)) {
				continue
			}
			timer.Reset(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflow may have lost events; a full sync is level-triggered.
			s.Log.Error(err, "watching manifests; syncing everything", "dir", s.Dir)
			timer.Reset(debounce)
		case <-timer.C:
			if err := s.Sync(ctx); err != nil {
				s.Log.Error(err, "syncing manifests", "dir", s.Dir)
			}
		}
	}
}

// ignored reports files that are not manifests: hidden files (editor swap
// files) and backups.
func ignored(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") || !apply.IsManifest(name)
}

type objectKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

// Sync applies every manifest in the directory once and deletes the objects
// it applied earlier whose documents are gone. Objects from a file that is
// now invalid are kept.
func (s *Syncer) Sync(ctx context.Context) error {
	id, err := ID(s.Dir)
	if err != nil {
		return err
	}
	if s.reported == nil {
		s.reported = map[string]string{}
	}
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return err
	}
	a := &apply.Applier{Client: s.Client, Reader: s.Reader, Mapper: s.Mapper}
	desired := map[objectKey]bool{}
	invalid := map[string]bool{}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || ignored(e.Name()) {
			continue
		}
		path := filepath.Join(s.Dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
		opts := apply.Options{
			FieldValidation: metav1.FieldValidationStrict,
			Namespace:       s.Namespace,
			Labels:          map[string]string{ManagedLabel: id},
			Annotations:     map[string]string{FileAnnotation: e.Name()},
		}
		outcomes, err := a.ApplyFile(ctx, apply.Source{Name: path, Data: data}, s.Scheme, opts)
		if err != nil {
			invalid[e.Name()] = true
			s.reportOnce(path, err)
			continue
		}
		delete(s.reported, path)
		for _, oc := range outcomes {
			obj := oc.Object
			desired[objectKey{obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()}] = true
			switch {
			case oc.Err != nil:
				s.Log.Error(oc.Err, "applying a manifest", "file", path)
			case oc.Result != apply.Unchanged:
				s.Log.Info("applied", "file", path, "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName(), "result", oc.Result)
			}
		}
	}
	for _, gvk := range s.Kinds {
		if err := s.prune(ctx, gvk, id, desired, invalid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reportOnce logs an invalid file's error, again only when it changes.
func (s *Syncer) reportOnce(path string, err error) {
	if s.reported[path] == err.Error() {
		return
	}
	s.reported[path] = err.Error()
	s.Log.Error(err, "invalid manifest; its objects are left as they were", "file", path)
}

func (s *Syncer) prune(ctx context.Context, gvk schema.GroupVersionKind, id string, desired map[objectKey]bool, invalid map[string]bool) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := s.reader().List(ctx, list, client.MatchingLabels{ManagedLabel: id}); err != nil {
		return err
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if desired[objectKey{gvk, obj.GetNamespace(), obj.GetName()}] || invalid[obj.GetAnnotations()[FileAnnotation]] || obj.GetDeletionTimestamp() != nil {
			continue
		}
		err := s.Client.Delete(ctx, obj, client.Preconditions{UID: ptr(obj.GetUID())})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		s.Log.Info("deleted; its manifest is gone", "kind", gvk.Kind, "namespace", obj.GetNamespace(), "name", obj.GetName(),
			"file", filepath.Join(s.Dir, obj.GetAnnotations()[FileAnnotation]))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

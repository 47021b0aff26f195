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
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	yamlv2 "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"

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

// InvalidEditError is a hand edit the store refused.
type InvalidEditError struct {
	// File is the store file and, when known, its line.
	File *FileError
	// Object is the last valid version, still in effect; nil for a new file.
	Object *unstructured.Unstructured
}

func (e *InvalidEditError) Error() string { return "invalid hand edit: " + e.File.Error() }

// adoptFile adopts the hand edit of one store file, if it has one. It
// returns an *InvalidEditError for an edit it refuses.
func (s *Store) adoptFile(ctx context.Context, path string) error {
	s.lockedAdoptions.Add(1)
	err := s.withWriteLock(func() error { return s.adoptLocked(ctx, path) })
	s.collectOrphans(ctx)
	return err
}

// adoptLocked is adoptFile for a caller that holds the write lock.
func (s *Store) adoptLocked(ctx context.Context, path string) error {
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
func (s *Store) currentLocked(ctx context.Context, r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	so, err := s.get(r, namespace, name)
	return s.adoptIfChanged(ctx, r, namespace, name, so, err)
}

// adoptIfChanged is where a read of the core path meets adoption: given
// what get returned for a key, it returns the object when the store wrote
// its file, and otherwise adopts the file's hand edit and returns the
// object then in effect: the adopted edit, or the last valid version when
// the edit is refused. The caller holds the write lock.
func (s *Store) adoptIfChanged(ctx context.Context, r *resource, namespace, name string, so *storedObject, err error) (*unstructured.Unstructured, error) {
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

// settled reads an object for a reader that holds no lock, adopting a
// pending hand edit first; a refused edit yields the last valid version.
// It reads under the shared lock: a writer's journal entry reaches watchers
// before its rename, and a reader acting on a watch event must not then
// read the version before it. Only a file holding a hand edit takes the
// write lock, to adopt it.
func (s *Store) settled(ctx context.Context, r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	var so *storedObject
	err := s.withReadLock(func() error {
		var err error
		so, err = s.get(r, namespace, name)
		return err
	})
	if err == nil && !so.handEdited {
		return so.obj, nil
	}
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	var out *unstructured.Unstructured
	err = s.withWriteLock(func() error {
		var err error
		out, err = s.currentLocked(ctx, r, namespace, name)
		return err
	})
	s.collectOrphans(ctx)
	return out, err
}

// listSettled lists like list, after adopting pending hand edits; a file
// whose edit is refused contributes its last valid version. The objects
// are sorted by namespace and name. Given a mention, it may leave out,
// undecoded, objects whose JSON does not contain it (see list).
func (s *Store) listSettled(ctx context.Context, r *resource, namespace string, slots *itemSlots, shape readShape) (uint64, []*storedObject, error) {
	for attempt := 0; ; attempt++ {
		var rv uint64
		var items []*storedObject
		var pending []string
		err := s.withReadLock(func() error {
			var err error
			if rv, err = s.currentRV(); err != nil {
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
				var inv *InvalidEditError
				switch {
				case errors.As(err, &inv):
					s.reportFileError(inv.File, inv.Object)
				case err != nil:
					s.report(Problem{Path: path, Reason: err.Error(), Fix: "fix the file or the store; the last valid version stays in effect"}, nil)
				default:
					s.cleared(path)
				}
			}
			continue
		}
		return rv, sortedByKey(items), nil
	}
}

func (s *Store) writeObjectFileFrom(path string, obj *unstructured.Unstructured, read os.FileInfo) error {
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
func (s *Store) adoptRemoval(r *resource, namespace, name string) error {
	last, err := s.lastValid(r, namespace, name)
	if err != nil || last == nil {
		return err
	}
	s.log.Info("a store file was removed by hand; recording the deletion", "resource", r.plural, "namespace", namespace, "name", name)
	return s.commit(r, Deleted, last)
}

// prepareAdoption validates edited content as an update of last, or as a
// create when there is no last version, and returns the object to store.
func (s *Store) prepareAdoption(ctx context.Context, r *resource, namespace, name string, edited, last *unstructured.Unstructured) (*unstructured.Unstructured, field.ErrorList) {
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
func (s *Store) lineOfField(path, fieldPath string) int {
	if fieldPath == "" || fieldPath == "<nil>" {
		return 0
	}
	data, err := s.readRegular(path)
	if err != nil {
		return 0
	}
	return manifest.FieldLine(data, fieldPath)
}

// ReasonInvalidEdit is the reason of the Warning Event recorded on an
// object whose store file holds a refused hand edit.
const ReasonInvalidEdit = "InvalidEdit"

// ReasonQuarantined is the reason of the Warning Event recorded for a
// store entry the store cannot read (a symbolic link, a FIFO, another
// user's file, a corrupt journal line) and skips.
const ReasonQuarantined = "Quarantined"

// ActionAdoptEdit is the action of the events the hand-edit watcher records.
const ActionAdoptEdit = "AdoptEdit"

// Before it records the Event of a refused edit, the hand-edit watcher
// waits for the file to settle: many editors save by truncating the file
// and writing it again, and a file read between the two (empty, or half
// written) is refused for a reason its person never wrote.
const (
	// settleDelay is how long a refused file must stay unchanged.
	settleDelay = 100 * time.Millisecond
	// settleLimit bounds the wait of a file that keeps changing, or stays
	// empty.
	settleLimit = 2 * time.Second
)

// settling is a refused file the watcher waits on.
type settling struct {
	// data and err are what it last read of the file.
	data       []byte
	err        string
	first, due time.Time
}

// WatchHandEdits watches the store's object directories and adopts hand
// edits as they happen, until ctx ends. It first adopts edits made while
// nothing was watching. On an inotify overflow it scans everything again.
// Refused edits are logged and recorded through rec as Warning Events on
// the object, with file and line, once the file has settled: read twice
// settleDelay apart with the same content (or after settleLimit), and
// judged on that final content.
func (s *Store) WatchHandEdits(ctx context.Context, rec events.EventRecorder) error { //nolint:gocyclo // issue 28 point 1 splits the file store; remove this then
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	// refused counts each refused version of a file once for the metrics.
	refused := map[string]string{}
	// recorded is the message of the last Event recorded about a file.
	recorded := map[string]string{}
	record := func(regarding runtime.Object, p Problem) {
		reason := ReasonQuarantined
		if _, isObject := regarding.(*unstructured.Unstructured); isObject {
			reason = ReasonInvalidEdit
		}
		msg := p.Reason
		if !strings.HasPrefix(msg, p.Path) {
			msg = p.Path + ": " + msg
		}
		rec.Eventf(regarding, nil, corev1.EventTypeWarning, reason, ActionAdoptEdit, "%s; %s", msg, p.Fix)
	}
	forget := func(path string) {
		delete(refused, path)
		delete(recorded, path)
		s.cleared(path)
	}
	pending := map[string]*settling{}
	read := func(path string) ([]byte, string) {
		data, err := s.readRegular(path)
		if err != nil {
			return nil, err.Error()
		}
		return data, ""
	}
	settle := func(path string) {
		now := time.Now()
		p := pending[path]
		if p == nil {
			p = &settling{first: now}
			pending[path] = p
		}
		p.data, p.err = read(path)
		p.due = now.Add(settleDelay)
	}
	// judge adopts or refuses a file that has settled, and records the
	// Event of a refusal whose message is news.
	judge := func(path string) {
		err := s.adoptFile(ctx, path)
		var inv *InvalidEditError
		switch {
		case errors.As(err, &inv):
			msg := inv.File.Error()
			if refused[path] != msg {
				refused[path] = msg
				s.observeHandEdit(false)
			}
			p, regarding := s.fileProblem(inv.File, inv.Object)
			s.report(p, nil)
			if regarding != nil && recorded[path] != msg {
				recorded[path] = msg
				record(regarding, p)
			}
		case err != nil:
			s.report(Problem{Path: path, Reason: err.Error(), Fix: "fix the file or the store; the last valid version stays in effect"}, nil)
		default:
			forget(path)
		}
	}
	judgeSettled := func() {
		now := time.Now()
		for path, p := range pending {
			if now.Before(p.due) {
				continue
			}
			data, err := read(path)
			// An empty file is what a save leaves between its truncate and
			// its write, however long a loaded machine keeps the editor
			// from writing: it is judged only at the limit.
			empty := err == "" && len(data) == 0
			if (empty || err != p.err || !bytes.Equal(data, p.data)) && now.Sub(p.first) < settleLimit {
				p.data, p.err, p.due = data, err, now.Add(settleDelay)
				continue
			}
			delete(pending, path)
			judge(path)
		}
	}
	handle := func(path string) {
		err := s.adoptFile(ctx, path)
		var inv *InvalidEditError
		switch {
		case errors.As(err, &inv):
			settle(path)
		case err != nil:
			s.report(Problem{Path: path, Reason: err.Error(), Fix: "fix the file or the store; the last valid version stays in effect"}, nil)
		default:
			delete(pending, path)
			forget(path)
		}
	}
	// Every report, whoever found the entry (this watcher, a list, a
	// watch), becomes one Warning Event; one found in an object file's
	// content once the file has settled.
	emit := func() {
		for _, q := range s.takeReports() {
			if q.regarding == nil {
				continue
			}
			if _, _, _, ok := s.keyOfPath(q.problem.Path); ok && q.fromFile {
				settle(q.problem.Path)
				continue
			}
			record(q.regarding, q.problem)
		}
	}
	scan := func() {
		stamps := map[string]stampSet{}
		for plural, r := range s.byPlural {
			stamps[plural] = s.loadStamps(r)
		}
		_ = filepath.WalkDir(s.dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if path == s.dir || s.isObjectDir(path) {
					_ = w.Add(path)
					return nil
				}
				return filepath.SkipDir
			}
			if d.Type()&os.ModeSymlink != 0 && path != s.dir && (s.isObjectDir(path) || filepath.Dir(path) != s.dir) {
				s.report(problemOf(symlinkError(path)), nil)
				if _, _, _, ok := s.keyOfPath(path); ok {
					handle(path)
				}
				return nil
			}
			if r, ns, name, ok := s.keyOfPath(path); ok && !s.stamped(stamps[r.plural], ns, name, path) && s.needsAdoption(path) {
				handle(path)
			}
			return nil
		})
	}
	scan()
	emit()
	var wake *time.Timer
	defer func() {
		if wake != nil {
			wake.Stop()
		}
	}()
	for {
		var woken <-chan time.Time
		if len(pending) > 0 {
			next := time.Time{}
			for _, p := range pending {
				if next.IsZero() || p.due.Before(next) {
					next = p.due
				}
			}
			if wake == nil {
				wake = time.NewTimer(time.Until(next))
			} else {
				wake.Reset(time.Until(next))
			}
			woken = wake.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-woken:
			judgeSettled()
		case <-s.quarantine.notify:
			emit()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() && s.isObjectDir(ev.Name) {
					// A new directory, possibly moved in whole: watch it, then scan it.
					_ = w.Add(ev.Name)
					scan()
					continue
				}
			}
			// Most events are the store's own writes (every write renames a
			// file into place): those files need no adoption, which the
			// same check as the scan's tells without the write lock, so
			// the watcher does not stall the store's readers and writers
			// once for each write they make.
			if _, _, _, ok := s.keyOfPath(ev.Name); ok {
				if s.needsAdoption(ev.Name) {
					handle(ev.Name)
				} else {
					// The file is the store's again (an edit undone): a
					// later identical refusal is news.
					delete(pending, ev.Name)
					forget(ev.Name)
				}
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.log.Info("file notifications lost; scanning the store again", "error", err.Error())
			scan()
		}
	}
}

// needsAdoption tells, without taking a lock, whether a file may hold a
// hand edit, so that a scan of a large store only locks for those.
func (s *Store) needsAdoption(path string) bool {
	s.objectReads.Add(1)
	data, err := s.readRegular(path)
	if err != nil {
		return true
	}
	if _, body, ok := parseHeader(data); ok {
		if _, ns, name, inStore := s.keyOfPath(path); inStore && storeFormNames(body, ns, name) {
			return false
		}
	}
	so, err := s.decodeObjectFile(path, data)
	return err != nil || so.handEdited
}

// storeFormNames tells, without parsing the YAML, whether body (the
// content of a file whose header checksum matches, so in the store's own
// form) names the object namespace/name: the file then holds no hand edit,
// as decodeObjectFile would find at several times the cost, which a scan
// of every file at start-up pays for each. In the store's form metadata's
// own fields are the lines indented by exactly two spaces below the
// unindented "metadata:" line. Anything else (a field missing or repeated,
// a value that is not the plain name) answers false, and the caller
// decodes the file.
func storeFormNames(body []byte, namespace, name string) bool {
	var gotName, gotNamespace int
	inMetadata := false
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if len(line) > 0 && line[0] != ' ' {
			inMetadata = string(line) == "metadata:"
			continue
		}
		if !inMetadata || len(line) < 3 || line[1] != ' ' || line[2] == ' ' {
			continue
		}
		switch key, value, _ := strings.Cut(string(line[2:]), ": "); key {
		case "name", "name:":
			gotName++
			if value != name || !plainName(value) {
				return false
			}
		case "namespace", "namespace:":
			gotNamespace++
			if value != namespace || !plainName(value) {
				return false
			}
		}
	}
	return gotName == 1 && (namespace == "" && gotNamespace == 0 || namespace != "" && gotNamespace == 1)
}

// plainName tells whether s, written unquoted, is read back by YAML as the
// string s: a DNS name that YAML does not take for a number, a bool or null.
// A name that begins with a lowercase letter and is none of YAML 1.1's
// lowercase bool and null words is one; the rest are asked of the YAML
// decoder, which costs more than the rest of a start-up scan's check.
func plainName(s string) bool {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' && !slices.Contains(yamlWords, s) &&
		!strings.ContainsFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.' }) {
		return true
	}
	return yamlReadsAsItself(s)
}

// yamlReadsAsItself tells whether the YAML decoder reads s, unquoted, as
// the string s.
func yamlReadsAsItself(s string) bool {
	var v interface{}
	if err := yamlv2.Unmarshal([]byte(s), &v); err != nil {
		return false
	}
	got, ok := v.(string)
	return ok && got == s
}

// yamlWords are the lowercase plain scalars YAML 1.1 reads as a bool or null.
var yamlWords = []string{"y", "yes", "n", "no", "on", "off", "true", "false", "null"}

func (s *Store) isObjectDir(path string) bool {
	rel, err := filepath.Rel(s.dir, path)
	if err != nil {
		return false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	r, ok := s.byPlural[parts[0]]
	return ok && (len(parts) == 1 || r.namespaced && len(parts) == 2)
}

// sortedByKey sorts objects by namespace and name. The keys are read once:
// reading them through an unstructured object's accessors in each
// comparison cost more than the rest of a large list's sorting.
func sortedByKey(objs []*storedObject) []*storedObject {
	type keyed struct {
		namespace, name string
		so              *storedObject
	}
	keys := make([]keyed, len(objs))
	for i, so := range objs {
		o := so.object()
		keys[i] = keyed{o.GetNamespace(), o.GetName(), so}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		return cmp.Or(strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name))
	})
	for i, k := range keys {
		objs[i] = k.so
	}
	return objs
}

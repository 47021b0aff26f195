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
	"net/http"
	"path/filepath"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Watch streams changes to the objects of list's kind that match opts, in
// resourceVersion order. With an empty or "0" resourceVersion it first
// sends the current objects as ADDED; with a resourceVersion it resumes
// after it, or sends a 410 Expired error when the journal no longer holds it.
func (c *Client) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	r, err := c.resourceOf(list)
	if err != nil {
		return nil, err
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if err := namespaceError(r, lo.Namespace); err != nil {
		return nil, err
	}
	m, err := newMatcher(lo)
	if err != nil {
		return nil, err
	}
	rvText := ""
	if lo.Raw != nil {
		rvText = lo.Raw.ResourceVersion
	}
	from, err := parseRV(rvText)
	if err != nil {
		return nil, err
	}
	_, typed := list.(*unstructured.UnstructuredList)
	changed, unsubscribe, err := c.s.journalEvents.subscribe(c.s.dir, c.s.log)
	if err != nil {
		return nil, err
	}
	c.s.watchMu.Lock()
	if c.s.closed {
		c.s.watchMu.Unlock()
		unsubscribe()
		return nil, fmt.Errorf("store %s is closed", c.s.dir)
	}
	c.s.watches.Add(1)
	c.s.watchMu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	stopOnClose := context.AfterFunc(c.s.life, cancel)
	w := &fileWatch{
		c: c, r: r, m: m, typed: !typed, changed: changed, unsubscribe: unsubscribe,
		result: make(chan watch.Event, 128), cancel: cancel, done: make(chan struct{}),
		matching: map[string]bool{}, transform: transformOf(opts),
	}
	go func() {
		defer c.s.watches.Done()
		defer stopOnClose()
		w.run(ctx, from, rvText == "" || rvText == "0")
	}()
	return w, nil
}

type fileWatch struct {
	c     *Client
	r     *resource
	m     *matcher
	typed bool
	// changed wakes the watch when the journal may have changed
	// (journalNotifier); unsubscribe ends that.
	changed     <-chan struct{}
	unsubscribe func()
	result      chan watch.Event
	cancel      context.CancelFunc
	done        chan struct{}
	stopOnce    sync.Once
	// matching tells, for each object key of a selective watch, whether the
	// object matched the selector at the last resourceVersion the watch
	// passed, so that a change is sent as kube-apiserver sends it: MODIFIED
	// when it matched before and after, ADDED when it starts matching,
	// DELETED when it stops. A key absent from it is unknown (see deliver).
	matching map[string]bool
	// transform is the Transform option, applied to each object sent
	// once its selector has read it; nil for none.
	transform Transform
}

func (w *fileWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *fileWatch) Stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		<-w.done
	})
}

func (w *fileWatch) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *fileWatch) sendError(ctx context.Context, err *apierrors.StatusError) {
	status := err.Status()
	w.send(ctx, watch.Event{Type: watch.Error, Object: &status})
}

func (w *fileWatch) object(u *unstructured.Unstructured) (runtime.Object, error) {
	if !w.typed {
		return u, nil
	}
	obj, err := w.c.s.scheme.New(w.r.gvk)
	if err != nil {
		return nil, err
	}
	return obj, w.c.fill(u, obj)
}

func (w *fileWatch) run(ctx context.Context, from uint64, initial bool) { //nolint:gocyclo // issue 28 point 1 splits the file store; remove this then
	defer close(w.done)
	defer close(w.result)
	defer w.unsubscribe()

	if initial {
		rv, items, err := w.c.s.listSettled(ctx, w.r, w.m.namespace, nil, readShape{})
		if err != nil {
			w.sendError(ctx, apierrors.NewInternalError(err))
			return
		}
		from = rv
		for _, so := range items {
			u := so.obj
			if !w.m.matches(u) {
				if w.m.selective() {
					w.matching[key(u)] = false
				}
				continue
			}
			w.matching[key(u)] = true
			obj, err := w.object(u)
			if err != nil {
				return
			}
			w.transformed(obj)
			if !w.send(ctx, watch.Event{Type: watch.Added, Object: obj}) {
				return
			}
		}
	}

	journalPath := filepath.Join(w.c.s.dir, journalName)
	var reader *journalReader
	var inode uint64
	// fresh is set while the reader has read nothing: a watch that needs
	// no entry up to its resourceVersion seeks past them (seekAfter).
	var fresh bool
	open := func() bool {
		if reader != nil {
			_ = reader.close()
			reader = nil
		}
		next, err := w.c.s.journal.newJournalReader(w.r.plural)
		if err != nil {
			w.sendError(ctx, apierrors.NewInternalError(err))
			return false
		}
		reader = next
		inode = fileInode(reader.f)
		fresh = true
		return true
	}
	if !open() {
		return
	}
	defer func() {
		if reader != nil {
			_ = reader.close()
		}
	}()

	last := from
	// prev is the resourceVersion of the readable entry before the current
	// one, and gap tells whether a corrupt line lies between them.
	var prev uint64
	gap := false
	// A selective watch from a resourceVersion learns from the journal's
	// entries up to it which objects matched then; only the first read holds
	// them in order, a journal opened again after a compaction does not.
	seeding := !initial && w.m.selective()
	drain := func() bool {
		defer func() { seeding = false }()
		if fileInodeAt(journalPath) != inode {
			if !open() {
				return false
			}
			prev, gap = 0, false
		}
		// Under the shared lock: a writer holds the exclusive one from its
		// first append to its last rename or cut, so an entry it takes
		// back (a failed write) is never read.
		var entries []entry
		err := w.c.s.withReadLock(func() error {
			if fresh && !seeding {
				if err := reader.seekAfter(last); err != nil {
					return err
				}
			}
			fresh = false
			var err error
			entries, err = reader.nextAfter(last, seeding)
			return err
		})
		if err != nil {
			w.sendError(ctx, apierrors.NewInternalError(err))
			return false
		}
		for _, e := range entries {
			if e.corrupt != nil {
				w.c.s.quarantine.report(e.corrupt.problem(journalPath), storeReference())
				gap = true
				continue
			}
			if gap {
				gap = false
				// The lost line's resourceVersion lies between prev and
				// e.RV. When there is none, or the watch was past it
				// already, nothing was missed; otherwise the watch cannot
				// tell what changed, and the client lists again, as after
				// a compaction.
				if e.RV > prev+1 && e.RV > last+1 {
					w.sendError(ctx, &apierrors.StatusError{ErrStatus: metav1.Status{
						Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
						Message: fmt.Sprintf("too old resource version: %d (a corrupt journal line lies after it)", last),
					}})
					return false
				}
			}
			if e.RV > 0 {
				prev = e.RV
			} else if e.Compacted > 0 {
				prev = e.Compacted
			}
			if e.Compacted > last {
				w.sendError(ctx, &apierrors.StatusError{ErrStatus: metav1.Status{
					Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
					Message: fmt.Sprintf("too old resource version: %d (%d)", last, e.Compacted),
				}})
				return false
			}
			if e.RV <= last {
				if seeding && e.RV > 0 && e.Resource == w.r.plural {
					w.remember(e)
				}
				continue
			}
			last = e.RV
			if e.Resource != w.r.plural {
				continue
			}
			if !w.deliver(ctx, e) {
				return false
			}
		}
		return true
	}
	if !drain() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.changed:
			if !drain() {
				return
			}
		}
	}
}

func (w *fileWatch) deliver(ctx context.Context, e entry) bool {
	obj, u, typeErr, err := w.decode(e.Object)
	if err != nil {
		w.c.s.quarantine.report(Problem{Path: filepath.Join(w.c.s.dir, journalName),
			Reason: fmt.Sprintf("the entry of resourceVersion %d holds no readable object (%v); it is skipped", e.RV, err),
			Fix:    "nothing to do: the object files hold every object"}, storeReference())
		return true
	}
	if obj == nil {
		// Skipped, as a list skips it: one undecodable object must not end
		// every watch of its kind.
		w.c.s.reportUndecodable(w.r, u, typeErr)
		return true
	}
	if e.Type == Deleted {
		obj.SetResourceVersion(strconv.FormatUint(e.RV, 10))
	}
	k := obj.GetNamespace() + "/" + obj.GetName()
	matches := w.m.matches(obj)
	typ := watch.EventType(e.Type)
	if w.m.selective() {
		before, known := w.matching[k]
		if !known {
			// The object's state at the watch's start was compacted away;
			// a change that keeps it matching is the likeliest reading.
			before = matches
		}
		switch {
		case e.Type == Modified && matches && !before:
			typ = watch.Added
		case e.Type == Modified && !matches && before:
			typ = watch.Deleted
		}
		if e.Type == Deleted {
			delete(w.matching, k)
		} else {
			w.matching[k] = matches
		}
	}
	if !matches && (typ != watch.Deleted || e.Type == Deleted) {
		return true
	}
	w.transformed(obj)
	return w.send(ctx, watch.Event{Type: typ, Object: obj})
}

// transformed applies the watch's Transform to obj, when it has one.
func (w *fileWatch) transformed(obj runtime.Object) {
	if co, ok := obj.(client.Object); ok && w.transform != nil {
		w.transform(co)
	}
}

// decode decodes an entry's object as the watch sends it: a typed watch's
// straight from the JSON into its Go type, as a list decodes it, without
// an unstructured map in between. An object that is JSON but not of the
// type comes back nil, with its unstructured form and typeErr saying why;
// err says it is not an object at all.
func (w *fileWatch) decode(data []byte) (obj client.Object, u *unstructured.Unstructured, typeErr, err error) {
	// Anything but a JSON object (null would decode into an empty one) is
	// left to the unstructured decoder, which refuses it.
	if w.typed && len(data) > 0 && data[0] == '{' {
		o, err := w.c.s.scheme.New(w.r.gvk)
		if err != nil {
			return nil, nil, nil, err
		}
		typed, ok := o.(client.Object)
		if !ok {
			typeErr = fmt.Errorf("%s is not a client.Object", w.r.gvk.Kind)
		} else if typeErr = utiljson.Unmarshal(data, typed); typeErr == nil {
			typed.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			return typed, nil, nil, nil
		}
	}
	u = &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, nil, nil, err
	}
	if w.typed {
		if typeErr == nil {
			typeErr = fmt.Errorf("not a JSON object")
		}
		return nil, u, typeErr, nil
	}
	return u, u, nil, nil
}

// remember records whether the object of a journal entry the watch starts
// after matched its selector.
func (w *fileWatch) remember(e entry) {
	k := e.Namespace + "/" + e.Name
	if e.Type == Deleted {
		delete(w.matching, k)
		return
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(e.Object); err != nil {
		return
	}
	w.matching[k] = w.m.matches(u)
}

func key(u *unstructured.Unstructured) string { return u.GetNamespace() + "/" + u.GetName() }

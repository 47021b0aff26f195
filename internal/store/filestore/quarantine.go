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
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Problem is one thing wrong with a store: an entry the store cannot read
// and skips (quarantined), a corrupt journal line, a directory others can
// write, a leftover temp file.
type Problem struct {
	// Path is the file or directory.
	Path string
	// Reason says what is wrong.
	Reason string
	// Fix says what a person can do about it.
	Fix string
}

// quarantine remembers the entries the store has skipped, so that each is
// reported once (an error log here, a Warning Event through the hand-edit
// watcher) until it is fixed.
type quarantine struct {
	log      logr.Logger
	mu       sync.Mutex
	reported map[string]string
	// pending are the reports the watcher has not turned into Events yet.
	pending []quarantined
	notify  chan struct{}
}

type quarantined struct {
	problem Problem
	// regarding is the object the Event is about: the last valid version
	// in effect, or a reference built from the entry's path.
	regarding runtime.Object
	// fromFile is set for a problem found in an object file's content,
	// which may be a save caught midway: the watcher reads the file again
	// once it has settled before it records an Event.
	fromFile bool
}

func newQuarantine(log logr.Logger) *quarantine {
	return &quarantine{log: log, reported: map[string]string{}, notify: make(chan struct{}, 1)}
}

// report records p, logging it unless the same problem of the same path
// was reported already. regarding may be nil.
func (q *quarantine) report(p Problem, regarding runtime.Object) {
	q.reportEntry(quarantined{problem: p, regarding: regarding})
}

// reportEntry is report of a quarantined entry.
func (q *quarantine) reportEntry(e quarantined) {
	p := e.problem
	q.mu.Lock()
	if q.reported[p.Path] == p.Reason {
		q.mu.Unlock()
		return
	}
	q.reported[p.Path] = p.Reason
	q.pending = append(q.pending, e)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
	q.log.Error(errors.New(p.Reason), "quarantined a store entry: it is skipped until fixed; every other object keeps working", "path", p.Path, "fix", p.Fix)
}

// cleared forgets a path's report once the entry reads well again, so that
// a later problem is news.
func (q *quarantine) cleared(path string) {
	q.mu.Lock()
	delete(q.reported, path)
	q.mu.Unlock()
}

// takeReports returns the reports not handed out yet.
func (q *quarantine) takeReports() []quarantined {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending = nil
	return out
}

// storeReference is what an Event about the store itself (its journal)
// regards.
func storeReference() *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Store", Namespace: "default", Name: "store"}
}

func problemOf(e *EntryError) Problem { return Problem{Path: e.Path, Reason: e.Reason, Fix: e.Fix} }

// EntryError is a store entry the store refuses to read: a symbolic link,
// a FIFO, a device, a directory where a file belongs, a file owned by
// another user or one too large to be an object. It names the path, the
// reason and the fix.
type EntryError struct {
	// Path is the entry.
	Path string
	// Reason says what is wrong with it.
	Reason string
	// Fix says what a person can do about it.
	Fix string
}

func (e *EntryError) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Path, e.Reason, e.Fix) }

func symlinkError(path string) *EntryError {
	return &EntryError{Path: path, Reason: "is a symbolic link; the store refuses symlinked entries", Fix: "replace it by a regular file or remove it: rm " + path}
}

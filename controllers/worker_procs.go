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

package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// procTable holds the processes this run of the reconciler watches. It is
// a cache of watches, not of truth: status holds each Worker's process
// identity, and after a restart the table is rebuilt from it.
type procTable struct {
	mu     sync.Mutex
	procs  map[types.NamespacedName]*proc
	events chan event.GenericEvent
	done   chan struct{}
	closed bool
	// restart starts the successor of a crashed process from its plan
	// (restartPlan) as soon as the exit is delivered, or returns nil.
	restart func(plan *v1.Worker, exit supervise.Exit) *launched
}

// proc is one watched process.
type proc struct {
	id supervise.Identity
	// exit is set once the process ended.
	exit *supervise.Exit
	// requested is set when the reconciler stopped the process itself, so
	// its exit is not a crash.
	requested bool
	// seenAlive is set when this run followed the process while it ran
	// (a child it launched, or a watch that found it running): no earlier
	// run of the reconciler can then have started its successor.
	seenAlive bool
	// next is the process started after this one's crash whose crash
	// record is not stored yet: the restart comes before the record, and
	// the record's write is retried with this process until it is stored.
	next *launched
	// plan is the Worker as the reconciler last stored or saw it with this
	// process (restartPlan): what a crash is decided on when the exit is
	// delivered, before any reconcile. Nil leaves the restart to the
	// reconcile.
	plan *v1.Worker
	// stopWatch ends a pidfd watch; nil for a waited-on child.
	stopWatch func()
}

func newProcTable() *procTable {
	return &procTable{
		procs:  map[types.NamespacedName]*proc{},
		events: make(chan event.GenericEvent, 1024),
		done:   make(chan struct{}),
	}
}

// get returns a copy of the entry for key, or false.
func (t *procTable) get(key types.NamespacedName) (proc, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.procs[key]
	if !ok {
		return proc{}, false
	}
	return *p, true
}

// child registers a launched child whose exit exits delivers.
func (t *procTable) child(key types.NamespacedName, id supervise.Identity, exits *supervise.ExitNotice) {
	p := &proc{id: id, seenAlive: true}
	t.put(key, p)
	exits.Notify(func(e supervise.Exit) { t.deliver(key, p, e) })
}

// watch registers a process that is not this process's child and watches
// it through a pidfd. A process that already ended is delivered at once.
func (t *procTable) watch(key types.NamespacedName, id supervise.Identity) error {
	exits, stop, err := supervise.Watch(id)
	if err != nil {
		return err
	}
	p := &proc{id: id, stopWatch: stop}
	// Watch reports a process that is already gone at once: record it
	// before returning, so the caller handles it in the same reconcile.
	if e, ended := exits.Ended(); ended {
		p.exit = &e
		t.put(key, p)
		return nil
	}
	p.seenAlive = true
	t.put(key, p)
	exits.Notify(func(e supervise.Exit) { t.deliver(key, p, e) })
	return nil
}

// arm sets the restart plan of the process id of key.
func (t *procTable) arm(key types.NamespacedName, id supervise.Identity, plan *v1.Worker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.procs[key]; ok && p.id == id {
		p.plan = plan
	}
}

// setNext records l as the process started after the crash of the process
// id of key, until the crash record is stored.
func (t *procTable) setNext(key types.NamespacedName, id supervise.Identity, l *launched) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.procs[key]; ok && p.id == id {
		p.next = l
	}
}

func (t *procTable) put(key types.NamespacedName, p *proc) {
	t.mu.Lock()
	old := t.procs[key]
	t.procs[key] = p
	t.mu.Unlock()
	if old != nil && old.stopWatch != nil {
		old.stopWatch()
	}
}

// deliver records the exit e of p and turns it into a reconcile request.
// It is called when the exit comes (supervise.ExitNotice): nothing waits
// for it meanwhile.
func (t *procTable) deliver(key types.NamespacedName, p *proc, e supervise.Exit) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	current := t.procs[key] == p
	if current {
		p.exit = &e
		// The restart is started here, under the lock that markRequested
		// and the finalizer take, so a stop asked for meanwhile is seen
		// and a successor started is never missed by a deletion. Once the
		// table is closed the reconciler is stopping: the next run decides
		// the restart from status, and nothing is started that no one
		// would record.
		if !p.requested && p.plan != nil && t.restart != nil {
			p.next = t.restart(p.plan, e)
		}
	}
	t.mu.Unlock()
	if !current {
		return
	}
	obj := &v1.Worker{}
	obj.Namespace, obj.Name = key.Namespace, key.Name
	select {
	case t.events <- event.GenericEvent{Object: obj}:
	case <-t.done:
	}
}

// markRequested records that the reconciler is stopping the process id of key.
func (t *procTable) markRequested(key types.NamespacedName, id supervise.Identity) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.procs[key]; ok && p.id == id {
		p.requested = true
	}
}

// forget drops the entry of key if it is still the process id.
func (t *procTable) forget(key types.NamespacedName, id supervise.Identity) {
	t.mu.Lock()
	p, ok := t.procs[key]
	if ok && p.id == id {
		delete(t.procs, key)
	}
	t.mu.Unlock()
	if ok && p.id == id && p.stopWatch != nil {
		p.stopWatch()
	}
}

// forgetAll drops the entry of key, whatever process it is.
func (t *procTable) forgetAll(key types.NamespacedName) {
	t.mu.Lock()
	p, ok := t.procs[key]
	delete(t.procs, key)
	t.mu.Unlock()
	if ok && p.stopWatch != nil {
		p.stopWatch()
	}
}

// close ends every pidfd watch. The processes keep running: they are
// re-adopted by the next run of the reconciler.
func (t *procTable) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	close(t.done)
	for _, p := range t.procs {
		if p.stopWatch != nil {
			p.stopWatch()
		}
	}
}

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
)

// exitNotices carries the end of a Worker's process from the Worker
// reconciler to the Hook reconciler of the same run, before the crash
// record is stored. A notice is the Worker as its reconciler is about to
// store it: the crash record with the Hooks the dead process held, at the
// generations read through the API reader after the exit. The Hook
// reconciler judges a Hook on it by the same rule as on the stored Worker
// (workerfsm.AssigneeLost), so it frees the Hook while the Worker's own write is
// still in flight, and the crash costs one write before the assignee is
// cleared instead of two in a row.
//
// A notice is a shortcut, not a record: it is only ever true (the process
// did end, holding those Hooks), and it is withdrawn once the Worker's
// status that says the same is stored. A run that dies holding notices
// loses nothing: the next run records the crash (handleExit, findLaunched)
// and the Hook reconciler then judges the stored Worker.
type exitNotices struct {
	mu       sync.Mutex
	byWorker map[types.NamespacedName]exitNotice
	// hooks receives a request for each Hook a notice names.
	hooks chan event.GenericEvent
}

// exitNotice is one Worker's posted end.
type exitNotice struct {
	// pid is the process that ended.
	pid int32
	// worker is the Worker as it is about to be stored.
	worker *v1.Worker
}

func newExitNotices() *exitNotices {
	return &exitNotices{byWorker: map[types.NamespacedName]exitNotice{}, hooks: make(chan event.GenericEvent, 1024)}
}

// publish posts w, the Worker about to be stored with the end of its
// process pid, and asks for a reconcile of each Hook that process held. It
// never blocks: a request that finds the queue full is left to the watch
// of the stored Worker.
func (n *exitNotices) publish(w *v1.Worker, pid int32, held []v1.HeldHook) {
	if n == nil {
		return
	}
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	n.mu.Lock()
	n.byWorker[key] = exitNotice{pid: pid, worker: w.DeepCopy()}
	n.mu.Unlock()
	for _, hh := range held {
		h := &v1.Hook{}
		h.Namespace, h.Name = w.Namespace, hh.Name
		select {
		case n.hooks <- event.GenericEvent{Object: h}:
		default:
		}
	}
}

// withdraw drops the notice of the end of process pid of the Worker key,
// once the status that reports it is stored. A newer notice is kept.
func (n *exitNotices) withdraw(key types.NamespacedName, pid int32) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if e, ok := n.byWorker[key]; ok && e.pid == pid {
		delete(n.byWorker, key)
	}
}

// forget drops the notice of the Worker key, whatever process it reports:
// the Worker is going, and its deletion frees its Hooks.
func (n *exitNotices) forget(key types.NamespacedName) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.byWorker, key)
}

// lookup returns the Worker of the notice posted for key, or nil. It is
// shared: callers only read it.
func (n *exitNotices) lookup(key types.NamespacedName) *v1.Worker {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byWorker[key].worker
}

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
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

// intervalLooks carries the interval reconciler's looks at a workspace to
// the Hook reconciler, the one controller that writes a Hook's status: a
// look that took nothing (status.intervalCheckedAt) and the
// IntervalCheckpoints condition. The interval reconciler writes only
// Checkpoints; a look stays here, and counts for its next due time, until
// the Hook reconciler has stored it. A run that dies holding looks loses
// one look: the next run looks again at once.
type intervalLooks struct {
	mu     sync.Mutex
	byHook map[types.NamespacedName]intervalLook
	// hooks receives a request for each Hook a look is posted for.
	hooks chan event.GenericEvent
}

// intervalLook is what the interval reconciler last found for one Hook
// and the Hook's status does not say yet.
type intervalLook struct {
	// at is when it last looked and took nothing; zero for no such look.
	at time.Time
	// cond is the IntervalCheckpoints condition to set; nil leaves it.
	cond *metav1.Condition
	// n tells looks apart, so that storing one never drops a newer one.
	n uint64
}

func newIntervalLooks() *intervalLooks {
	return &intervalLooks{byHook: map[types.NamespacedName]intervalLook{}, hooks: make(chan event.GenericEvent, 1024)}
}

// post merges a look into the one pending for key (the later time, the
// newer condition) and asks for a reconcile of the Hook. It never blocks:
// a request that finds the queue full waits for the Hook's next event.
func (l *intervalLooks) post(key types.NamespacedName, at time.Time, cond *metav1.Condition) {
	if l == nil {
		return
	}
	l.mu.Lock()
	cur := l.byHook[key]
	if at.After(cur.at) {
		cur.at = at
	}
	if cond != nil {
		cur.cond = cond.DeepCopy()
	}
	cur.n++
	l.byHook[key] = cur
	l.mu.Unlock()
	h := &v1.Hook{}
	h.Namespace, h.Name = key.Namespace, key.Name
	select {
	case l.hooks <- event.GenericEvent{Object: h}:
	default:
	}
}

// pending returns the look posted for key and not stored yet.
func (l *intervalLooks) pending(key types.NamespacedName) (intervalLook, bool) {
	if l == nil {
		return intervalLook{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	look, ok := l.byHook[key]
	return look, ok
}

// stored drops the look of key once the Hook's status holds it, unless a
// newer one was posted meanwhile.
func (l *intervalLooks) stored(key types.NamespacedName, look intervalLook) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.byHook[key]; ok && cur.n == look.n {
		delete(l.byHook, key)
	}
}

// forget drops the look of a Hook that is gone.
func (l *intervalLooks) forget(key types.NamespacedName) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.byHook, key)
}

// condition is the IntervalCheckpoints condition as it will be once the
// pending look is stored: the look's, else hook's.
func (l *intervalLooks) condition(hook *v1.Hook) *metav1.Condition {
	if look, ok := l.pending(client.ObjectKeyFromObject(hook)); ok && look.cond != nil {
		return look.cond
	}
	return meta.FindStatusCondition(hook.Status.Conditions, ConditionIntervalCheckpoints)
}

// reconcileCheckpoints brings into the status what the Hook's Checkpoints
// and the interval reconciler's looks say, whoever took them:
// status.checkpointSeq is raised to the highest sequence number of a
// Checkpoint the Hook owns, status.lastCheckpoint moves to the newest one
// when it is newer, and the pending look sets status.intervalCheckedAt and
// the IntervalCheckpoints condition.
func (r *HookReconciler) reconcileCheckpoints(ctx context.Context, s *hookScope) error {
	st := &s.hook.Status
	// Read only: the cache's own objects, not copies, as every reconcile
	// of every Hook lists them.
	list := &v1.CheckpointList{}
	var cps []v1.Checkpoint
	if err := r.Client.List(ctx, list, client.InNamespace(s.hook.Namespace),
		client.MatchingFields{recoveryfile.CheckpointHookNameField: s.hook.Name}, client.UnsafeDisableDeepCopy); err == nil {
		cps = list.Items
	} else if cps, err = recoveryfile.HookCheckpoints(ctx, r.Client, s.hook); err != nil { // a client with no such index
		return fmt.Errorf("listing the checkpoints of hook %s/%s: %w", s.hook.Namespace, s.hook.Name, err)
	}
	var newest *v1.Checkpoint
	for i := range cps {
		cp := &cps[i]
		if !metav1.IsControlledBy(cp, s.hook) {
			continue // an earlier Hook's of the same name
		}
		st.CheckpointSeq = max(st.CheckpointSeq, cp.Spec.Seq)
		if cp.DeletionTimestamp.IsZero() && (newest == nil || cp.Spec.Seq > newest.Spec.Seq) {
			newest = cp
		}
	}
	if last := st.LastCheckpoint; newest != nil && (last == nil || last.Seq < newest.Spec.Seq) {
		lc := &v1.LastCheckpoint{
			Name: newest.Name, Seq: newest.Spec.Seq, Time: newest.CreationTimestamp,
			Trigger: newest.Spec.Trigger, Step: newest.Spec.Step,
		}
		if g := newest.Spec.Git; g != nil {
			lc.SnapshotCommit, lc.SnapshotTree = g.SnapshotCommit, g.SnapshotTree
		}
		st.LastCheckpoint = lc
	}
	look, ok := r.looks.pending(client.ObjectKeyFromObject(s.hook))
	if !ok {
		return nil
	}
	s.look = &look
	if !look.at.IsZero() && (st.IntervalCheckedAt == nil || look.at.After(st.IntervalCheckedAt.Time)) {
		st.IntervalCheckedAt = &metav1.Time{Time: look.at}
	}
	if look.cond != nil {
		cond := *look.cond
		cond.ObservedGeneration = s.hook.Generation
		meta.SetStatusCondition(&st.Conditions, cond)
	}
	return nil
}

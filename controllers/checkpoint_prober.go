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
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/cachestore"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// refProber looks at the checkpoint refs of every workspace once each
// verify period and queues for the Checkpoint reconciler only the
// Checkpoints whose Ready condition the look contradicts. A ref lives in
// git, outside the store, and is not watched; requeueing every Checkpoint
// each period instead cost a reconcile per Checkpoint: 50,000 of them took
// 4–6 s of CPU every two minutes, in one burst, with nothing changed.
type refProber struct {
	r *CheckpointReconciler
	// cache holds the Checkpoints the reconciler reads.
	cache cache.Cache
	// queue feeds the Checkpoint controller (a channel source).
	queue chan event.GenericEvent
}

// Start probes each verify period until ctx ends. The manager starts it
// on the leader once the caches are synced.
func (p *refProber) Start(ctx context.Context) error {
	t := time.NewTicker(p.r.verifyPeriod())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := p.probe(ctx); err != nil {
				log.FromContext(ctx).Error(err, "probing checkpoint refs")
			}
		}
	}
}

// probe queues the Checkpoints whose Ready condition disagrees with a look
// at their workspace's refs, one look per workspace.
func (p *refProber) probe(ctx context.Context) error {
	cps, err := p.checkpoints(ctx)
	if err != nil {
		return err
	}
	byWorkspace := map[string][]*v1.Checkpoint{}
	for _, cp := range cps {
		if g := cp.Spec.Git; cp.DeletionTimestamp.IsZero() && g != nil && g.SnapshotRef != "" && g.SnapshotCommit != "" {
			byWorkspace[cp.Spec.Workspace] = append(byWorkspace[cp.Spec.Workspace], cp)
		}
	}
	for ws, group := range byWorkspace {
		look := p.r.refs.look(ctx, p.r.now(), p.r.refLookAge(), ws)
		for _, cp := range group {
			if !readyAgrees(cp, look) {
				select {
				case p.queue <- event.GenericEvent{Object: &v1.Checkpoint{ObjectMeta: metav1.ObjectMeta{Namespace: cp.Namespace, Name: cp.Name}}}:
				case <-ctx.Done():
					return nil
				}
			}
		}
	}
	return nil
}

// checkpoints are the cached Checkpoints, read only, from the informer's
// store itself: a list copies every object into its items, 50,000 of them
// tens of MB at each probe.
func (p *refProber) checkpoints(ctx context.Context) ([]*v1.Checkpoint, error) {
	inf, err := p.cache.GetInformer(ctx, &v1.Checkpoint{})
	if err != nil {
		return nil, err
	}
	return cachestore.Objects[*v1.Checkpoint](inf)
}

// readyAgrees tells whether cp's Ready condition holds what a reconcile
// would set from look: its status and reason (the message may say more).
// A ref that a look does not cover is never taken as agreeing.
func readyAgrees(cp *v1.Checkpoint, look *refLook) bool {
	cond := meta.FindStatusCondition(cp.Status.Conditions, v1.ConditionReady)
	if cond == nil || cp.Status.ObservedGeneration != cp.Generation {
		return false
	}
	if look.err != nil {
		return cond.Status == metav1.ConditionUnknown && cond.Reason == ReasonWorkspaceUnavailable
	}
	g := cp.Spec.Git
	if !look.refs.Covers(g.SnapshotRef) {
		return false
	}
	status, reason := readyVerdict(look.refs.Verify(g.SnapshotRef, g.SnapshotCommit))
	return cond.Status == status && cond.Reason == reason
}

// readyVerdict is the Ready condition's status and reason for what
// verifying a Checkpoint's snapshot ref returned.
func readyVerdict(err error) (metav1.ConditionStatus, string) {
	switch {
	case err == nil:
		return metav1.ConditionTrue, v1.ReasonSnapshotRecorded
	case errors.Is(err, snapshot.ErrRefMissing), errors.Is(err, snapshot.ErrRefMoved), errors.Is(err, snapshot.ErrCommitMissing):
		return metav1.ConditionFalse, v1.ReasonSnapshotMissing
	default:
		return metav1.ConditionUnknown, ReasonWorkspaceUnavailable
	}
}

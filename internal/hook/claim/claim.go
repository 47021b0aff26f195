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

// Package claim hands Hooks to Workers atomically: a claim sets
// spec.assignee only if it is empty, by compare-and-swap on the Hook's
// resourceVersion, so two claimers never both win.
package claim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/worker/supervise"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// ErrNothingClaimable reports that no Hook can be claimed.
var ErrNothingClaimable = errors.New("no claimable hook")

// maxPasses bounds how often Next re-lists after losing every race of a
// pass; each lost race means another claimer won a Hook, so the set of
// candidates shrinks.
const maxPasses = 50

// Claimable tells whether Next may pick h: unassigned, not suspended, not
// being deleted, with a status the Hook reconciler did not find at odds
// with its history (HistoryConsistent not False: an agent would only be
// told to stop), and waiting for a worker (initializing, step_pending or
// recovering).
func Claimable(h *v1.Hook) bool {
	if h.Spec.Assignee != "" || h.Spec.Suspend || !h.DeletionTimestamp.IsZero() {
		return false
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, v1.ConditionHistoryConsistent); c != nil && c.Status == metav1.ConditionFalse {
		return false
	}
	switch h.Status.State {
	case "", v1.HookInitializing, v1.HookStepPending, v1.HookRecovering:
		return true
	}
	return false
}

// rank orders the states Next prefers: interrupted work first, since it
// has progress to resume, then tasks already under way, then new ones.
func rank(s v1.HookState) int {
	switch s {
	case v1.HookRecovering:
		return 0
	case v1.HookStepPending:
		return 1
	default:
		return 2
	}
}

// Order sorts hooks in the order Next claims them: recovering, then
// step_pending, then initializing; within each, oldest creationTimestamp
// first, then by name.
func Order(hooks []v1.Hook) {
	slices.SortStableFunc(hooks, func(a, b v1.Hook) int {
		if d := rank(a.Status.State) - rank(b.Status.State); d != 0 {
			return d
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			if a.CreationTimestamp.Before(&b.CreationTimestamp) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// checkWorker makes sure the Worker exists and is alive: a Hook held by a
// name no Worker has would never be freed when its holder dies, and the
// Hook reconciler frees at once a Hook held by a dead Worker (Crashed,
// CrashLoop, Stopped, Lost) or one being deleted.
func checkWorker(ctx context.Context, c client.Client, namespace, worker string) error {
	if worker == "" {
		return errors.New("--worker: a worker name is required")
	}
	w := &v1.Worker{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: worker}, w); err != nil {
		return fmt.Errorf("--worker %s: %w", worker, err)
	}
	return Alive(w)
}

// Alive returns an error naming why w cannot take a Hook: it is being
// deleted, or its phase has no live process. A Pending Worker may claim.
func Alive(w *v1.Worker) error {
	switch {
	case !w.DeletionTimestamp.IsZero():
		return fmt.Errorf("--worker %s: the worker is being deleted", w.Name)
	case w.Status.Phase.Dead():
		return fmt.Errorf("--worker %s: the worker is %s, with no live process to work on a hook; restart it first (`tether worker restart %s`)",
			w.Name, w.Status.Phase, w.Name)
	}
	return nil
}

// One claims the Hook key for worker. A Hook already held by worker is
// returned as is; one held by another Worker gives a Conflict error, and
// a completed, failed or abandoned one an error naming its state. A write
// that loses to another change of the Hook (a reconciler's status write)
// reads the Hook again and decides again, so only another claimer's win
// is a Conflict.
func One(ctx context.Context, c client.Client, key types.NamespacedName, worker string) (*v1.Hook, error) {
	if err := checkWorker(ctx, c, key.Namespace, worker); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(FreeingWait)
	for {
		h, err := one(ctx, c, key, worker)
		if !errors.Is(err, errBeingFreed) {
			return h, err
		}
		if time.Now().After(deadline) {
			// No reconciler has freed it (none runs): the claim stands as
			// it is, as before the crash was recorded.
			return h, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(freeingPoll):
		}
	}
}

// FreeingWait bounds how long One waits for the Hook reconciler to free a
// Hook that a crash record of the claiming Worker lists (see beingFreed).
var FreeingWait = 5 * time.Second

// freeingPoll is how often One reads such a Hook again.
const freeingPoll = 10 * time.Millisecond

// errBeingFreed says that the Hook is held by the claiming Worker, but in
// the name of a process of it that died: see beingFreed.
var errBeingFreed = errors.New("the hook is being freed from a crashed process of this worker")

// beingFreed tells whether the Hook reconciler is about to free h from
// worker: the Worker has lost it by workerfsm.AssigneeLost, the rule the
// reconciler frees it by (for a live Worker: a crash record lists h at its
// present generation, CrashRecord.Held, and the Worker frees its Hooks on
// a crash). A process
// restarted after a crash that claims the Hook at once would otherwise
// find it held by its own Worker and change nothing, and the reconciler
// would then free the Hook under it; it waits for the free and claims the
// Hook anew, which changes its generation, so that the record no longer
// applies. Inside a launch of the Worker that its status does not know
// yet, the record may still be coming: see launchUnrecorded.
func beingFreed(ctx context.Context, c client.Client, h *v1.Hook, worker string) (bool, error) {
	w := &v1.Worker{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: h.Namespace, Name: worker}, w); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !workerfsm.ClearsAssignee(w) {
		return false, nil
	}
	if err := Alive(w); err != nil {
		// Died since checkWorker: a dead Worker claims nothing, and
		// waiting for the free would only claim the Hook for it again.
		return false, err
	}
	if launchUnrecorded(w, os.Getenv(supervise.LaunchTokenEnv)) {
		return true, nil
	}
	lost, _ := workerfsm.AssigneeLost(h, w)
	return lost, nil
}

// launchUnrecorded tells whether the claimer runs inside a process of w
// that w's status does not know yet: token is the launch token the Worker
// reconciler gave the process (UID.RESTARTS, inherited by the agent's own
// commands), and the status counts fewer restarts. A process restarted
// after a crash starts before its predecessor's crash record is written
// (restart before record), so a claim made at once finds the Hook still
// held in the dead process's name with no record listing it yet; it waits
// for the record, which beingFreed then reads. A claimer outside any
// launch of w (no token, another Worker's, a tmux launch) never waits.
func launchUnrecorded(w *v1.Worker, token string) bool {
	uid, n, ok := strings.Cut(token, ".")
	if !ok || uid == "" || uid != string(w.UID) {
		return false
	}
	restarts, err := strconv.ParseInt(n, 10, 32)
	return err == nil && int32(restarts) > w.Status.Restarts
}

// one is one attempt of One: errBeingFreed, with the Hook read, when it
// must wait. A write that loses to another change of the Hook reads it
// again and decides again (hookwrite.Update); a Hook held by another
// Worker is a Conflict no re-read changes.
func one(ctx context.Context, c client.Client, key types.NamespacedName, worker string) (*v1.Hook, error) {
	var read *v1.Hook
	h, err := hookwrite.Update(ctx, c, key, func(h *v1.Hook) (bool, error) {
		read = h
		switch {
		case h.Spec.Assignee == worker:
			freeing, err := beingFreed(ctx, c, h, worker)
			if err == nil && freeing {
				err = errBeingFreed
			}
			return false, err
		case h.Spec.Assignee != "":
			return false, heldBy(h)
		case h.Status.State.IsTerminal():
			return false, fmt.Errorf("hook %s is %s: there is nothing to claim", h.Name, h.Status.State)
		}
		h.Spec.Assignee = worker
		return true, nil
	})
	if errors.Is(err, errBeingFreed) {
		return read, err
	}
	return h, err
}

func heldBy(h *v1.Hook) error {
	return apierrors.NewConflict(v1.GroupVersion.WithResource("hooks").GroupResource(), h.Name,
		fmt.Errorf("it is held by worker %s", h.Spec.Assignee))
}

// Next claims the first claimable Hook in namespace, in Order, for worker.
// A Hook another claimer wins in between is skipped. It returns
// ErrNothingClaimable when no Hook is left.
func Next(ctx context.Context, c client.Client, namespace, worker string) (*v1.Hook, error) {
	if err := checkWorker(ctx, c, namespace, worker); err != nil {
		return nil, err
	}
	for range maxPasses {
		list := &v1.HookList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		candidates := slices.DeleteFunc(list.Items, func(h v1.Hook) bool { return !Claimable(&h) })
		if len(candidates) == 0 {
			return nil, ErrNothingClaimable
		}
		Order(candidates)
		for i := range candidates {
			h := &candidates[i]
			h.Spec.Assignee = worker
			err := c.Update(ctx, h)
			if err == nil {
				return h, nil
			}
			if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
	}
	return nil, fmt.Errorf("lost every race for a hook %d times in a row; try again", maxPasses)
}

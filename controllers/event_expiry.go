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
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/notify"
)

// DefaultEventTTL is how long the local store keeps an Event after its
// last occurrence, as kube-apiserver's --event-ttl.
const DefaultEventTTL = time.Hour

// eventExpiryMinInterval batches expiries: a sweep never follows the
// previous one by less.
const eventExpiryMinInterval = time.Minute

// EventExpiry deletes the Events whose last occurrence is older than TTL,
// on the local store, which has no leases: kube-apiserver expires an Event
// TTL after its last write. It lists the Events (around the cache, which
// need not hold them) when the oldest one it saw is due, so it neither
// polls nor keeps Events in memory between sweeps.
type EventExpiry struct {
	// Reader lists the Events.
	Reader client.Reader
	// Client deletes them.
	Client client.Client
	// TTL is how long an Event is kept after its last occurrence.
	TTL time.Duration
	// MinInterval is the shortest time between two sweeps; zero means a
	// minute.
	MinInterval time.Duration
	// Log reports sweeps that fail.
	Log logr.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Start sweeps until ctx ends.
func (x *EventExpiry) Start(ctx context.Context) error {
	minInterval := x.MinInterval
	if minInterval <= 0 {
		minInterval = eventExpiryMinInterval
	}
	for {
		next, err := x.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			x.Log.Error(err, "expiring Events; trying again later")
		}
		wait := max(next.Sub(x.now()), minInterval)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// NeedLeaderElection tells the Manager that only the leader sweeps.
func (x *EventExpiry) NeedLeaderElection() bool { return true }

// Sweep deletes the Events due now and returns when the next one is due
// (a TTL from now when none is left). An Event written since it was listed
// (its resourceVersion changed) is left for the next sweep.
func (x *EventExpiry) Sweep(ctx context.Context) (time.Time, error) {
	now := x.now()
	next := now.Add(x.TTL)
	list := &corev1.EventList{}
	if err := x.Reader.List(ctx, list); err != nil {
		return now, err
	}
	for i := range list.Items {
		ev := &list.Items[i]
		due := notify.Observed(ev).Time.Add(x.TTL)
		if now.Before(due) {
			if due.Before(next) {
				next = due
			}
			continue
		}
		err := x.Client.Delete(ctx, ev, client.Preconditions{ResourceVersion: &ev.ResourceVersion})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return now, err
		}
	}
	return next, nil
}

func (x *EventExpiry) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

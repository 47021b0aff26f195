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

package eventsink

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
)

// seriesFinish is how long after its last occurrence a series ends, so that
// the next isomorphic Event starts a new one; client-go's value.
const seriesFinish = 6 * time.Minute

// Retries of a write that failed for want of the server, as client-go's.
const (
	maxTries   = 12
	retryAfter = 10 * time.Second
)

// StartRecording writes the Events of b to sink until ctx ends or b is
// shut down. It replaces client-go's StartRecordingToSink, whose series
// fold every Event of one type, reason, action, reporter, regarding and
// related object into the first one, keeping its note and writing the
// count of the third and later ones only when the series ends: the Event
// of a hand edit refused for a second reason, or of a second notifier
// failing, showed the first one's. Here a repeat folds into a series only
// when its note is the same too, as Kubernetes' core/v1 event correlator
// keys repeats by their message; a new note is an Event of its own, so the
// latest message is always shown (an events.k8s.io/v1 Event's note cannot
// be changed). Every occurrence is written at once, with its count.
func StartRecording(ctx context.Context, b events.EventBroadcaster, sink events.EventSink) error {
	return startRecording(ctx, b, sink, nil)
}

// startRecording is StartRecording calling written, when not nil, after
// each Event has been handled.
func startRecording(ctx context.Context, b events.EventBroadcaster, sink events.EventSink, written func()) error {
	c := newCorrelator(sink)
	_, err := b.StartEventWatcher(func(obj runtime.Object) {
		if ev, ok := obj.(*eventsv1.Event); ok {
			c.record(ctx, ev)
		}
		if written != nil {
			written()
		}
	})
	return err
}

// correlator folds isomorphic Events into series and writes them.
type correlator struct {
	sink events.EventSink
	now  func() time.Time
	// sleep waits between retries; false when ctx ended first.
	sleep func(ctx context.Context, d time.Duration) bool

	mu        sync.Mutex
	series    map[eventKey]*series
	lastPrune time.Time
}

// eventKey is what makes two Events one series: client-go's getKey, and
// the note.
type eventKey struct {
	eventType, action, reason, reportingController, reportingInstance, note string
	regarding, related                                                      corev1.ObjectReference
}

// series is the stored Event of a key and its occurrences.
type series struct {
	event *eventsv1.Event
	count int32
	last  time.Time
}

func newCorrelator(sink events.EventSink) *correlator {
	return &correlator{sink: sink, now: time.Now, sleep: sleepCtx, series: map[eventKey]*series{}}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(wait.Jitter(d, 0.25))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func keyOf(ev *eventsv1.Event) eventKey {
	k := eventKey{eventType: ev.Type, action: ev.Action, reason: ev.Reason, note: ev.Note,
		reportingController: ev.ReportingController, reportingInstance: ev.ReportingInstance, regarding: ev.Regarding}
	if ev.Related != nil {
		k.related = *ev.Related
	}
	return k
}

// record writes ev: a new Event, or the next occurrence of its series.
func (c *correlator) record(ctx context.Context, ev *eventsv1.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.prune(now)
	key := keyOf(ev)
	if s, ok := c.series[key]; ok && now.Sub(s.last) < seriesFinish {
		stored, err := c.write(ctx, func() (*eventsv1.Event, error) {
			return c.sink.Patch(ctx, s.event, occurrencePatch(s.count+1, now))
		})
		if err == nil {
			s.count++
			s.last = now
			s.event = stored
			return
		}
		if !apierrors.IsNotFound(err) {
			return
		}
		// The Event was deleted: this occurrence starts a new one.
	}
	ev = ev.DeepCopy()
	ev.ResourceVersion = ""
	stored, err := c.write(ctx, func() (*eventsv1.Event, error) { return c.sink.Create(ctx, ev) })
	if err != nil {
		delete(c.series, key)
		return
	}
	c.series[key] = &series{event: stored, count: 1, last: now}
}

// write runs do, retrying while the failure is not one the server gave
// (a status error is final, as client-go judges), up to maxTries.
func (c *correlator) write(ctx context.Context, do func() (*eventsv1.Event, error)) (*eventsv1.Event, error) {
	for try := 1; ; try++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		stored, err := do()
		var status apierrors.APIStatus
		if err == nil || errors.As(err, &status) || try == maxTries || !c.sleep(ctx, retryAfter) {
			if err != nil && !apierrors.IsNotFound(err) {
				klog.FromContext(ctx).Error(err, "Unable to write event (will not retry)")
			}
			return stored, err
		}
	}
}

// prune forgets the series that have ended, at most once a minute.
func (c *correlator) prune(now time.Time) {
	if now.Sub(c.lastPrune) < time.Minute {
		return
	}
	c.lastPrune = now
	for k, s := range c.series {
		if now.Sub(s.last) >= seriesFinish {
			delete(c.series, k)
		}
	}
}

// occurrencePatch is the strategic merge patch of an events.k8s.io/v1 Event
// for its count-th occurrence, observed at t.
func occurrencePatch(count int32, t time.Time) []byte {
	data, _ := json.Marshal(struct {
		Series eventsv1.EventSeries `json:"series"`
	}{eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(t)}})
	return data
}

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

package controllers_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/controllers"
)

// TestEventExpiry: on the local store, an Event is deleted TTL after its
// last occurrence (its series' last observation when it has one), at the
// due time rather than by polling, and an Event that occurred again is kept.
func TestEventExpiry(t *testing.T) {
	e := newStore(t)
	ctx := context.Background()
	const ttl = 2 * time.Second
	now := time.Now()
	event := func(name string, last time.Time, series *time.Time) *corev1.Event {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: "Hook", Namespace: "default", Name: "h"},
			Reason:         "Test", Message: name, Type: corev1.EventTypeNormal,
			FirstTimestamp: metav1.NewTime(last.Add(-time.Hour)), LastTimestamp: metav1.NewTime(last), Count: 1,
		}
		if series != nil {
			ev.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(*series)}
		}
		if err := e.c.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	// Event timestamps keep whole seconds.
	recent := now.Truncate(time.Second)
	old := event("old", now.Add(-3*ttl), nil)
	seriesGoesOn := event("series-goes-on", now.Add(-3*ttl), &recent)
	fresh := event("fresh", recent, nil)

	x := &controllers.EventExpiry{Reader: e.c, Client: e.c, TTL: ttl, MinInterval: 50 * time.Millisecond, Log: testr.New(t)}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.Start(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	exists := func(ev *corev1.Event) bool {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(ev), &corev1.Event{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	eventually(t, "the expired Event deleted", 2*time.Second, func() bool { return !exists(old) })
	if !exists(seriesGoesOn) || !exists(fresh) {
		t.Fatalf("Events within their TTL deleted: series %t, fresh %t", exists(seriesGoesOn), exists(fresh))
	}
	time.Sleep(time.Until(recent.Add(ttl)) - 300*time.Millisecond)
	if !exists(fresh) {
		t.Fatal("an Event deleted before its TTL")
	}
	eventually(t, "the Events deleted at their due time", 2*time.Second, func() bool { return !exists(fresh) && !exists(seriesGoesOn) })
	if late := time.Since(recent.Add(ttl)); late > time.Second {
		t.Errorf("deleted %s after the due time", late)
	}
}

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

package hookwrite

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// ReasonStatusRebuilt reports that RebuildStatus rebuilt a Hook's status
// from its history.
const ReasonStatusRebuilt = "StatusRebuilt"

// maxEventNote is the API's bound on an Event's note (events.k8s.io/v1).
const maxEventNote = 1024

// RebuildStatus reads the Hook key with c and rebuilds its status from its
// history (hookfsm.Rebuild), writing it like every other status change,
// with retry on conflict. The history is kept as it is; the Warning Event
// it records names the actor and every field with the value it had, so
// what the status said is not lost. It also sets the HistoryConsistent
// condition, which the status now earns, so that listings show the repair
// before the next reconcile.
//
// A status that agrees with its history is left as it is, with no Event,
// and no disagreements are returned: RebuildStatus is idempotent. A damaged
// history is refused with hookfsm's *HistoryError, writing nothing.
func RebuildStatus(ctx context.Context, c client.Client, key client.ObjectKey, opts Options) (*v1.Hook, []hookfsm.Disagreement, error) {
	var ds []hookfsm.Disagreement
	hook, err := readModifyWrite(ctx, c, key, func(h *v1.Hook) (bool, error) {
		st, found, err := hookfsm.Rebuild(h)
		ds = found
		if err != nil || len(found) == 0 {
			return false, err
		}
		h.Status = *st
		meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{
			Type: v1.ConditionHistoryConsistent, Status: metav1.ConditionTrue, Reason: v1.ReasonHistoryMatches,
			Message:            "rebuilt from the history by " + actorOr(opts.Actor),
			ObservedGeneration: h.Generation, LastTransitionTime: metav1.NewTime(opts.now()),
		})
		return true, nil
	}, statusWrite)
	if err != nil {
		return nil, nil, err
	}
	if len(ds) > 0 && opts.Recorder != nil {
		opts.Recorder.Eventf(hook, nil, corev1.EventTypeNormal, ReasonStatusRebuilt, "RebuildStatus", "%s", RebuildNote(hook, ds, opts.Actor))
	}
	return hook, ds, nil
}

// RebuildNote is the Event note of a rebuild by actor that corrected ds
// on hook: every field with the value it had, then where the Hook stands
// now; within the API's bound on a note.
func RebuildNote(hook *v1.Hook, ds []hookfsm.Disagreement, actor string) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s was %s, now %s", d.Field, d.Recorded, d.Replayed)
	}
	note := fmt.Sprintf("status rebuilt from the history by %s: %s; now %s", actorOr(actor), strings.Join(parts, "; "), hookfsm.Describe(hook))
	if len(note) > maxEventNote {
		note = strings.ToValidUTF8(note[:maxEventNote-3], "") + "..."
	}
	return note
}

func actorOr(a string) string {
	if a == "" {
		return "an unnamed actor"
	}
	return a
}

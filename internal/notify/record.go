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

package notify

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Annotation holds, on each Event the notify reconciler handled, the JSON
// of a Record: what each notifier did about it. It is the only memory of
// what was notified, so a restart of `tether run` never notifies an Event
// twice.
const Annotation = "agents.tether.dev/notified"

// Outcome is what a notifier did about one observation of an Event.
type Outcome string

// The outcomes.
const (
	// Sent means the notifier was started for the observation.
	Sent Outcome = "sent"
	// Throttled means it was not: it had run for the same object and
	// reason less than its minimum interval before.
	Throttled Outcome = "throttled"
)

// Entry is what one notifier did about an Event.
type Entry struct {
	// Count is the Event's observation count handled; a later observation
	// of the same Event (a higher series count) is handled anew.
	Count int32 `json:"count"`
	// Time is when that observation happened.
	Time time.Time `json:"time"`
	// Outcome is what was done.
	Outcome Outcome `json:"outcome"`
	// SentAt is the time of the latest observation of this Event the
	// notifier ran for; a throttled observation keeps the earlier one.
	SentAt *time.Time `json:"sentAt,omitempty"`
}

// Record maps notifier names to what each did about an Event.
type Record map[string]Entry

// RecordOf reads ev's record; an Event never handled has an empty one. A
// record that does not parse, which only a hand edit makes, is an error:
// the caller leaves such an Event alone rather than notify it again.
func RecordOf(ev *corev1.Event) (Record, error) {
	raw, ok := ev.Annotations[Annotation]
	if !ok {
		return Record{}, nil
	}
	r := Record{}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("event %s/%s: annotation %s: %w", ev.Namespace, ev.Name, Annotation, err)
	}
	return r, nil
}

// Handled tells whether notifier name has handled observation o.
func (r Record) Handled(name string, o Observation) bool {
	e, ok := r[name]
	return ok && e.Count >= o.Count
}

// LastSent is when notifier name last ran for this Event, if it did.
func (r Record) LastSent(name string) (time.Time, bool) {
	e, ok := r[name]
	if !ok || e.SentAt == nil {
		return time.Time{}, false
	}
	return *e.SentAt, true
}

// Handle records that notifier name handled observation o with outcome.
func (r Record) Handle(name string, o Observation, outcome Outcome) {
	e := Entry{Count: o.Count, Time: o.Time.UTC(), Outcome: outcome, SentAt: r[name].SentAt}
	if outcome == Sent {
		t := e.Time
		e.SentAt = &t
	}
	r[name] = e
}

// Set stores r on ev's annotations.
func (r Record) Set(ev *corev1.Event) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if ev.Annotations == nil {
		ev.Annotations = map[string]string{}
	}
	ev.Annotations[Annotation] = string(data)
	return nil
}

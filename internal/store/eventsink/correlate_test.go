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
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCorrelator feeds occurrences of one Event to the correlator and
// checks the stored Events: one per note, counting its occurrences, and a
// new one once a series has ended or its Event was deleted.
func TestCorrelator(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type occurrence struct {
		note string
		// at is when the correlator sees it.
		at time.Duration
		// deleteFirst deletes the stored Events before it.
		deleteFirst bool
	}
	tests := []struct {
		name string
		occ  []occurrence
		want []string // message and count of each Event, sorted
	}{
		{name: "three notes", occ: []occurrence{{"a", 0, false}, {"b", 1, false}, {"c", 2, false}}, want: []string{"a 1", "b 1", "c 1"}},
		{name: "a repeat", occ: []occurrence{{"a", 0, false}, {"a", time.Second, false}, {"a", 2 * time.Second, false}}, want: []string{"a 3"}},
		{name: "after the series ended", occ: []occurrence{{"a", 0, false}, {"a", seriesFinish + time.Second, false}}, want: []string{"a 1", "a 1"}},
		{name: "after the Event was deleted", occ: []occurrence{{"a", 0, false}, {"a", time.Second, false}, {"a", 2 * time.Second, true}}, want: []string{"a 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t, newScheme(t))
			c := newCorrelator(NewEventsSink(store))
			var now time.Time
			c.now = func() time.Time { return now }
			for i, o := range tt.occ {
				if o.deleteFirst {
					for _, ev := range listEvents(t, store) {
						if err := store.Delete(context.Background(), &ev); err != nil {
							t.Fatal(err)
						}
					}
				}
				now = base.Add(o.at)
				ev := sampleEvent()
				ev.Name += string(rune('a' + i))
				ev.Note = o.note
				ev.EventTime = metav1.NewMicroTime(now)
				c.record(context.Background(), ev)
			}
			var got []string
			for _, ev := range listEvents(t, store) {
				n := int32(1)
				if ev.Series != nil {
					n = ev.Series.Count
				}
				got = append(got, fmt.Sprintf("%s %d", ev.Message, n))
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Events %v, want %v", got, tt.want)
			}
		})
	}
}

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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCorrelator feeds occurrences of one Event to the correlator in the
// order the broadcaster might deliver them, and checks the stored Event:
// the note of the occurrence recorded last, every occurrence counted, and
// a new Event once the series has ended.
func TestCorrelator(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type occurrence struct {
		note string
		// at is when it was recorded, in milliseconds; arrival is when
		// the correlator sees it.
		at, arrival time.Duration
	}
	tests := []struct {
		name      string
		occ       []occurrence
		wantNote  string
		wantCount int32
		wantN     int
	}{
		{name: "in order", occ: []occurrence{{"a", 0, 0}, {"b", 1, 1}, {"c", 2, 2}}, wantNote: "c", wantCount: 3, wantN: 1},
		{name: "the latest arrives first", occ: []occurrence{{"a", 0, 0}, {"c", 2, 1}, {"b", 1, 2}}, wantNote: "c", wantCount: 3, wantN: 1},
		{name: "the first arrives last", occ: []occurrence{{"b", 1, 0}, {"a", 0, 1}}, wantNote: "b", wantCount: 2, wantN: 1},
		{name: "after the series ended", occ: []occurrence{{"a", 0, 0}, {"b", 1, seriesFinish + time.Second}}, wantNote: "b", wantCount: 1, wantN: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t, newScheme(t))
			c := newCorrelator(NewEventsSink(store))
			var now time.Time
			c.now = func() time.Time { return now }
			for i, o := range tt.occ {
				now = base.Add(o.arrival)
				ev := sampleEvent()
				ev.Name += string(rune('a' + i))
				ev.Note = o.note
				ev.EventTime = metav1.NewMicroTime(base.Add(o.at * time.Millisecond))
				c.record(context.Background(), ev)
			}
			evs := listEvents(t, store)
			if len(evs) != tt.wantN {
				t.Fatalf("%d Events, want %d:%s", len(evs), tt.wantN, describe(evs))
			}
			var latest = evs[0]
			for _, e := range evs {
				if e.EventTime.After(latest.EventTime.Time) {
					latest = e
				}
			}
			count := int32(1)
			if latest.Series != nil {
				count = latest.Series.Count
			}
			if latest.Message != tt.wantNote || count != tt.wantCount {
				t.Errorf("the Event holds %q, %d occurrences; want %q, %d:%s", latest.Message, count, tt.wantNote, tt.wantCount, describe(evs))
			}
		})
	}
}

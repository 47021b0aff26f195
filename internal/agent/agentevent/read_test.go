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

package agentevent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/agentevent"
)

// fakeAdapter decodes "start" and "stop"; refiningAdapter also marks
// the event refined.
type fakeAdapter struct{}

func (fakeAdapter) Decode(data []byte, _ func(string) string) (agentevent.Event, error) {
	switch string(data) {
	case "start":
		return agentevent.Event{Kind: agentevent.SessionStart}, nil
	case "stop":
		return agentevent.Event{Kind: agentevent.TurnEnd}, nil
	}
	return agentevent.Event{}, errors.New("not an event: " + string(data))
}

func (fakeAdapter) Render(agentevent.Event, agentevent.Answer) agentevent.Output {
	return agentevent.Output{}
}

type refiningAdapter struct{ fakeAdapter }

func (refiningAdapter) Refine(ev *agentevent.Event, _ func(string) string) { ev.SessionID = "refined" }

func TestRead(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		adapter agentevent.Adapter
		want    agentevent.Event
		wantErr string
	}{
		{name: "decoded", in: "start", adapter: fakeAdapter{}, want: agentevent.Event{Kind: agentevent.SessionStart}},
		{name: "refined", in: "stop", adapter: refiningAdapter{}, want: agentevent.Event{Kind: agentevent.TurnEnd, SessionID: "refined"}},
		{name: "not an event", in: "what", adapter: refiningAdapter{}, wantErr: "not an event: what"},
		{name: "too large", in: strings.Repeat("x", agentevent.MaxEventSize+1), adapter: fakeAdapter{}, wantErr: "event: larger than 33554432 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, ev, err := agentevent.Read(strings.NewReader(tc.in), tc.adapter, func(string) string { return "" })
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Read error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tc.in || ev.Kind != tc.want.Kind || ev.SessionID != tc.want.SessionID {
				t.Errorf("Read = %q, %+v; want %q, %+v", raw, ev, tc.in, tc.want)
			}
		})
	}
}

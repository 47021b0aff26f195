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

package agentevent

import (
	"fmt"
	"io"
)

// Read reads one event of a's agent from in: at most MaxEventSize bytes,
// decoded by a, then refined when a is a Refiner. It returns the bytes
// read too, for a caller that hands the event on to another process.
func Read(in io.Reader, a Adapter, getenv func(string) string) ([]byte, Event, error) {
	raw, err := io.ReadAll(io.LimitReader(in, MaxEventSize+1))
	if err != nil {
		return nil, Event{}, fmt.Errorf("reading the event: %w", err)
	}
	if len(raw) > MaxEventSize {
		return nil, Event{}, fmt.Errorf("event: larger than %d bytes", MaxEventSize)
	}
	ev, err := a.Decode(raw, getenv)
	if err != nil {
		return nil, Event{}, err
	}
	if r, ok := a.(Refiner); ok {
		r.Refine(&ev, getenv)
	}
	return raw, ev, nil
}

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

package hookfsm

import (
	"errors"
	"fmt"
	"strings"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// ErrRejected is what every rejection by the state machine is (errors.Is):
// a *TransitionError or an *InvalidError. Apply is a pure function, so the
// same event on the same Hook is rejected again however often it is
// retried; only a change of the Hook can change the answer. A reconciler
// records such an error (a condition, an Event) and stops, instead of
// returning it to be retried.
var ErrRejected = errors.New("rejected by the hook state machine")

// TransitionError says that an event is not valid in a Hook's current state.
type TransitionError struct {
	// Hook is the Hook's name.
	Hook string
	// Event is the rejected event.
	Event Event
	// State is the Hook's state.
	State v1.HookState
	// Expected lists the states the event is valid in.
	Expected []v1.HookState
}

// Error names the verb, the Hook, its state and the states the verb needs.
func (e *TransitionError) Error() string {
	prefix := fmt.Sprintf("cannot %q hook %q: state is %s", e.Event.Verb(), e.Hook, e.State)
	if e.State.IsTerminal() {
		return prefix + ", which is terminal"
	}
	names := make([]string, len(e.Expected))
	for i, s := range e.Expected {
		names[i] = string(s)
	}
	expected := names[len(names)-1]
	if len(names) > 1 {
		expected = strings.Join(names[:len(names)-1], ", ") + " or " + expected
	}
	return prefix + ", expected " + expected
}

// Is makes errors.Is(err, ErrRejected) true.
func (e *TransitionError) Is(target error) bool { return target == ErrRejected }

// InvalidError says that the input of a transition, or the Hook it applies
// to, is invalid. Field names the offending field.
type InvalidError struct {
	// Hook is the Hook's name.
	Hook string
	// Field is the path of the invalid field, such as "message" for the
	// input's or "status.currentStep.index" for the Hook's.
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error names the Hook and the field.
func (e *InvalidError) Error() string {
	return fmt.Sprintf("hook %q: %s: %s", e.Hook, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrRejected) true.
func (e *InvalidError) Is(target error) bool { return target == ErrRejected }

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

package filestore

import (
	"time"
)

// Observer receives measurements of a Store's work, for metrics. Its
// methods are called on the caller's goroutine and must not block.
type Observer interface {
	// Wrote reports that a write (create, update, patch or delete; status
	// included) returned after d, successful or not.
	Wrote(verb string, d time.Duration)
	// HandEdit reports a hand edit adopted or, when adopted is false,
	// refused by the hand-edit watcher (once per distinct refusal).
	HandEdit(adopted bool)
}

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
	"errors"
	"io/fs"
	"os"
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

func (s *Store) observeWrite(verb string, start time.Time) {
	if s.observer != nil {
		s.observer.Wrote(verb, time.Since(start))
	}
}

func (s *Store) observeHandEdit(adopted bool) {
	if s.observer != nil {
		s.observer.HandEdit(adopted)
	}
}

// JournalSize returns the size in bytes of the store's journal file, which
// every process writing to the store appends to. A store nothing has been
// written to yet has no journal, which is an empty one.
func (s *Store) JournalSize() (int64, error) {
	fi, err := os.Stat(s.journal.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

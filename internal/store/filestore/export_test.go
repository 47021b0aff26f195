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

import "time"

// AwaitRemovals waits for the background removals of replaced files, so
// that a benchmark can keep them out of what it measures next.
func (s *Store) AwaitRemovals() { s.removals.Wait() }

// LockedAdoptions counts the adoption checks made under the write lock.
func (s *Store) LockedAdoptions() uint64 { return s.lockedAdoptions.Load() }

// ObjectReads counts the object files read by large lists and the
// hand-edit watcher.
func (s *Store) ObjectReads() uint64 { return s.objectReads.Load() }

// SetStampSettle sets how long ago a file must have changed to be stamped.
// Call it before the store is used.
func (s *Store) SetStampSettle(d time.Duration) { s.stampSettle = d }

// OwnersStats counts the owner index's loads from disk and its rebuilds
// from the whole journal.
func (s *Store) OwnersStats() (loads, rebuilds int64) { return s.owners.ownersStats() }

// CollectingByIndex tells whether the garbage collector would find the
// dependents of uid in namespace through the owner index (not by listing),
// and how many it names.
func (s *Store) CollectingByIndex(uid, namespace string) (int, bool) {
	deps, ok := s.owners.dependentsOf(uid, namespace)
	return len(deps), ok
}

// ListDependents makes the garbage collector list every kind for an
// owner's dependents, as it did before the owner index, so that a
// benchmark can time both in one run.
func (s *Store) ListDependents() { s.listDependents = true }

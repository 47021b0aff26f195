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

// Package filestore is tether's embedded backend: a directory of YAML files,
// one per object, that behaves like a Kubernetes API server for the custom
// resources of agents.tether.dev and for core Events. It implements
// controller-runtime's client.WithWatch, so the same reconcilers run on it
// and on a cluster.
//
// Layout of a store directory (see docs/store.md):
//
//	.lock                          flock: exclusive for writers, shared for consistent lists
//	journal                        append-only log of committed mutations (resourceVersion source, watch resume)
//	<plural>/<namespace>/<name>.yaml   the objects, tool-owned, with a checksum header
//
// # Layers
//
// The store is built of collaborators, each owning one concern and each
// embedding the one below it, so that a method can call only its own
// layer and the layers beneath: the layout (paths, keys, no-follow opens,
// the lock file's flock), the journal (append, queries such as the last
// valid version, the void and resourceVersion marks), the object files
// (header, read, decode, the reads of one object and of a list, the file
// stamps and the owner index), commit (the write lock, roll-forward, a
// commit alone and group commit), hand-edit adoption, and on top the
// Store (API semantics, the garbage collector, the client, watches, the
// hand-edit watcher, inspection). Nothing below calls adoption back: a
// read returns a file holding a hand edit as such, and the reader asks
// for its adoption as a step of its own (Store.settled, Client.Get).
//
// The package's files run the same way. Bottom up, a file references only
// identifiers defined in the files before it in this list, never in one
// after it (TestFilesCallOnlyDownward checks every non-test file):
//
//	base      observe.go quarantine.go parallel.go project.go
//	layout    layout.go
//	journal   journal.go journalnotify.go
//	objfile   objfile.go decode.go stamps.go listread.go owners.go
//	commit    commit.go groupcommit.go
//	adoption  handedit.go
//	store     store.go ops.go client.go watch.go handwatch.go inspect.go
package filestore

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

// Package notify tells people what happened to their agents: it describes
// an Event about a Worker or a Hook as one JSON document (Payload), keeps
// the per-Event record of which notifiers ran (Record, an annotation on
// the Event), and runs notifier commands on a bounded pool of goroutines
// (Runner) so that a slow or failing command never holds up a reconciler.
// The notify reconciler in controllers/ decides what to notify.
package notify

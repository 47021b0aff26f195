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

// Package optimistic retries a read-modify-write of one object that lost
// to a concurrent write of it (a Conflict), for as long as contention on a
// busy object lasts.
package optimistic

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// Backoff is how a read-modify-write that lost to a concurrent write tries
// again: up to 30 times, first after 5 ms, each wait a fifth longer than the
// last and drawn at random up to twice as long, so that writers that lost
// together do not meet again; all 30 wait at most about 12 s. client-go's
// retry.DefaultRetry, 5 tries 10 ms apart, ran out under load with six
// agents checkpointing one Hook at once, each writing it twice.
var Backoff = wait.Backoff{Steps: 30, Duration: 5 * time.Millisecond, Factor: 1.2, Jitter: 1.0}

// RetryOnConflict runs fn until it returns anything but a Conflict, or
// Backoff runs out; it returns fn's last error.
func RetryOnConflict(fn func() error) error {
	return retry.RetryOnConflict(Backoff, fn)
}

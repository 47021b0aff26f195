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

package workerfsm

import (
	"strconv"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// PodName is the name of the Worker's Pod started after restarts restarts:
// a retried start gets the same name, so it never runs two, and tether logs
// -p finds the Pod before the current one by it.
func PodName(w *v1.Worker, restarts int32) string {
	return w.Name + "-" + strconv.FormatInt(int64(restarts), 10)
}

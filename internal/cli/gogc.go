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

package cli

import (
	"os"
	"runtime/debug"
)

// readVerbGCPercent is the GOGC of the read verbs. A get of 10,000 objects
// allocates mostly what it prints and exits; collecting less often saves a
// quarter of its CPU for some more peak memory.
const readVerbGCPercent = 400

// tuneGCForReading sets readVerbGCPercent unless the user set GOGC.
func tuneGCForReading() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(readVerbGCPercent)
	}
}

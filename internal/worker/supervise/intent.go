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

package supervise

import (
	"os"
	"slices"

	"github.com/prometheus/procfs"
)

// LaunchTokenEnv names the environment variable that carries a launch's
// token (LaunchSpec.Token) into the launched process, where FindLaunched
// reads it back from /proc/PID/environ.
const LaunchTokenEnv = "TETHER_LAUNCH_TOKEN"

// FindLaunched returns the oldest running process that Launch started
// with token: a session leader (as Launch makes every process it starts)
// whose environment holds the token. A launcher that died between starting
// a process and recording it finds that process again by it, rather than
// starting a second one. The process's descendants inherit the token, but
// are younger, and are session leaders only if they called setsid.
func FindLaunched(token string) (Identity, bool) {
	if token == "" {
		return Identity{}, false
	}
	procs, err := procfs.AllProcs()
	if err != nil {
		return Identity{}, false
	}
	marker := LaunchTokenEnv + "=" + token
	self := os.Getpid()
	var found Identity
	for _, p := range procs {
		if p.PID == self {
			continue
		}
		env, err := p.Environ()
		if err != nil || !slices.Contains(env, marker) {
			continue
		}
		st, err := p.Stat()
		if err != nil || st.Session != p.PID {
			continue
		}
		id, err := Identify(p.PID)
		if err != nil {
			continue
		}
		if found.PID == 0 || id.StartTicks < found.StartTicks {
			found = id
		}
	}
	return found, found.PID != 0
}

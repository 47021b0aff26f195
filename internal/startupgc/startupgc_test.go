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

package startupgc

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestStartupThenDefault(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment")
	}
	if got := debug.SetGCPercent(StartupGCPercent); got != StartupGCPercent {
		t.Errorf("GOGC after init = %d, want %d", got, StartupGCPercent)
	}
	End()
	if got := debug.SetGCPercent(defaultGCPercent); got != defaultGCPercent {
		t.Errorf("GOGC after End = %d, want %d", got, defaultGCPercent)
	}
}

func TestUserGOGCIsLeftAlone(t *testing.T) {
	defer func(set bool) { userSet = set }(userSet)
	userSet = true
	defer debug.SetGCPercent(debug.SetGCPercent(250))
	End()
	if got := debug.SetGCPercent(250); got != 250 {
		t.Errorf("GOGC after End with GOGC set = %d, want 250", got)
	}
}

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

// Package version reports the build's version, commit and Go toolchain.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version and Commit are set at link time with -ldflags -X.
var (
	// Version is the release version of the binary.
	Version = "v0.0.0-dev"
	// Commit is the git commit the binary was built from.
	Commit = ""
)

// Info describes the running binary.
type Info struct {
	// Version is the release version.
	Version string `json:"version"`
	// Commit is the git commit.
	Commit string `json:"commit"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
	// Platform is the operating system and architecture.
	Platform string `json:"platform"`
}

// Get returns the Info of the running binary. When Commit was not set at
// link time it falls back to the VCS revision the Go toolchain recorded.
func Get() Info {
	commit := Commit
	if commit == "" {
		commit = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					commit = s.Value
				}
			}
		}
	}
	return Info{
		Version:   Version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String renders the Info on one line.
func (i Info) String() string {
	return fmt.Sprintf("tether %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}

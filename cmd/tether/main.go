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

// Command tether is the single tether binary: `tether run` is the manager,
// every other verb is CLI.
package main

import (
	"os"

	"github.com/tether-dev/tether/internal/cli"
	// `step done` re-executes this binary to supervise each validation
	// command; the supervisor runs from this package's init.
	_ "github.com/tether-dev/tether/internal/hook/validation/supervisor"
	_ "github.com/tether-dev/tether/internal/notranslations"
)

func main() {
	cmd := cli.NewRootCommand()
	if err := cmd.Execute(); err != nil {
		os.Exit(cli.ReportError(os.Stderr, err))
	}
}

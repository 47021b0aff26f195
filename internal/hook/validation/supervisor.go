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

package validation

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
)

// report is what a supervisor said about its command.
type report struct {
	pid      int
	exitCode int
	exited   bool
	signaled bool
	startErr error
}

// readReport reads the supervisor's status pipe to its end; it closes
// started when the command has started, and ended when it has ended.
func readReport(r io.Reader, started, ended chan<- struct{}) report {
	var rep report
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		word, rest, _ := strings.Cut(sc.Text(), " ")
		switch word {
		case "pid":
			if rep.pid == 0 {
				close(started)
			}
			rep.pid, _ = strconv.Atoi(rest)
		case "exit":
			rep.exitCode, _ = strconv.Atoi(rest)
			rep.exited = true
			close(ended)
		case "signal":
			rep.signaled = true
			close(ended)
		case "error":
			rep.startErr = errors.New(rest)
		}
	}
	return rep
}

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
	"errors"
	"fmt"
	"io"
	"strings"

	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// ReportError writes err to w the way kubectl reports errors
// ("Error from server (NotFound): ...", "error: ...", one line per error
// of an aggregate) and returns the exit code for it.
func ReportError(w io.Writer, err error) int {
	code := ExitCode(err)
	var silent exitCodeError
	if errors.As(err, &silent) {
		return code
	}
	var msg string
	cmdutil.BehaviorOnFatal(func(m string, _ int) { msg = m })
	defer cmdutil.DefaultBehaviorOnFatal()
	cmdutil.CheckErr(err)
	if msg == "" {
		return code
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	_, _ = fmt.Fprint(w, msg)
	return code
}

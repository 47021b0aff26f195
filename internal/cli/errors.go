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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/tether-dev/tether/internal/hook/claim"
)

// Exit codes of the tether binary. Scripts rely on them; docs/cli.md lists them.
const (
	// ExitOK means success.
	ExitOK = 0
	// ExitUsage means a usage or validation error; the message names the field.
	ExitUsage = 1
	// ExitConflictOrNotFound means a conflict or a missing object, which
	// scripts need to tell apart from bad input.
	ExitConflictOrNotFound = 2
)

// ExitCode maps an error returned by a command to the process exit code.
// An aggregate of several errors (get a b, where both are missing) exits
// with ExitConflictOrNotFound only when every one of them would.
func ExitCode(err error) int {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) && len(agg.Errors()) > 0 {
		code := ExitConflictOrNotFound
		for _, e := range utilerrors.Flatten(agg).Errors() {
			if ExitCode(e) != ExitConflictOrNotFound {
				code = ExitUsage
			}
		}
		return code
	}
	var code exitCodeError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &code):
		return int(code)
	case errors.Is(err, claim.ErrNothingClaimable):
		return ExitNothingToClaim
	case apierrors.IsConflict(err), apierrors.IsNotFound(err), apierrors.IsAlreadyExists(err):
		return ExitConflictOrNotFound
	default:
		return ExitUsage
	}
}

// exitCodeError ends a command with its exit code and no message: the
// answer of an agent's hook whose protocol asks for a code of its own.
type exitCodeError int

// Error implements error.
func (e exitCodeError) Error() string { return fmt.Sprintf("exit code %d", int(e)) }

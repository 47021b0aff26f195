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
	"context"
	"fmt"
	"io"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

// liveChangesTimeout bounds the git commands that find the files changed
// since the last checkpoint.
const liveChangesTimeout = 10 * time.Second

// addCheckpoints fills opts with hook's Checkpoints and, when the Hook's
// workspace is reachable from here, the files changed since the newest one,
// from git. A failure of the latter is a warning on errOut: the file then
// shows status.recovery's list.
func addCheckpoints(ctx context.Context, b *Backend, hook *v1.Hook, opts *recoveryfile.Options, errOut io.Writer) error {
	summaries, _, err := recoveryfile.ListCheckpoints(ctx, b.Client, hook)
	if err != nil {
		return err
	}
	opts.Checkpoints = summaries
	if err := recoveryfile.LiveChanges(ctx, hook, opts, liveChangesTimeout); err != nil {
		_, _ = fmt.Fprintf(errOut, "warning: finding the files changed since checkpoint %s: %v\n", summaries[0].Name, err)
	}
	return nil
}

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

package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// RestoreRequest is what Restore brings back and how.
type RestoreRequest struct {
	// Options are the restore's: in place (default), To or Branch,
	// Paths, Force.
	Options snapshot.RestoreOptions
	// Recorder and Actor are those of the pre_restore checkpoint's Event.
	Recorder events.EventRecorder
	Actor    string
}

// RestoreOutcome is what Restore did.
type RestoreOutcome struct {
	// Checkpoint is the checkpoint restored.
	Checkpoint *v1.Checkpoint
	// PreRestore is the pre_restore checkpoint of the workspace as it was,
	// taken before a forced in-place restore; nil otherwise.
	PreRestore *v1.Checkpoint
	// Result is the restore's; nil when it failed.
	Result *snapshot.RestoreResult
}

// Get reads the Checkpoint key, refusing one without a snapshot commit.
func Get(ctx context.Context, c client.Reader, key client.ObjectKey) (*v1.Checkpoint, error) {
	cp := &v1.Checkpoint{}
	if err := c.Get(ctx, key, cp); err != nil {
		return nil, err
	}
	if cp.Spec.Git == nil || cp.Spec.Git.SnapshotCommit == "" {
		return nil, fmt.Errorf("checkpoint %q has no snapshot commit (spec.git.snapshotCommit)", key.Name)
	}
	return cp, nil
}

// Restore brings back the snapshot of the Checkpoint key (tether
// checkpoint restore) into the workspace it was taken in: its
// spec.workspace, else its Hook's, else the working directory. A forced
// in-place restore overwrites local changes, so it first takes a
// pre_restore checkpoint of the workspace, and refuses (restoring nothing)
// when that fails: a restore never loses work. The outcome is returned
// with a restore's error once the pre_restore checkpoint exists.
func Restore(ctx context.Context, c client.Client, key client.ObjectKey, req RestoreRequest) (*RestoreOutcome, error) {
	cp, err := Get(ctx, c, key)
	if err != nil {
		return nil, err
	}
	out := &RestoreOutcome{Checkpoint: cp}
	ws := cp.Spec.Workspace
	if ws == "" {
		if ws, err = hookWorkspace(ctx, c, client.ObjectKey{Namespace: key.Namespace, Name: cp.Spec.HookName}); err != nil {
			return nil, err
		}
	}
	o := req.Options
	if o.Force && o.To == "" && o.Branch == "" {
		pre, err := Take(ctx, c, client.ObjectKey{Namespace: key.Namespace, Name: cp.Spec.HookName}, Request{
			Trigger:     v1.TriggerPreRestore,
			Description: fmt.Sprintf("the workspace before tether checkpoint restore %s --force", cp.Name),
			Workspace:   ws,
			Recorder:    req.Recorder,
			Actor:       req.Actor,
		})
		if err != nil {
			return nil, fmt.Errorf("restore --force overwrites local changes, so it first takes a pre_restore checkpoint of the workspace, which failed (nothing was restored): %w", err)
		}
		out.PreRestore = pre.Checkpoint
	}
	out.Result, err = snapshot.Restore(ctx, ws, cp.Spec.Git.SnapshotCommit, o)
	return out, err
}

// hookWorkspace is the workspace of the Hook key (workspaceOf).
func hookWorkspace(ctx context.Context, c client.Reader, key client.ObjectKey) (string, error) {
	hook, err := readHook(ctx, c, key)
	if err != nil {
		return "", err
	}
	return workspaceOf(hook)
}

// readHook reads the Hook key; an error that is not the API's names it.
func readHook(ctx context.Context, c client.Reader, key client.ObjectKey) (*v1.Hook, error) {
	hook := &v1.Hook{}
	if err := c.Get(ctx, key, hook); err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil, err
		}
		return nil, fmt.Errorf("hook %q: %w", key.Name, err)
	}
	return hook, nil
}

// workspaceOf is the Hook's spec.workspace, or the working directory when
// it has none, as for validations.
func workspaceOf(hook *v1.Hook) (string, error) {
	if hook.Spec.Workspace != "" {
		return hook.Spec.Workspace, nil
	}
	return os.Getwd()
}

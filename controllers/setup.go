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

package controllers

import (
	"context"
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/metrics"
)

// Options configure every reconciler SetupAll registers. Nothing in them
// depends on the backend: the Manager provides the client, the API reader
// and the event recorders.
type Options struct {
	// Config holds the defaults spec fields override. Required.
	Config *config.Config
	// RecoveryDir is where the Hook reconciler writes recovery files; empty
	// writes none.
	RecoveryDir string
	// RecoveryFileBase, when set, is the directory status.recoveryFile and
	// the notifications' recoveryFile are relative to in the Hook's status
	// (the local store's directory).
	RecoveryFileBase string
	// Evidence verifies receipts for the recovery file; nil checks
	// everything but the signatures.
	Evidence recoveryfile.Evidence
	// CheckpointVerifyPeriod is how often a Checkpoint's git ref is checked
	// again; zero means DefaultCheckpointVerifyPeriod.
	CheckpointVerifyPeriod time.Duration
	// Worker configures the Worker reconciler.
	Worker WorkerOptions
	// EventTTL, when positive, deletes Events that long after their last
	// occurrence (EventExpiry): the local store has no TTL of its own. Zero
	// keeps them, as a cluster's API server expires them itself.
	EventTTL time.Duration
	// SkipNameValidation lets tests start several Managers in one process;
	// controller-runtime otherwise refuses a second controller named "hook".
	SkipNameValidation bool
}

// SetupAll registers every tether reconciler with mgr, and with them the
// watches and cache indexes by which one reacts to another's kind. `tether run` calls it on both backends.
func SetupAll(mgr ctrl.Manager, opts Options) error {
	if opts.Config == nil {
		return errors.New("controllers.SetupAll: Options.Config is required")
	}
	exits := newExitNotices()
	looks := newIntervalLooks()
	hooks := &HookReconciler{
		Client:           mgr.GetClient(),
		Reader:           mgr.GetAPIReader(),
		Events:           mgr.GetEventRecorder(HookControllerName),
		Config:           opts.Config,
		RecoveryDir:      opts.RecoveryDir,
		RecoveryFileBase: opts.RecoveryFileBase,
		Evidence:         opts.Evidence,
		exits:            exits,
		looks:            looks,
	}
	if err := hooks.setup(mgr, opts.SkipNameValidation); err != nil {
		return err
	}
	if err := setupWorker(mgr, opts.Worker, exits, opts.SkipNameValidation); err != nil {
		return err
	}
	if err := setupCheckpoints(mgr, opts, looks); err != nil {
		return err
	}
	if err := metrics.Setup(mgr); err != nil {
		return err
	}
	if err := SetupNotify(mgr, opts.Config, opts.RecoveryFileBase, opts.SkipNameValidation); err != nil {
		return err
	}
	if opts.EventTTL > 0 {
		expiry := &EventExpiry{Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), TTL: opts.EventTTL, Log: mgr.GetLogger().WithName("event-expiry")}
		// The first sweep lists every Event around the cache: after the
		// caches' own lists, which a restart waits for, not beside them.
		// A RunnableFunc runs on the leader only, as EventExpiry does.
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				return nil
			}
			return expiry.Start(ctx)
		})); err != nil {
			return err
		}
	}
	ret := &RetentionReconciler{
		Client: mgr.GetClient(),
		Events: mgr.GetEventRecorder(RetentionControllerName),
		Config: opts.Config,
	}
	return ret.setup(mgr, opts.SkipNameValidation)
}

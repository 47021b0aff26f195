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

	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// complete registers r with b, through quietAtShutdown. Every controller
// of this package completes its builder here (TestEveryControllerCompletesQuietly).
func complete(b *builder.Builder, r reconcile.Reconciler) error {
	return b.Complete(quietAtShutdown(r))
}

// quietAtShutdown wraps r so that a reconcile cut short by the manager's
// shutdown returns no error. Its context is then cancelled, so its reads
// and writes fail, or it acts on a cache the shutdown stopped following;
// no retry happens in this process, and the next start reconciles every
// object again. Reported as a "Reconciler error", it would be a failure
// that is not one, on every stop of tether run.
func quietAtShutdown(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil && ctx.Err() != nil {
			log.FromContext(ctx).V(1).Info("reconcile cut short by shutdown", "error", err.Error())
			return reconcile.Result{}, nil
		}
		return res, err
	})
}

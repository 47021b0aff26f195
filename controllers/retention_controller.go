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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/retention"
)

// RetentionControllerName names the retention reconciler in Events and logs.
const RetentionControllerName = "tether-retention-controller"

// RetentionReconciler deletes a terminal Hook once its per-state
// time-to-live has passed, exactly at the due time; the objects it owns
// (its Checkpoints) go with it through ownerReference cascade.
type RetentionReconciler struct {
	// Client reads Hooks and deletes them.
	Client client.Client
	// Events records the deletion.
	Events recorder.EventRecorder
	// Config supplies the TTLs the Hook's spec does not set.
	Config *config.Config
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks,verbs=list;watch;delete

// Reconcile deletes the Hook if it is due, or asks to be called again when
// it will be.
func (r *RetentionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hook := &v1.Hook{}
	if err := r.Client.Get(ctx, req.NamespacedName, hook); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !hook.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	d, terminal := retention.Decide(hook, r.Config)
	if !terminal {
		return ctrl.Result{}, nil
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	if !d.Due(now) {
		return ctrl.Result{RequeueAfter: d.DueAt.Sub(now)}, nil
	}
	// The preconditions keep a Hook that changed since the cache saw it,
	// such as one a person just edited, from being deleted on stale data.
	err := r.Client.Delete(ctx, hook,
		client.Preconditions{UID: &hook.UID, ResourceVersion: &hook.ResourceVersion},
		client.PropagationPolicy("Background"))
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone already, or changed since the cache saw it: the watch event
		// of that change brings the Hook back here.
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("deleting hook %s: %w", req.NamespacedName, err)
	}
	log.FromContext(ctx).Info("deleted terminal hook", "reason", d.Reason())
	r.Events.Eventf(hook, nil, corev1.EventTypeNormal, v1.ReasonRetentionExpired, "Delete", "deleted: %s", d.Reason())
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler for Hooks.
func (r *RetentionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.setup(mgr, false)
}

func (r *RetentionReconciler) setup(mgr ctrl.Manager, skipNameValidation bool) error {
	return complete(ctrl.NewControllerManagedBy(mgr).
		For(&v1.Hook{}).
		Named("retention").
		WithOptions(controller.Options{SkipNameValidation: &skipNameValidation}), r)
}

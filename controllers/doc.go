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

// Package controllers holds tether's reconcilers, one per concern and all
// registered by SetupAll: hook, worker, checkpoint (and the interval
// checkpoints, on a queue of their own), retention, and notify when
// notifiers are configured. They see only a Manager, so they run unchanged
// on the local file store and on a Kubernetes cluster.
//
// Each object has one writer among them, and a reconciler reacts to
// another's kind through a watch: the Hook reconciler alone writes a
// Hook's status (the interval reconciler creates Checkpoints and posts its
// looks to it, the Worker reconciler posts a process's exit to it), the
// Worker reconciler a Worker's. What they decide is a pure function of
// internal/hook/hookfsm and internal/worker/workerfsm (whose AssigneeLost
// is the one rule for a lost assignee).
package controllers

// The permissions the manager needs in cluster mode, and no more: each
// reconciler's file names what it does with the API server, and
// controller-gen renders their union into config/rbac/role.yaml. A kind a
// reconciler watches (For, Owns, Watches) needs list and watch, read from
// the cache; get is granted only where a reader goes around the cache.
// cmd/tether/rbac_acceptance_test.go runs the operator as its
// ServiceAccount and fails when a request is refused or a granted
// permission goes unused (see docs/operator.md, "RBAC").
//
// Every recorder writes events.k8s.io Events: create for the first, patch
// when the recorder folds a repeat into the Event's series.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// The console the operator serves (internal/console) reads a Hook's
// Checkpoints whole around the cache, which holds them trimmed.
// +kubebuilder:rbac:groups=agents.tether.dev,resources=checkpoints,verbs=get

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

// Package controllers holds tether's reconcilers: one per concern (hook,
// worker, checkpoint, retention). They run unchanged on the local file store
// and on a Kubernetes cluster.
package controllers

// The permissions the manager needs in cluster mode, and no more: grant a
// resource here in the commit that makes the manager use it (the Pods of
// template Workers, for example, are not run yet; the receipt key Secret is
// read by the CLI verbs with the user's credentials, not by the manager).
// controller-gen renders them into config/rbac/role.yaml.
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks;workers;checkpoints,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks/status;workers/status;checkpoints/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks/finalizers;workers/finalizers;checkpoints/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

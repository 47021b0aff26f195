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

// Package workerwrite writes a Worker's status from the Worker verbs: it
// reads the Worker, applies a change and writes the status under the
// resourceVersion it read, starting again from the read on a conflict.
// Phase changes go through workerfsm.
package workerwrite

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/optimistic"
)

// Mutate changes the Worker just read; an error refuses the change and
// writes nothing.
type Mutate func(w *v1.Worker) error

// Update reads the Worker key with c, applies mutate and writes the status,
// retrying from the read on a conflict. It returns the Worker as written.
func Update(ctx context.Context, c client.Client, key client.ObjectKey, mutate Mutate) (*v1.Worker, error) {
	var out *v1.Worker
	err := optimistic.RetryOnConflict(func() error {
		w := &v1.Worker{}
		if err := c.Get(ctx, key, w); err != nil {
			return err
		}
		if err := mutate(w); err != nil {
			return err
		}
		if err := c.Status().Update(ctx, w); err != nil {
			return err
		}
		out = w
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

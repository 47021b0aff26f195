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

package retention

import (
	"context"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
)

// Collected is a Hook Collect found due, and what became of it.
type Collected struct {
	// Hook is the Hook as listed.
	Hook *v1.Hook
	// Decision is why it is due.
	Decision Decision
	// Result is "deleted", "would be deleted (dry run)", "already gone" or
	// "not deleted: " and the error.
	Result string
	// Err is the deletion's error when it was not deleted.
	Err error
}

// Collect deletes the terminal Hooks of namespace ("" for every one) that
// are due at now under cfg (tether gc), none with dryRun. Each is deleted
// under the UID and resourceVersion it was listed with, so a Hook changed
// since is kept. It returns them sorted by namespace and name, with what
// became of each; its error is the list's.
func Collect(ctx context.Context, c client.Client, namespace string, cfg *config.Config, now time.Time, dryRun bool) ([]Collected, error) {
	var hooks v1.HookList
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, &hooks, opts...); err != nil {
		return nil, err
	}
	var due []Collected
	for i := range hooks.Items {
		h := &hooks.Items[i]
		if d, terminal := Decide(h, cfg); terminal && d.Due(now) && h.DeletionTimestamp.IsZero() {
			due = append(due, Collected{Hook: h, Decision: d})
		}
	}
	sort.Slice(due, func(i, j int) bool {
		a, b := due[i].Hook, due[j].Hook
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	for i := range due {
		h := due[i].Hook
		if dryRun {
			due[i].Result = "would be deleted (dry run)"
			continue
		}
		err := c.Delete(ctx, h, client.Preconditions{UID: &h.UID, ResourceVersion: &h.ResourceVersion}, client.PropagationPolicy("Background"))
		switch {
		case err == nil:
			due[i].Result = "deleted"
		case apierrors.IsNotFound(err):
			due[i].Result = "already gone"
		default:
			due[i].Result, due[i].Err = "not deleted: "+err.Error(), err
		}
	}
	return due, nil
}

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
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

// checkpointIndexes records the field indexers that index Checkpoints by
// their Hook: the Hook and Checkpoint reconcilers both list a Hook's
// Checkpoints through it, and an informer refuses the same index twice.
var checkpointIndexes sync.Map

// indexCheckpointsByHook indexes mgr's cached Checkpoints by spec.hookName,
// once per manager.
func indexCheckpointsByHook(mgr ctrl.Manager) error {
	indexer := mgr.GetFieldIndexer()
	once, _ := checkpointIndexes.LoadOrStore(indexer, sync.OnceValue(func() error {
		return indexer.IndexField(context.Background(), &v1.Checkpoint{}, recoveryfile.CheckpointHookNameField, recoveryfile.IndexCheckpointHookName)
	}))
	if err := once.(func() error)(); err != nil {
		return fmt.Errorf("indexing checkpoints by %s: %w", recoveryfile.CheckpointHookNameField, err)
	}
	return nil
}

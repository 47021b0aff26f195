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
	"path/filepath"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tether-dev/tether/controllers"
)

// workerComponent is the source of the Events the Worker reconciler records.
const workerComponent = "tether-worker-controller"

// setupWorkers starts the Worker reconciler on mgr. On the local store the
// launched processes log under STORE/logs and find the store through
// TETHER_STORE; on a cluster storeDir is empty and logs go to the user's
// cache directory.
func setupWorkers(mgr manager.Manager, rec events.EventRecorder, reader client.Reader, storeDir string) error {
	opts := controllers.WorkerOptions{Recorder: rec, Reader: reader}
	if storeDir != "" {
		opts.LogDir = filepath.Join(storeDir, "logs")
		opts.Env = []string{StoreEnv + "=" + storeDir}
	}
	return controllers.SetupWorker(mgr, opts)
}

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
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tether-dev/tether/internal/kinds"
	"github.com/tether-dev/tether/internal/kubectl/manifestsync"
)

// addManifests makes mgr keep the manifests in dir applied (--manifests).
// The syncer reads through mgr's API reader, not its cache, so an apply's
// three-way merge always starts from the stored object.
func addManifests(mgr manager.Manager, g *GlobalOptions, dir string, log logr.Logger) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--manifests: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--manifests: %s is not a directory", dir)
	}
	ns, err := g.Namespace()
	if err != nil {
		return err
	}
	reg, err := kinds.Load()
	if err != nil {
		return err
	}
	return mgr.Add(&manifestsync.Syncer{
		Dir:       dir,
		Client:    mgr.GetClient(),
		Reader:    mgr.GetAPIReader(),
		Mapper:    mgr.GetRESTMapper(),
		Scheme:    mgr.GetScheme(),
		Kinds:     reg.Custom(),
		Namespace: ns,
		Log:       log.WithName("manifests"),
	})
}

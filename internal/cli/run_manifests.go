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
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tether-dev/tether/internal/kinds"
	"github.com/tether-dev/tether/internal/kubectl/manifestsync"
)

// liveClient reads through the API reader, not the manager's cache, so an
// apply's three-way merge always starts from the stored object.
type liveClient struct {
	client.Client
	reader client.Reader
}

func (c liveClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

func (c liveClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reader.List(ctx, list, opts...)
}

// addManifests makes mgr keep the manifests in dir applied (--manifests),
// writing through storeClient on the local store, else through mgr's client.
func addManifests(mgr manager.Manager, storeClient client.Client, g *GlobalOptions, dir string, log logr.Logger) error {
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
	c := storeClient
	if c == nil {
		c = liveClient{Client: mgr.GetClient(), reader: mgr.GetAPIReader()}
	}
	return mgr.Add(&manifestsync.Syncer{
		Dir:       dir,
		Client:    c,
		Mapper:    mgr.GetRESTMapper(),
		Scheme:    mgr.GetScheme(),
		Kinds:     reg.Custom(),
		Namespace: ns,
		Log:       log.WithName("manifests"),
	})
}

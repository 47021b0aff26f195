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
	"regexp"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// Backend is what a CLI verb talks to: the local store or a cluster, behind
// the same controller-runtime client.
type Backend struct {
	// Client reads, writes and watches objects.
	Client client.WithWatch
	// Scheme maps Go types to kinds.
	Scheme *runtime.Scheme
	// Mapper maps kinds to resources.
	Mapper meta.RESTMapper
	// Types resolves the resource type names users type.
	Types *Types
	// CRDs are tether's CRDs, the source of printer columns and field
	// documentation in both modes.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Namespace is the namespace from -n, the kubeconfig context, or "default".
	Namespace string
	// Cluster is true when Client talks to a Kubernetes API server.
	Cluster bool
	// Location names the store directory or the cluster's server, for messages.
	Location string
	// RESTConfig is the cluster's client config; nil on the local store.
	RESTConfig *rest.Config

	close func() error

	// events is the recorder Recorder creates; Close flushes it.
	events     *flushingRecorder
	eventsErr  error
	eventsOnce sync.Once
}

// Close writes the Events recorded through Recorder and releases the
// store's files.
func (b *Backend) Close() error {
	b.flushEvents()
	if b.close == nil {
		return nil
	}
	return b.close()
}

// tableListOptions returns the list options with which the local store
// decodes only what a table of rt prints: the fields of every printer
// column of its CRD (-o wide's included), besides the metadata the
// printers read. It returns none on a cluster, for a kind without a CRD,
// or when a column's JSONPath does not start with a field path.
func (b *Backend) tableListOptions(rt ResourceType) []client.ListOption {
	if b.Cluster || rt.CRD == nil {
		return nil
	}
	v := rt.Version()
	if v == nil {
		return nil
	}
	var fields filestore.Fields
	for _, c := range v.AdditionalPrinterColumns {
		paths := columnFields(c.JSONPath)
		if len(paths) == 0 {
			return nil
		}
		fields = append(fields, paths...)
	}
	return []client.ListOption{fields}
}

// elementFilter is a JSONPath step that selects the elements of an array
// by one field and reads another, as a condition column does:
// [?(@.type=="Ready")].status.
var elementFilter = regexp.MustCompile(`^\[\?\(@\.([A-Za-z0-9_]+)\s*==\s*"[^"\\]*"\)\]\.([A-Za-z0-9_]+)$`)

// columnFields returns the fields a column's JSONPath reads, as
// filestore.Fields paths: the field path it starts with
// (status.currentStep.name), and, after an array filtered as in
// elementFilter, the two fields of its elements
// (status.conditions[].type, status.conditions[].status); the whole value
// at the field path when it goes on otherwise; none when it does not
// start with a field path.
func columnFields(jsonPath string) []string {
	rest, ok := strings.CutPrefix(jsonPath, ".")
	if !ok {
		return nil
	}
	var parts []string
	for rest != "" {
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		if name == "" || strings.ContainsAny(name, `@*$?()'"\{} `) {
			break
		}
		parts = append(parts, name)
		rest = rest[end:]
		if strings.HasPrefix(rest, "[") {
			if m := elementFilter.FindStringSubmatch(rest); m != nil {
				at := strings.Join(parts, ".") + "[]."
				return []string{at + m[1], at + m[2]}
			}
			break
		}
		rest = strings.TrimPrefix(rest, ".")
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{strings.Join(parts, ".")}
}

// Backend opens the backend the global flags select: the local store by
// default, or the cluster named by the kubeconfig loading rules with --cluster.
func (o *GlobalOptions) Backend(ctx context.Context) (*Backend, error) {
	return o.backend(ctx, false)
}

// ReadBackend is Backend for the verbs that only read (get, describe,
// recover, events): a local store that does not exist is an error naming
// its path, never created.
func (o *GlobalOptions) ReadBackend(ctx context.Context) (*Backend, error) {
	return o.backend(ctx, true)
}

// cliQPS and cliBurst bound the requests a verb sends a cluster.
const (
	cliQPS   = 50
	cliBurst = 100
)

func (o *GlobalOptions) backend(_ context.Context, mustExist bool) (*Backend, error) {
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	crds, err := crd.Load()
	if err != nil {
		return nil, err
	}
	ns, err := o.Namespace()
	if err != nil {
		return nil, err
	}
	b := &Backend{Scheme: s, CRDs: crds, Types: NewTypes(crds), Namespace: ns, Cluster: o.Cluster}
	if o.Cluster {
		cfg, err := o.KubeConfig.ToRESTConfig()
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig: %w", err)
		}
		// client-go's default limit, 5 requests a second in bursts of 10,
		// throttled `step done` (about 20 requests) by 1.2 s; the API
		// server's priority and fairness protects it from a busier client.
		cfg.QPS, cfg.Burst = cliQPS, cliBurst
		httpClient, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, err
		}
		mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
		if err != nil {
			return nil, err
		}
		c, err := client.NewWithWatch(cfg, client.Options{Scheme: s, Mapper: mapper, HTTPClient: httpClient})
		if err != nil {
			return nil, err
		}
		b.Client, b.Mapper, b.Location, b.RESTConfig = c, mapper, cfg.Host, cfg
		return b, nil
	}
	dir, err := o.StoreDir()
	if err != nil {
		return nil, err
	}
	var store *filestore.Store
	if mustExist {
		store, err = filestore.Open(dir, filestore.Options{Scheme: s, CRDs: crds, Log: logr.Discard(), MustExist: true})
	} else {
		store, err = openStore(dir, s, crds, logr.Discard())
	}
	if err != nil {
		return nil, err
	}
	b.Client, b.Mapper, b.Location, b.close = store.Client(), store.RESTMapper(), dir, store.Close
	return b, nil
}

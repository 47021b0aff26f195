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
	"errors"
	"regexp"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/eventsink"
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
	// Location names the store directory or the cluster's server, for messages.
	Location string
	// RESTConfig is the cluster's client config; nil on the local store.
	RESTConfig *rest.Config

	// The capabilities that differ between the local store and a cluster,
	// each chosen once by the site that opened the Backend (backend_site.go),
	// so that no verb asks which one it runs on.

	// keys returns where the receipt keys live (KeyManager).
	keys func() (receipts.KeyManager, error)
	// eventSink returns where the verb's Events are written (Recorder);
	// nil writes them through Client.
	eventSink func() (events.EventSink, error)
	// podLogs streams a Pod's log (tether logs of a Worker run as Pods).
	podLogs podLogSource
	// localPath resolves a path the store recorded relative to itself;
	// nil leaves it as it is.
	localPath func(string) string
	// projects is true when List decodes only the fields a
	// filestore.Fields option names (tableListOptions).
	projects bool

	close func() error

	// events is the recorder Recorder creates; Close flushes it.
	events     *eventsink.Provider
	recorder   events.EventRecorder
	eventsErr  error
	eventsOnce sync.Once
}

// KeyManager is where the receipt keys live: the Secret in the Hook's
// namespace on a cluster; on the local store, the master key file in the
// configuration's keyDir ($TETHER_HOME/keys by default).
func (b *Backend) KeyManager() (receipts.KeyManager, error) {
	if b.keys == nil {
		return nil, errors.New("this backend has no receipt keys")
	}
	return b.keys()
}

// LocalPath is path as this process can open it: a path the local store
// recorded relative to its directory (status.recoveryFile) is joined to it.
func (b *Backend) LocalPath(path string) string {
	if b.localPath == nil {
		return path
	}
	return b.localPath(path)
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
	if !b.projects || rt.CRD == nil {
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
	b := &Backend{Scheme: s, CRDs: crds, Types: NewTypes(crds), Namespace: ns}
	if err := o.site().open(o, b, mustExist); err != nil {
		return nil, err
	}
	return b, nil
}

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
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/store/eventsink"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// site is where the verbs' objects live: the local store or a cluster,
// chosen once from --cluster by GlobalOptions.site. What differs between
// the two is a method here or a capability open gives the Backend, so no
// verb asks which one it runs on.
type site interface {
	// defaultNamespace is the namespace without -n.
	defaultNamespace(o *GlobalOptions) (string, error)
	// open connects b and gives it its capabilities; with mustExist a
	// local store that does not exist is an error, never created.
	open(o *GlobalOptions, b *Backend, mustExist bool) error
	// present is nil when there is a store to talk to without creating
	// one (tether agent hook); a *noStoreError when the local one is
	// missing.
	present(o *GlobalOptions) error
	// initStore is the store tether init creates in root and whether it
	// "exists" or will be "created"; "" when there is none to create.
	initStore(o *GlobalOptions, root string) (store, state string, err error)
	// doctorStore is the store directory tether doctor checks.
	doctorStore(o *GlobalOptions) (string, error)
	// flags is how the commands tether init suggests name this site, for
	// a repository at root whose store is store.
	flags(root, store string) string
	// checkRunFlags refuses the tether run flags the site has no use for.
	checkRunFlags(fs *pflag.FlagSet) error
	// manager is the constructor of tether run's Manager.
	manager(o *runOptions) managerFactory
}

// managerFactory builds tether run's Manager and the reconcilers' options.
type managerFactory func(ctx context.Context, g *GlobalOptions, s *runtime.Scheme, cfg *config.Config, log logr.Logger) (manager.Manager, controllers.Options, error)

// site is the site the global flags select.
func (o *GlobalOptions) site() site {
	if o.Cluster {
		return clusterSite{}
	}
	return localSite{}
}

// noStoreError says there is no local store at dir.
type noStoreError struct{ dir string }

func (e *noStoreError) Error() string { return "no store at " + e.dir }

// podLogStream streams the log of a Pod's container.
type podLogStream func(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)

// podLogSource returns the stream of Pod logs, or why there is none.
type podLogSource func() (podLogStream, error)

// localSite is the file store in a directory.
type localSite struct{}

func (localSite) defaultNamespace(*GlobalOptions) (string, error) { return "default", nil }

func (localSite) open(o *GlobalOptions, b *Backend, mustExist bool) error {
	dir, err := o.StoreDir()
	if err != nil {
		return err
	}
	var store *filestore.Store
	if mustExist {
		store, err = filestore.Open(dir, filestore.Options{Scheme: b.Scheme, CRDs: b.CRDs, Log: logr.Discard(), MustExist: true})
	} else {
		store, err = openStore(dir, b.Scheme, b.CRDs, logr.Discard())
	}
	if err != nil {
		return err
	}
	b.Client, b.Mapper, b.Location, b.close = store.Client(), store.RESTMapper(), dir, store.Close
	b.projects = true
	b.localPath = func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	b.keys = func() (receipts.KeyManager, error) {
		cfg, err := config.Load(o.ConfigFile)
		if err != nil {
			return nil, err
		}
		return &receipts.FileKeyManager{Dir: cfg.KeyDir}, nil
	}
	b.eventSink = func() (events.EventSink, error) { return eventsink.NewEventsSink(b.Client), nil }
	b.podLogs = func() (podLogStream, error) { return nil, errors.New("read its log with --cluster") }
	return nil
}

func (localSite) present(o *GlobalOptions) error {
	// An agent hook never creates a store: with the hooks installed for
	// every project, that would leave a .tether in each of them.
	dir, err := o.StoreDir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return &noStoreError{dir: dir}
	}
	return nil
}

func (localSite) initStore(o *GlobalOptions, root string) (string, string, error) {
	return initStorePath(o, root)
}

func (localSite) doctorStore(o *GlobalOptions) (string, error) { return o.StoreDir() }

func (localSite) checkRunFlags(*pflag.FlagSet) error { return nil }

func (localSite) manager(o *runOptions) managerFactory { return o.localBackend }

func (localSite) flags(root, store string) string {
	if store != filepath.Join(root, StoreDirName) {
		return " --store " + store
	}
	return ""
}

// clusterSite is a Kubernetes API server found by the kubeconfig loading
// rules.
type clusterSite struct{}

// cliQPS and cliBurst bound the requests a verb sends a cluster.
const (
	cliQPS   = 50
	cliBurst = 100
)

func (clusterSite) defaultNamespace(o *GlobalOptions) (string, error) {
	ns, _, err := o.KubeConfig.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", err
	}
	if msgs := apivalidation.ValidateNamespaceName(ns, false); len(msgs) > 0 {
		return "", fmt.Errorf("the kubeconfig context's namespace %q is not a valid namespace name: %s", ns, strings.Join(msgs, "; "))
	}
	return ns, nil
}

func (clusterSite) open(o *GlobalOptions, b *Backend, _ bool) error {
	cfg, err := o.KubeConfig.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	// client-go's default limit, 5 requests a second in bursts of 10,
	// throttled `step done` (about 20 requests) by 1.2 s; the API
	// server's priority and fairness protects it from a busier client.
	cfg.QPS, cfg.Burst = cliQPS, cliBurst
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: b.Scheme, Mapper: mapper, HTTPClient: httpClient})
	if err != nil {
		return err
	}
	b.Client, b.Mapper, b.Location, b.RESTConfig = c, mapper, cfg.Host, cfg
	b.keys = func() (receipts.KeyManager, error) { return &receipts.SecretKeyManager{Client: b.Client}, nil }
	b.eventSink = func() (events.EventSink, error) {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return &events.EventSinkImpl{Interface: cs.EventsV1()}, nil
	}
	b.podLogs = clusterPodLogs(cfg)
	return nil
}

// clusterPodLogs reads Pod logs through the API server at cfg, as kubectl
// logs does.
func clusterPodLogs(cfg *rest.Config) podLogSource {
	return func() (podLogStream, error) {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
			return cs.CoreV1().Pods(namespace).GetLogs(pod, opts).Stream(ctx)
		}, nil
	}
}

func (clusterSite) present(*GlobalOptions) error { return nil }

func (clusterSite) initStore(*GlobalOptions, string) (string, string, error) { return "", "", nil }

func (clusterSite) doctorStore(*GlobalOptions) (string, error) {
	return "", errors.New("tether doctor checks a local store; it does not support --cluster")
}

func (clusterSite) flags(string, string) string { return " --cluster" }

func (clusterSite) checkRunFlags(fs *pflag.FlagSet) error {
	if fs.Changed("event-ttl") {
		return errors.New("--event-ttl: only on the local store; a cluster's API server expires Events itself (kube-apiserver --event-ttl)")
	}
	return nil
}

func (clusterSite) manager(o *runOptions) managerFactory { return o.clusterBackend }

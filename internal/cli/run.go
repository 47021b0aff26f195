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
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/eventsink"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/store/storemanager"
)

// RecoveryDirName is the directory of a local store that holds the
// recovery files, one per Hook as NAMESPACE/NAME.md.
const RecoveryDirName = "recovery"

// LeaderElectionID names the Lease that replicas of `tether run --cluster
// --leader-elect` compete for.
const LeaderElectionID = "tether.agents.tether.dev"

type runOptions struct {
	metricsAddr string
	probeAddr   string
	leaderElect bool
	manifests   string
	zap         zap.Options
}

func newRunCommand(g *GlobalOptions) *cobra.Command {
	o := &runOptions{zap: zap.Options{Development: false}}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the reconcilers on the local store or, with --cluster, on a Kubernetes cluster",
		Long: `Run the reconcilers until SIGINT or SIGTERM.

On the local store (the default) only one tether run may serve a store at a
time: a second one fails and names the PID of the first. With --cluster it
runs as an operator, with optional leader election.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := zap.New(zap.UseFlagOptions(&o.zap))
			ctrl.SetLogger(log)
			return o.run(ctrl.SetupSignalHandler(), g, log)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "address of the Prometheus metrics endpoint; 0 disables it")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", "", "address of the /healthz and /readyz endpoints; empty disables them")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "with --cluster, elect a leader so only one replica reconciles")
	fs.StringVar(&o.manifests, "manifests", "", "keep the objects in this directory's YAML files applied, as kubelet does with static manifests; the directory is only read")
	goFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.zap.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
	return cmd
}

func (o *runOptions) run(ctx context.Context, g *GlobalOptions, log logr.Logger) error {
	s, err := scheme.New()
	if err != nil {
		return err
	}
	cfg, err := config.Load(g.ConfigFile)
	if err != nil {
		return err
	}
	setup := controllers.Options{Config: cfg, RecoveryDir: cfg.RecoveryDir}
	var mgr manager.Manager
	var storeClient client.Client
	if g.Cluster {
		if mgr, err = o.clusterManager(g, s); err != nil {
			return err
		}
		if err := setupWorkers(mgr, mgr.GetEventRecorder(workerComponent), mgr.GetAPIReader(), ""); err != nil {
			return err
		}
	} else {
		dir, err := g.StoreDir()
		if err != nil {
			return err
		}
		crds, err := crd.Load()
		if err != nil {
			return err
		}
		store, err := openStore(dir, s, crds, log)
		if err != nil {
			return err
		}
		defer func() { _ = store.Close() }()
		lock, err := storemanager.AcquireRunLock(dir)
		if err != nil {
			return err
		}
		defer func() { _ = lock.Release() }()
		mgr, _, err = storemanager.New(store, storemanager.Options{Scheme: s, MetricsBindAddress: o.metricsAddr, HealthProbeBindAddress: o.probeAddr})
		if err != nil {
			return err
		}
		events := eventsink.NewProvider(store.Client(), s)
		defer events.Shutdown()
		setup.Events, setup.RecoveryDir = events, filepath.Join(dir, RecoveryDirName)
		setup.ReceiptStatus = receipts.StatusFunc(ctx, &receipts.FileKeyManager{Dir: cfg.KeyDir})
		storeEvents := events.GetEventRecorder("tether-store")
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			return store.WatchHandEdits(ctx, storeEvents)
		})); err != nil {
			return err
		}
		storeClient = store.Client()
		if err := setupWorkers(mgr, events.GetEventRecorder(workerComponent), store.Client(), dir); err != nil {
			return err
		}
		log.Info("serving the local store", "store", dir, "pid", os.Getpid())
	}
	if err := controllers.SetupAll(mgr, setup); err != nil {
		return err
	}
	if o.manifests != "" {
		if err := addManifests(mgr, storeClient, g, o.manifests, log); err != nil {
			return err
		}
	}
	if o.probeAddr != "" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("stopped")
	return nil
}

func (o *runOptions) clusterManager(g *GlobalOptions, s *runtime.Scheme) (manager.Manager, error) {
	cfg, err := g.KubeConfig.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	// Outside a cluster controller-runtime cannot guess where the Lease
	// lives; -n or the kubeconfig context's namespace says, as for kubectl.
	ns, err := g.Namespace()
	if err != nil {
		return nil, err
	}
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  s,
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: ns,
	})
}

// openStore opens the local store serving crds, the embedded CRDs.
func openStore(dir string, s *runtime.Scheme, crds []*apiextensionsv1.CustomResourceDefinition, log logr.Logger) (*filestore.Store, error) {
	return filestore.Open(dir, filestore.Options{Scheme: s, CRDs: crds, Log: log.WithName("store")})
}

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

package main_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/settlegc"
	"github.com/tether-dev/tether/internal/startupgc"
	"github.com/tether-dev/tether/internal/store/storemanager"
)

// Environment of the cache floor: the test binary, started with
// cacheFloorEnv set, runs runCacheFloor instead of its tests.
const (
	// cacheFloorEnv is "store" or "cluster".
	cacheFloorEnv = "TETHER_CACHE_FLOOR"
	// cacheFloorTarget is the store's directory, or the kubeconfig.
	cacheFloorTarget = "TETHER_CACHE_FLOOR_TARGET"
	// cacheFloorPprof is the address to serve pprof on; empty for none.
	cacheFloorPprof = "TETHER_CACHE_FLOOR_PPROF"
)

// runCacheFloor is the floor under `tether run`: a Manager built as `tether
// run` builds it on the same backend (the store's Manager; on a cluster the
// same cache options and client), holding the informers of Hooks, Workers
// and Checkpoints with the reconcilers' indexes, and nothing else: no
// reconciler, no queue. It prints "synced" once the caches have synced,
// settles its collector as `tether run` does and prints "settled", and runs
// until SIGTERM.
func runCacheFloor(backend, target, pprofAddr string) error {
	// As `tether run` does once its verb is known.
	startupgc.End()
	s, err := scheme.New()
	if err != nil {
		return err
	}
	var mgr manager.Manager
	switch backend {
	case "store":
		crds, err := crd.Load()
		if err != nil {
			return err
		}
		sm, err := storemanager.Open(target, crds, storemanager.Options{Scheme: s, PprofBindAddress: pprofAddr})
		if err != nil {
			return err
		}
		mgr = sm
	case "cluster":
		cfg, err := clientcmd.BuildConfigFromFlags("", target)
		if err != nil {
			return err
		}
		mgr, err = ctrl.NewManager(cfg, ctrl.Options{
			Scheme:           s,
			Metrics:          metricsserver.Options{BindAddress: "0"},
			PprofBindAddress: pprofAddr,
			Cache:            cache.Options{DefaultTransform: storemanager.CacheTransform()},
			NewClient:        storemanager.NewGuardedClient,
		})
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s=%q: want store or cluster", cacheFloorEnv, backend)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1.Hook{}, "spec.assignee", func(o client.Object) []string {
		if h := o.(*v1.Hook); h.Spec.Assignee != "" {
			return []string{h.Spec.Assignee}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &v1.Checkpoint{}, recoveryfile.CheckpointHookNameField, recoveryfile.IndexCheckpointHookName); err != nil {
		return err
	}
	for _, obj := range []client.Object{&v1.Hook{}, &v1.Worker{}, &v1.Checkpoint{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return err
		}
	}
	go func() {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			fmt.Printf("synced %d\n", time.Now().UnixNano())
		}
	}()
	// The collector settles as `tether run`'s does, with no queue to wait for.
	settled := funcr.New(func(_, _ string) { fmt.Printf("settled %d\n", time.Now().UnixNano()) }, funcr.Options{})
	if err := mgr.Add(&settlegc.Settler{Synced: mgr.GetCache().WaitForCacheSync, Metrics: crmetrics.Registry, Log: settled}); err != nil {
		return err
	}
	settlegc.Fill(ctx, mgr.GetCache().WaitForCacheSync, logr.Discard())
	return mgr.Start(ctx)
}

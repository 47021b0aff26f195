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
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	clientevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/console"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/lazylog"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/settlegc"
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
	metricsAddr   string
	metricsSecure bool
	enableHTTP2   bool
	probeAddr     string
	pprofAddr     string
	leaderElect   bool
	lease         leaseTiming
	recoveryDir   string
	workerLogDir  string
	privileged    []string
	apiQPS        float32
	apiBurst      int
	manifests     string
	eventTTL      time.Duration
	console       consoleFlags
	podTimeouts   podTimeouts
	zap           zap.Options
}

// podTimeouts are the Worker reconciler's waits on Pods, in cluster mode.
type podTimeouts struct {
	pending, nodeLost time.Duration
}

func (t podTimeouts) workerOptions() (controllers.WorkerOptions, error) {
	if t.pending <= 0 || t.nodeLost <= 0 {
		return controllers.WorkerOptions{}, fmt.Errorf("--pod-pending-timeout %s and --node-lost-timeout %s must be positive", t.pending, t.nodeLost)
	}
	return controllers.WorkerOptions{PodPendingTimeout: t.pending, NodeLostTimeout: t.nodeLost}, nil
}

// workerPods selects the Pods the Worker reconciler creates.
var workerPods = func() labels.Selector {
	req, err := labels.NewRequirement(controllers.WorkerLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}()

// leaseTiming is the leader election's timing, client-go's
// LeaderElectionConfig fields. The defaults are controller-runtime's: a
// SIGKILLed leader is replaced within LeaseDuration plus RetryPeriod.
type leaseTiming struct {
	duration, renewDeadline, retryPeriod time.Duration
}

func newRunCommand(g *GlobalOptions) *cobra.Command {
	// Errors in tether run's log are conditions a person reads (a busy
	// port, a failed write), not bugs: no stack trace below a panic unless
	// --zap-stacktrace-level asks for one.
	o := &runOptions{zap: zap.Options{Development: false, StacktraceLevel: zapcore.DPanicLevel}}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the reconcilers on the local store or, with --cluster, on a Kubernetes cluster",
		Long: `Run the reconcilers until SIGINT or SIGTERM.

On the local store (the default) only one tether run may serve a store at a
time: a second one fails and names the PID of the first. With --cluster it
runs as an operator, with optional leader election.

The log goes to stderr: human-readable lines on a terminal, JSON lines
otherwise; --zap-encoder=console or --zap-encoder=json chooses.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.site().checkRunFlags(cmd.Flags()); err != nil {
				return err
			}
			chooseLogEncoder(&o.zap, cmd.Flags(), stderrIsTerminal())
			// Every reconcile adds values to its logger that are almost
			// never written: zap would encode them at once.
			log := lazylog.Wrap(zap.New(zap.UseFlagOptions(&o.zap)))
			ctrl.SetLogger(log)
			return o.run(ctrl.SetupSignalHandler(), g, log)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "", "address of the Prometheus metrics endpoint, 0 to disable it (default "+metrics.DefaultLocalAddress+" on the local store, 0 with --cluster)")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "with --cluster, serve metrics over HTTPS, to clients the cluster authenticates and authorizes for /metrics")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false, "with --cluster, allow HTTP/2 on the metrics endpoint (off: HTTP/2 Rapid Reset and Stream Cancellation, CVE-2023-44487 and CVE-2023-39325)")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", "", "address of the /healthz and /readyz endpoints; empty disables them")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "address of net/http/pprof's /debug/pprof/ endpoints, for profiling; empty or 0 disables them (they serve the process's memory and command line to whoever connects: bind to 127.0.0.1)")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "with --cluster, elect a leader so only one replica reconciles; a leader stopped by SIGINT or SIGTERM releases the Lease, so a standby takes over within --leader-elect-retry-period")
	fs.DurationVar(&o.lease.duration, "leader-elect-lease-duration", 15*time.Second, "with --leader-elect, how long standbys wait before taking the Lease of a leader that stopped renewing it (one killed with SIGKILL)")
	fs.DurationVar(&o.lease.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "with --leader-elect, how long the leader keeps trying to renew before it gives up leading and exits")
	fs.DurationVar(&o.lease.retryPeriod, "leader-elect-retry-period", 2*time.Second, "with --leader-elect, how often candidates try to take or renew the Lease")
	fs.StringVar(&o.recoveryDir, "recovery-dir", "", "with --cluster, also write each Hook's recovery file under this directory (default: the configuration file's recoveryDir; unset, none: the operator writes nothing to its filesystem, and tether recover renders the file from the Hook)")
	fs.Float32Var(&o.apiQPS, "kube-api-qps", 50, "with --cluster, the requests per second the operator may send the API server (client-go's default, 5, makes a start-up over thousands of Hooks take minutes)")
	fs.IntVar(&o.apiBurst, "kube-api-burst", 100, "with --cluster, the burst above --kube-api-qps the operator may send")
	fs.StringVar(&o.workerLogDir, "worker-log-dir", "", "with --cluster, run Workers with spec.command or spec.adopt as child processes of tether run, logging under this directory (unset: they are refused with Ready=False, ProcessesUnsupported, since an operator in a Pod has no disk to write and should not run agents in its own container; use spec.template)")
	fs.StringSliceVar(&o.privileged, "allow-privileged-workers", nil, "with --cluster, the namespaces (comma-separated, or * for all) whose Workers' spec.template may ask for privileged containers, privilege escalation, capabilities beyond the baseline Pod Security Standard, host namespaces, hostPath volumes or host ports; elsewhere such a Worker gets no Pod (Ready=False, PrivilegedTemplate). The namespace's Pod Security Admission still applies")
	fs.DurationVar(&o.eventTTL, "event-ttl", controllers.DefaultEventTTL, "on the local store, delete Events this long after their last occurrence, as kube-apiserver's --event-ttl; 0 keeps them (with --cluster the API server expires them)")
	fs.StringVar(&o.manifests, "manifests", "", "keep the objects in this directory's YAML files applied, as kubelet does with static manifests; the directory is only read")
	fs.StringVar(&o.console.addr, "console-bind-address", "", "address of the read-only web console: empty serves it beside /metrics on the local store and not at all with --cluster; 0 disables it; an address gives it a listener of its own")
	fs.BoolVar(&o.console.allowRemote, "console-allow-remote", false, "serve the web console on an address off the loopback interface (it has no login: anyone who reaches it reads every Hook)")
	bindPodFlags(fs, &o.podTimeouts)
	bindLogFlags(fs, &o.zap)
	return cmd
}

func bindPodFlags(fs *pflag.FlagSet, t *podTimeouts) {
	fs.DurationVar(&t.pending, "pod-pending-timeout", controllers.DefaultPodPendingTimeout, "with --cluster, how long a Worker's Pod may stay Pending (unschedulable, pulling its image) before the Worker reports it PodStuck")
	fs.DurationVar(&t.nodeLost, "node-lost-timeout", controllers.DefaultNodeLostTimeout, "with --cluster, how long a Worker's Pod may stay not ready by its node's doing, or terminating past its grace period, before it is recorded NodeLost and replaced")
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
	// The site chooses the Manager's constructor: each returns a complete
	// Manager and what the reconcilers need of it.
	if o.eventTTL < 0 {
		return fmt.Errorf("--event-ttl: %s is negative; 0 keeps Events", o.eventTTL)
	}
	mgr, setup, err := g.site().manager(o)(ctx, g, s, cfg, log)
	if err != nil {
		return err
	}
	if c, ok := mgr.(io.Closer); ok {
		// Releases what the Manager owns if it never starts; Start does otherwise.
		defer func() { _ = c.Close() }()
	}
	if err := controllers.SetupAll(mgr, setup); err != nil {
		return err
	}
	settler := &settlegc.Settler{Synced: mgr.GetCache().WaitForCacheSync, Metrics: crmetrics.Registry, Log: log.WithName("gc")}
	if err := mgr.Add(settler); err != nil {
		return err
	}
	if o.manifests != "" {
		if err := addManifests(mgr, g, o.manifests, log); err != nil {
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
	settlegc.Fill(ctx, mgr.GetCache().WaitForCacheSync, log.WithName("gc"))
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("stopped")
	return nil
}

// localBackend builds the Manager of the local store: it holds the store's
// run lock, serves its API reader and Events from the store, and watches
// for hand edits. Recovery files and Worker logs live in the store.
func (o *runOptions) localBackend(ctx context.Context, g *GlobalOptions, s *runtime.Scheme, cfg *config.Config, log logr.Logger) (manager.Manager, controllers.Options, error) {
	dir, err := g.StoreDir()
	if err != nil {
		return nil, controllers.Options{}, err
	}
	crds, err := crd.Load()
	if err != nil {
		return nil, controllers.Options{}, err
	}
	mgr, err := storemanager.Open(dir, crds, storemanager.Options{
		Scheme: s, MetricsBindAddress: "0", HealthProbeBindAddress: o.probeAddr, PprofBindAddress: o.pprofAddr, Log: log.WithName("store"),
		StoreObserver: metrics.StoreObserver{},
	})
	if err != nil {
		return nil, controllers.Options{}, err
	}
	log.Info("serving the local store", "store", dir, "pid", os.Getpid())
	if err := o.serveLocalMetrics(mgr, cfg, log); err != nil {
		_ = mgr.Close()
		return nil, controllers.Options{}, err
	}
	return mgr, controllers.Options{
		Config:           cfg,
		RecoveryDir:      filepath.Join(dir, RecoveryDirName),
		RecoveryFileBase: dir,
		EventTTL:         o.eventTTL,
		Evidence:         metrics.CountVerificationFailures(receipts.EvidenceFunc(ctx, &receipts.FileKeyManager{Dir: cfg.KeyDir})),
		Worker: controllers.WorkerOptions{
			LogDir: filepath.Join(dir, "logs"),
			Env:    []string{config.StoreEnv + "=" + dir},
		},
	}, nil
}

// clusterBackend builds a Manager on the cluster of the kubeconfig, with
// optional leader election. It writes recovery files only when asked to,
// and verifies receipts with the keys in each namespace's Secret. It runs
// Workers as Pods, and as its own child processes only when given a
// directory for their logs.
func (o *runOptions) clusterBackend(ctx context.Context, g *GlobalOptions, s *runtime.Scheme, cfg *config.Config, log logr.Logger) (manager.Manager, controllers.Options, error) {
	worker, err := o.podTimeouts.workerOptions()
	if err != nil {
		return nil, controllers.Options{}, err
	}
	rest, err := g.KubeConfig.ToRESTConfig()
	if err != nil {
		return nil, controllers.Options{}, fmt.Errorf("loading kubeconfig: %w", err)
	}
	rest.QPS, rest.Burst = o.apiQPS, o.apiBurst
	// Outside a cluster controller-runtime cannot guess where the Lease
	// lives; -n or the kubeconfig context's namespace says, as for kubectl.
	ns, err := g.Namespace()
	if err != nil {
		return nil, controllers.Options{}, err
	}
	mgr, err := ctrl.NewManager(rest, ctrl.Options{
		Scheme:                        s,
		Metrics:                       o.clusterMetrics(),
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		// The operator watches only the Pods of Workers, not every Pod.
		Cache: clusterCache(workerPods),
		// A Secret read through the Manager's client never starts an
		// informer: the role grants get on the receipt key by name only.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		// The cache holds trimmed Checkpoints: the client refuses to write one whole.
		NewClient:     storemanager.NewGuardedClient,
		LeaseDuration: &o.lease.duration,
		RenewDeadline: &o.lease.renewDeadline,
		RetryPeriod:   &o.lease.retryPeriod,
	})
	if err != nil {
		return nil, controllers.Options{}, err
	}
	cs, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return nil, controllers.Options{}, err
	}
	events := eventsink.NewProviderForSink(&clientevents.EventSinkImpl{Interface: cs.EventsV1()}, s)
	if err := mgr.Add(eventsShutdown{events}); err != nil {
		return nil, controllers.Options{}, err
	}
	mgr = &clusterManager{Manager: mgr, events: events}
	recoveryDir := o.recoveryDir
	if recoveryDir == "" {
		recoveryDir = cfg.RecoveryDir
	}
	// Keys are read uncached, one Secret at a time: the operator needs get
	// on each namespace's receipt key Secret, never a watch of Secrets.
	worker.LogDir, worker.RefuseProcesses = o.workerLogDir, o.workerLogDir == ""
	worker.PrivilegedNamespaces = o.privileged
	keys := &receipts.SecretKeyManager{Reader: mgr.GetAPIReader(), CacheFor: time.Minute}
	if o.console.addr != "" && o.console.addr != "0" {
		if err := o.console.serve(mgr, clusterConsole(mgr, rest, cfg, keys, o.console.allowRemote, log)); err != nil {
			return nil, controllers.Options{}, err
		}
	}
	return mgr, controllers.Options{
		Config: cfg, RecoveryDir: recoveryDir, Evidence: metrics.CountVerificationFailures(receipts.EvidenceFunc(ctx, keys)),
		Worker: worker,
	}, nil
}

// serveLocalMetrics adds the metrics endpoint of the local store to mgr,
// with the store's journal size. A port that cannot be bound is logged
// loudly and `tether run` goes on without metrics: several stores may be
// served on one machine, and only the first gets the default port.
func (o *runOptions) serveLocalMetrics(mgr *storemanager.Manager, cfg *config.Config, log logr.Logger) error {
	addr := o.metricsAddr
	if addr == "" {
		addr = metrics.DefaultLocalAddress
	}
	if o.console.addr != "" && o.console.addr != "0" {
		if err := o.console.serve(mgr, localConsole(mgr, cfg, o.console.allowRemote, log)); err != nil {
			return err
		}
	}
	if addr == "0" {
		return nil
	}
	mountConsole := o.console.addr == ""
	if mountConsole {
		if err := console.CheckAddress(addr, o.console.allowRemote, "--console-allow-remote (or --console-bind-address=0)"); err != nil {
			return fmt.Errorf("--metrics-bind-address %s: %w", addr, err)
		}
	}
	srv, err := metrics.Listen(addr, log.WithName("metrics"))
	if err != nil {
		log.Error(err, "NOT SERVING METRICS: the metrics address is unavailable; reconciling goes on without metrics. "+
			"Choose another with --metrics-bind-address (127.0.0.1:0 picks a free port), or 0 to disable them", "address", addr)
		return nil
	}
	if mountConsole {
		h, err := console.New(localConsole(mgr, cfg, o.console.allowRemote, log))
		if err != nil {
			_ = srv.Close()
			return err
		}
		srv.Mount(h)
	}
	if err := mgr.Add(srv); err != nil {
		_ = srv.Close()
		return err
	}
	// The journal's size is reported from the first scrape until the Manager stops.
	unregister, err := metrics.RegisterJournalSize(mgr.Store().JournalSize)
	if err != nil {
		log.Error(err, "not reporting the store journal's size")
		unregister = func() {}
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		unregister()
		return nil
	})); err != nil {
		unregister()
		return err
	}
	log.Info("serving metrics", "address", srv.Addr().String(), "url", "http://"+srv.Addr().String()+"/metrics")
	if mountConsole {
		log.Info("serving the console", "url", "http://"+srv.Addr().String()+"/")
	}
	return nil
}

// clusterMetrics serves metrics as kubebuilder's scaffold does: off unless
// asked for (the Deployment asks for :8443), over HTTPS to clients that
// the cluster authenticates (TokenReview) and authorizes for GET /metrics
// (SubjectAccessReview), with HTTP/2 off unless enabled.
func (o *runOptions) clusterMetrics() metricsserver.Options {
	addr := o.metricsAddr
	if addr == "" {
		addr = "0"
	}
	opts := metricsserver.Options{BindAddress: addr, SecureServing: o.metricsSecure}
	if o.metricsSecure {
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if !o.enableHTTP2 {
		opts.TLSOpts = append(opts.TLSOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return opts
}

// openStore opens the local store serving crds, the embedded CRDs.
func openStore(dir string, s *runtime.Scheme, crds []*apiextensionsv1.CustomResourceDefinition, log logr.Logger) (*filestore.Store, error) {
	return filestore.Open(dir, filestore.Options{Scheme: s, CRDs: crds, Log: log.WithName("store")})
}

// clusterCache restricts the operator's cache: only the Pods of Workers
// (selected by workerPods), and only the Events about tether's objects,
// not every Pod and Event of the cluster; and it caches objects without
// their managedFields, as the local store's Manager does.
func clusterCache(workerPods labels.Selector) cache.Options {
	byObject := controllers.NotifyEventCache()
	byObject[&corev1.Pod{}] = cache.ByObject{Label: workerPods}
	return cache.Options{ByObject: byObject, DefaultTransform: storemanager.CacheTransform()}
}

// clusterManager is the cluster's Manager with tether's event recorders:
// eventsink's, which fold a repeat into a series only when its message is
// the same, where the Manager's own fold every Event of one object and
// reason into the first (a second notifier failure on one object would
// show the first one's message).
type clusterManager struct {
	manager.Manager
	events *eventsink.Provider
}

// GetEventRecorder returns a recorder of events.k8s.io/v1 Events written
// to the cluster through eventsink.StartRecording.
func (m *clusterManager) GetEventRecorder(name string) recorder.EventRecorder {
	return m.events.GetEventRecorder(name)
}

// GetEventRecorderFor returns the same pipeline for the core/v1 recorder
// interface.
//
// Deprecated: use GetEventRecorder, as on controller-runtime's Manager.
func (m *clusterManager) GetEventRecorderFor(name string) record.EventRecorder {
	return m.events.GetEventRecorderFor(name)
}

// eventsShutdown shuts the recorders of a clusterManager down when the
// Manager stops, on every replica: Runnables stop together, and the
// Events recorded meanwhile are written within the flush timeout.
type eventsShutdown struct{ p *eventsink.Provider }

// Start waits for the Manager to stop, then flushes the Events.
func (e eventsShutdown) Start(ctx context.Context) error {
	<-ctx.Done()
	e.p.Shutdown()
	return nil
}

// NeedLeaderElection is false: a replica that is not the leader has its
// recorders too.
func (eventsShutdown) NeedLeaderElection() bool { return false }

// consoleWatchStart is the console's WatchStart on both backends: the
// store decodes no field of the objects of a list given filestore.Fields{}
// (each watch's start needs the list's resourceVersion alone), and a
// cluster's client ignores it.
var consoleWatchStart = []client.ListOption{filestore.Fields{}}

// localConsole is the console of tether run on the local store: it reads
// the Manager's cache, single objects from the store, and follows the
// store's watch.
func localConsole(mgr *storemanager.Manager, cfg *config.Config, allowRemote bool, log logr.Logger) console.Options {
	return console.Options{
		Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Watcher: mgr.Store().Client(), WatchStart: consoleWatchStart, Config: cfg,
		Keys: &receipts.FileKeyManager{Dir: cfg.KeyDir}, Logs: logTail(nil), LoopbackOnly: !allowRemote, Log: log.WithName("console"),
	}
}

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
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/worker/supervise"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// WorkerFinalizer makes deleting a Worker stop the process it launched.
const WorkerFinalizer = "agents.tether.dev/stop-process"

// Event reasons of the Worker reconciler.
const (
	// EventWorkerCrashed is the Warning recorded when a Worker's process dies.
	EventWorkerCrashed = "WorkerCrashed"
	// EventRestartsExhausted is the Warning recorded when a Worker enters CrashLoop.
	EventRestartsExhausted = "RestartsExhausted"
	// EventWorkerStarted is recorded when a process is launched or adopted.
	EventWorkerStarted = "WorkerStarted"
	// EventWorkerStopped is recorded when a process exits cleanly or on request.
	EventWorkerStopped = "WorkerStopped"
	// EventStartFailed is the Warning recorded when a process cannot be launched or adopted.
	EventStartFailed = "StartFailed"
	// EventWorkerLost is the Warning recorded when a remote Worker's heartbeat expires.
	EventWorkerLost = "WorkerLost"
	// EventStrayPodDeleted is recorded when a Pod of the Worker that is
	// neither its current Pod nor ended is deleted.
	EventStrayPodDeleted = "StrayPodDeleted"
)

// Reasons of crash records besides supervise's exit reasons.
const (
	// ReasonHeartbeatExpired means a remote Worker stopped heartbeating.
	ReasonHeartbeatExpired = "HeartbeatExpired"
)

// WorkerControllerName is the source of the Events the Worker reconciler
// records.
const WorkerControllerName = "tether-worker-controller"

// WorkerOptions configure the Worker reconciler.
type WorkerOptions struct {
	// Host is this machine's name, recorded in status.host; default os.Hostname.
	Host string
	// LogDir receives one log file per launched Worker, LogDir/NAMESPACE/NAME.log;
	// default the user cache directory's tether/logs.
	LogDir string
	// Env is added to every launched process, after the reconciler's own
	// environment and before spec.env.
	Env []string
	// StopGrace is how long a stopped process gets between SIGTERM and SIGKILL; default 10s.
	StopGrace time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles; default 4.
	MaxConcurrentReconciles int
	// PodPendingTimeout is how long a Worker's Pod may stay Pending before
	// it is reported stuck; default DefaultPodPendingTimeout.
	PodPendingTimeout time.Duration
	// NodeLostTimeout is how long a Worker's Pod may stay not ready by its
	// node's doing, or terminating past its grace period, before its node
	// is taken for lost; default DefaultNodeLostTimeout.
	NodeLostTimeout time.Duration
	// RefuseProcesses makes the reconciler refuse the Workers it would run
	// as its own child processes (spec.command, spec.adopt), as an
	// operator in a cluster does: their logs would go to its own
	// filesystem, which a Deployment keeps read-only, and the processes
	// would run inside its container. LogDir is then not used.
	RefuseProcesses bool
	// PrivilegedNamespaces are the namespaces whose Workers' templates may
	// ask for privileged containers, host namespaces, hostPath volumes,
	// host ports, added capabilities beyond the baseline Pod Security
	// Standard or privilege escalation; AllNamespaces allows every
	// namespace. Elsewhere such a Worker gets no Pod (PrivilegedTemplate).
	PrivilegedNamespaces []string
}

// ReasonProcessesUnsupported is the Ready reason, and the Warning Event's,
// of a Worker with spec.command or spec.adopt that this reconciler refuses
// to run (RefuseProcesses).
const ReasonProcessesUnsupported = "ProcessesUnsupported"

// WorkerReconciler launches or adopts each Worker's process, turns its exit
// into a crash record and restarts it within the crash budget. Exits arrive
// as events from waited-on children and pidfd watches; nothing polls. It
// writes Worker status only: the Hook reconciler frees the Hooks of a dead
// Worker, by watching Workers.
type WorkerReconciler struct {
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
	host     string
	bootID   string
	logDir   string
	env      []string
	grace    time.Duration
	procs    *procTable
	// exits posts each crash to the Hook reconciler before it is stored;
	// nil posts nothing.
	exits *exitNotices
	now   func() time.Time
	// pods tells whether the backend serves Pods, which Workers with a
	// Pod template need: a cluster does, the local store does not.
	pods              bool
	podPendingTimeout time.Duration
	nodeLostTimeout   time.Duration
	refuseProcesses   bool
	// privilegedNamespaces is WorkerOptions.PrivilegedNamespaces.
	privilegedNamespaces []string
}

// setupWorker registers the Worker reconciler with mgr. It reads Workers
// and Hooks around the cache through mgr's API reader.
func setupWorker(mgr ctrl.Manager, opts WorkerOptions, exits *exitNotices, skipNameValidation bool) error {
	r, err := newWorkerReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder(WorkerControllerName), opts)
	if err != nil {
		return err
	}
	r.exits = exits
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.procs.close()
		return nil
	})); err != nil {
		return err
	}
	for _, reason := range []string{supervise.ReasonExited, supervise.ReasonSignaled, supervise.ReasonVanished, supervise.ReasonPIDReused, ReasonHeartbeatExpired,
		ReasonOOMKilled, ReasonEvicted, ReasonPodDeleted, ReasonNodeLost, ReasonPodFailed} {
		metrics.WorkerCrashes.WithLabelValues(reason)
	}
	workers := opts.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1.Worker{}).
		Named("worker").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, SkipNameValidation: &skipNameValidation}).
		WatchesRawSource(source.Channel(r.procs.events, &handler.EnqueueRequestForObject{})).
		Watches(&v1.Hook{}, handler.EnqueueRequestsFromMapFunc(r.workerOfHook))
	// The backend says whether it runs Pods by whether it serves them.
	if _, err := mgr.GetRESTMapper().RESTMapping(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), "v1"); err == nil {
		r.pods = true
		b = b.Owns(&corev1.Pod{})
	}
	return complete(b, r)
}

func newWorkerReconciler(c client.Client, reader client.Reader, rec events.EventRecorder, opts WorkerOptions) (*WorkerReconciler, error) {
	if rec == nil {
		return nil, fmt.Errorf("worker reconciler: no event recorder")
	}
	host := opts.Host
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("worker reconciler: host name: %w", err)
		}
		host = h
	}
	boot, err := supervise.BootID()
	if err != nil {
		return nil, fmt.Errorf("worker reconciler: %w", err)
	}
	grace := opts.StopGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	logDir := opts.LogDir
	if logDir == "" && !opts.RefuseProcesses {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("worker reconciler: no log directory: %w", err)
		}
		logDir = filepath.Join(dir, "tether", "logs")
	}
	pending := opts.PodPendingTimeout
	if pending <= 0 {
		pending = DefaultPodPendingTimeout
	}
	r := &WorkerReconciler{
		client: c, reader: reader, recorder: rec, host: host, bootID: boot,
		logDir: logDir, env: slices.Clone(opts.Env), grace: grace, procs: newProcTable(), now: time.Now,
		podPendingTimeout: pending, nodeLostTimeout: cmp.Or(max(opts.NodeLostTimeout, 0), DefaultNodeLostTimeout),
		refuseProcesses:      opts.RefuseProcesses,
		privilegedNamespaces: opts.PrivilegedNamespaces,
	}
	r.procs.restart = r.restartAtExit
	return r, nil
}

// Reconcile drives one Worker toward a supervised, running process. A write
// that lost to a newer version of the Worker, usually because the cache
// had not yet seen this reconciler's own last write, is not an error: the
// watch event of that version brings the Worker back, as for a Hook. Nor
// is a write to a Worker deleted meanwhile: no retry can write to it, and
// the watch event of its deletion brings the request back to forget it.
func (r *WorkerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	switch {
	case apierrors.IsConflict(err):
		log.FromContext(ctx).V(1).Info("worker changed while reconciling; waiting for its new version", "error", err.Error())
		return res, nil
	case apierrors.IsNotFound(err) && apierrors.IsNotFound(r.reader.Get(ctx, req.NamespacedName, &v1.Worker{})):
		log.FromContext(ctx).V(1).Info("worker deleted while reconciling", "error", err.Error())
		return res, nil
	}
	return res, err
}

func (r *WorkerReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &v1.Worker{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		if apierrors.IsNotFound(err) {
			r.procs.forgetAll(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !w.DeletionTimestamp.IsZero() {
		if err := r.finalize(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
		if w.Spec.Template != nil && r.pods && controllerutil.ContainsFinalizer(w, WorkerFinalizer) {
			// Pods left terminating on a lost node send no event: look
			// again once they may be overdue (deletePod).
			return ctrl.Result{RequeueAfter: r.nodeLostTimeout}, nil
		}
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(w, WorkerFinalizer) {
		controllerutil.AddFinalizer(w, WorkerFinalizer)
		if err := r.client.Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	if w.Spec.Template != nil {
		return r.reconcilePod(ctx, w)
	}
	if r.remote(w) {
		return r.reconcileHeartbeat(ctx, w)
	}
	if r.refuseProcesses {
		return ctrl.Result{}, r.refuseProcess(ctx, w)
	}
	if w.Status.PID != 0 {
		return ctrl.Result{}, r.reconcileProcess(ctx, w)
	}
	switch w.Status.Phase {
	case "", v1.WorkerPending, v1.WorkerRestarting, v1.WorkerRunning:
		if lags, err := r.cacheLags(ctx, w); lags || err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.start(ctx, w)
	}
	return ctrl.Result{}, r.writeStatusIfChanged(ctx, w)
}

// cacheLags reports whether the store holds a newer version of w than the
// cache gave, most often the status this reconciler wrote when it launched
// a process. A start decided on the older copy would launch a second
// process beside that one; the newer version's watch event brings the
// Worker back instead.
func (r *WorkerReconciler) cacheLags(ctx context.Context, w *v1.Worker) (bool, error) {
	fresh := &v1.Worker{}
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(w), fresh); err != nil {
		return false, err
	}
	return fresh.ResourceVersion != w.ResourceVersion, nil
}

// refuseProcess keeps w, a Worker this reconciler would run as its own
// child process, Pending with a Ready condition that says why and what to
// use instead, and records a Warning Event when it first says so.
func (r *WorkerReconciler) refuseProcess(ctx context.Context, w *v1.Worker) error {
	field := "spec.command"
	if w.Spec.Adopt != nil {
		field = "spec.adopt"
	}
	msg := fmt.Sprintf("this operator runs no processes of its own: %s would run inside its container and log to its filesystem. "+
		"Use spec.template to run the agent as a Pod, or run tether run --cluster with --worker-log-dir where processes may run", field)
	first := readyReason(w) != ReasonProcessesUnsupported
	if err := workerfsm.Apply(&w.Status, workerfsm.Unsupported); err != nil {
		return r.refuseTransition(ctx, w, err)
	}
	if err := r.writeStatusIfChanged(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, ReasonProcessesUnsupported, msg)); err != nil {
		return err
	}
	if first {
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, ReasonProcessesUnsupported, "Start", msg)
	}
	return nil
}

// remote tells whether w is judged by heartbeat: it runs on another host,
// or it names no process for this host to supervise.
func (r *WorkerReconciler) remote(w *v1.Worker) bool {
	if w.Status.Host != "" && w.Status.Host != r.host {
		return true
	}
	return len(w.Spec.Command) == 0 && w.Spec.Adopt == nil
}

func identityOf(w *v1.Worker) supervise.Identity {
	return supervise.Identity{PID: int(w.Status.PID), StartTicks: w.Status.ProcessStartTicks, BootID: w.Status.BootID}
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=agents.tether.dev,resources=workers,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=agents.tether.dev,resources=workers/status,verbs=update
// A Pod's owner reference to its Worker blocks the Worker's deletion,
// which OwnerReferencesPermissionEnforcement lets only those who may update
// the Worker's finalizers set.
// +kubebuilder:rbac:groups=agents.tether.dev,resources=workers/finalizers,verbs=update

// finalize stops the process the Worker launched, or deletes its Pods, and, once the Hook
// reconciler has freed its Hooks, lets the deletion complete. An adopted process is only released: tether
// did not start it.
func (r *WorkerReconciler) finalize(ctx context.Context, w *v1.Worker) error {
	if !controllerutil.ContainsFinalizer(w, WorkerFinalizer) {
		return nil
	}
	key := client.ObjectKeyFromObject(w)
	if w.Spec.Template != nil && r.pods {
		// The Pod watch brings the Worker back once its Pods are gone.
		left, err := r.deleteAllPods(ctx, w)
		if err != nil || left {
			return err
		}
	}
	if w.Status.PID != 0 && !r.remote(w) && w.Spec.Adopt == nil && w.Status.BootID == r.bootID {
		id := identityOf(w)
		r.procs.markRequested(key, id)
		if err := r.stop(w, id); err != nil {
			return err
		}
	}
	if p, ok := r.procs.get(key); ok && p.next != nil {
		// A restart whose crash record was never stored.
		if err := r.stop(w, p.next.id); err != nil {
			return err
		}
	}
	r.procs.forgetAll(key)
	r.exits.forget(key)
	// The Hook reconciler frees the Hooks a Worker being deleted has lost;
	// the deletion waits for it, so that it sees the Worker go. The Hook
	// watch brings the Worker back here once they are freed.
	lost, err := r.hooksLost(ctx, w)
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		logr.FromContextOrDiscard(ctx).V(1).Info("waiting for the hook controller to free the worker's hooks", "hooks", lost)
		return nil
	}
	controllerutil.RemoveFinalizer(w, WorkerFinalizer)
	return r.client.Update(ctx, w)
}

// hooksLost names the Hooks that w has lost by workerfsm.AssigneeLost,
// read around the cache: those the Hook reconciler is yet to free.
func (r *WorkerReconciler) hooksLost(ctx context.Context, w *v1.Worker) ([]string, error) {
	hooks := &v1.HookList{}
	if err := r.reader.List(ctx, hooks, client.InNamespace(w.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the hooks of worker %s: %w", w.Name, err)
	}
	var lost []string
	for i := range hooks.Items {
		if l, _ := workerfsm.AssigneeLost(&hooks.Items[i], w); l {
			lost = append(lost, hooks.Items[i].Name)
		}
	}
	return lost, nil
}

// workerOfHook maps a Hook to the Worker it names as assignee while that
// Worker is being deleted: its finalizer waits for its Hooks to be freed.
// An update maps both the old and the new Hook, so clearing the assignee
// brings the Worker back.
func (r *WorkerReconciler) workerOfHook(ctx context.Context, o client.Object) []reconcile.Request {
	h, ok := o.(*v1.Hook)
	if !ok || h.Spec.Assignee == "" {
		return nil
	}
	key := types.NamespacedName{Namespace: h.Namespace, Name: h.Spec.Assignee}
	w := &v1.Worker{}
	if err := r.client.Get(ctx, key, w); err != nil || w.DeletionTimestamp.IsZero() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

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
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/notify"
)

// NotifyControllerName is the source of the Events the notify reconciler
// records (a notifier that failed).
const NotifyControllerName = "tether-notify-controller"

// EventNotifyFailed is the Warning recorded on an object when a notifier
// run about it failed, timed out or could not be queued.
const EventNotifyFailed = "NotifyFailed"

// NotifyMaxAge is how old an Event may be and still be notified: the
// default time-to-live of Events on a Kubernetes cluster (kube-apiserver's
// --event-ttl), after which a cluster would have deleted it. An older Event
// that was never notified (it happened while no tether run was serving, or
// before the notifier was configured) is history, not news.
const NotifyMaxAge = time.Hour

// NotifyKeyField indexes the Events that can be notified by the object
// they are about and their notify reason, so that the minimum interval is
// judged from the records on the Events of the same object and reason.
const NotifyKeyField = "notify.key"

// NotifyEventCache is how `tether run --cluster` restricts its cache of
// Events, which only the notify reconciler watches: to those about tether's
// own objects, not every Event of the cluster. (The local store holds no
// others, and its cache takes no restrictions.)
func NotifyEventCache() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.Event{}: {Field: fields.OneTermEqualSelector("involvedObject.apiVersion", v1.GroupVersion.String())},
	}
}

// The notifier pool: how many commands run at once, and how many may wait.
const (
	notifyWorkers = 4
	notifyQueue   = 64
)

// notifyEvent is one kind of Event that a notify reason stands for.
type notifyEvent struct {
	kind, reason string
	notify       config.NotifyReason
}

// notifyEvents maps the Events tether records to the notify reasons of the
// configuration file. Each is recorded once per occurrence: WorkerCrashed
// and RestartsExhausted by the Worker reconciler on a crash, WorkerLost
// when a remote Worker's heartbeat expires, HeartbeatExpired by the Hook
// reconciler when a working Hook goes stale, AwaitingHuman by `tether
// await` and Completed by the `tether step done` that passes the last step
// (both through hookwrite).
var notifyEvents = []notifyEvent{
	{kind: "Worker", reason: EventWorkerCrashed, notify: config.NotifyWorkerCrashed},
	{kind: "Worker", reason: EventWorkerLost, notify: config.NotifyWorkerCrashed},
	{kind: "Worker", reason: EventRestartsExhausted, notify: config.NotifyRestartsExhausted},
	{kind: "Hook", reason: hookwrite.CrashReason(v1.CrashStaleHeartbeat), notify: config.NotifyHookStale},
	{kind: "Hook", reason: hookwrite.ReasonAwaitingHuman, notify: config.NotifyAwaitingHuman},
	{kind: "Hook", reason: hookwrite.ReasonCompleted, notify: config.NotifyCompleted},
}

// notifyReasonOf is the notify reason ev stands for; false for an Event no
// notifier can ask for.
func notifyReasonOf(ev *corev1.Event) (config.NotifyReason, bool) {
	ref := ev.InvolvedObject
	if group, _, _ := strings.Cut(ref.APIVersion, "/"); group != v1.GroupVersion.Group {
		return "", false
	}
	for _, m := range notifyEvents {
		if m.kind == ref.Kind && m.reason == ev.Reason {
			return m.notify, true
		}
	}
	return "", false
}

// notifyKey is the NotifyKeyField value of ev: the object it is about and
// its notify reason.
func notifyKey(ev *corev1.Event) (string, bool) {
	reason, ok := notifyReasonOf(ev)
	if !ok {
		return "", false
	}
	ref := ev.InvolvedObject
	id := string(ref.UID)
	if id == "" {
		id = ref.Kind + "/" + ref.Name
	}
	return id + "/" + string(reason), true
}

// NotifyReconciler runs the notifiers of the configuration file for the
// Events they ask for. It reconciles Events: the same objects `tether
// events` shows, recorded by `tether run`'s reconcilers and by the CLI
// verbs alike. What it notified it records on each Event (the
// notify.Annotation) before the command runs, so a restart never notifies
// an Event twice; the commands run on a bounded pool, off the reconcile.
type NotifyReconciler struct {
	client    client.Client
	reader    client.Reader
	notifiers []config.Notifier
	runner    *notify.Runner
	events    recorder.EventRecorder
	now       func() time.Time
	// recoveryBase is what a relative status.recoveryFile is relative to.
	recoveryBase string
}

// +kubebuilder:rbac:groups="",resources=events,verbs=list;watch;patch
// +kubebuilder:rbac:groups=agents.tether.dev,resources=hooks;workers,verbs=get;list;watch

// Reconcile notifies one Event, once per notifier that wants it.
func (r *NotifyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ev := &corev1.Event{}
	if err := r.client.Get(ctx, req.NamespacedName, ev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	reason, ok := notifyReasonOf(ev)
	if !ok {
		return ctrl.Result{}, nil
	}
	obs := notify.Observed(ev)
	if age := r.now().Sub(obs.Time); age > NotifyMaxAge {
		return ctrl.Result{}, nil
	}
	rec, err := notify.RecordOf(ev)
	if err != nil {
		log.FromContext(ctx).Error(err, "not notifying an Event whose record is unreadable")
		return ctrl.Result{}, nil
	}
	var jobs []notify.Job
	for _, n := range r.notifiers {
		if !n.Wants(reason) || rec.Handled(n.Name, obs) {
			continue
		}
		last, err := r.lastSent(ctx, ev, n.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		outcome := notify.Sent
		if !last.IsZero() && obs.Time.Sub(last) < n.Interval() {
			outcome = notify.Throttled
		}
		rec.Handle(n.Name, obs, outcome)
		if outcome == notify.Sent {
			jobs = append(jobs, notify.Job{Notifier: n})
		}
	}
	if len(rec) == 0 || !r.changed(ev, rec) {
		return ctrl.Result{}, nil
	}
	payload := notify.Describe(ev, reason, r.worker(ctx, ev), r.hook(ctx, ev))
	if h := payload.Hook; h != nil && h.RecoveryFile != "" && !filepath.IsAbs(h.RecoveryFile) && r.recoveryBase != "" {
		// A notifier runs anywhere: it gets the file's absolute path.
		h.RecoveryFile = filepath.Join(r.recoveryBase, h.RecoveryFile)
	}
	// The record goes first, guarded by the resourceVersion read: a
	// notifier runs at most once per occurrence, even across restarts.
	patch := client.MergeFromWithOptions(ev.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if err := rec.Set(ev); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.client.Patch(ctx, ev, patch); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// The watch event of the newer version (or of the deletion)
			// brings the Event back.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("recording the notification of event %s: %w", req.NamespacedName, err)
	}
	for _, j := range jobs {
		j.Payload = payload
		j.Payload.Notifier = j.Notifier.Name
		if !r.runner.Submit(j) {
			log.FromContext(ctx).Error(nil, "notifier queue full; notification dropped", "notifier", j.Notifier.Name, "reason", reason)
			r.failed(j, fmt.Errorf("the queue of %d notifications is full", notifyQueue))
		}
	}
	// The next Event of the same object and reason must see this record in
	// the cache to honour the minimum interval: wait (briefly) until the
	// cache holds it.
	r.awaitCache(ctx, ev)
	return ctrl.Result{}, nil
}

// changed tells whether rec differs from the record stored on ev.
func (r *NotifyReconciler) changed(ev *corev1.Event, rec notify.Record) bool {
	old, err := notify.RecordOf(ev)
	if err != nil || len(old) != len(rec) {
		return true
	}
	for k, e := range rec {
		if o, ok := old[k]; !ok || o.Count != e.Count || o.Outcome != e.Outcome {
			return true
		}
	}
	return false
}

// lastSent is when notifier name last ran for the object and reason of ev,
// judged from the records on their Events; zero when it never did.
func (r *NotifyReconciler) lastSent(ctx context.Context, ev *corev1.Event, name string) (time.Time, error) {
	key, _ := notifyKey(ev)
	list := &corev1.EventList{}
	if err := r.client.List(ctx, list, client.InNamespace(ev.Namespace), client.MatchingFields{NotifyKeyField: key}); err != nil {
		return time.Time{}, fmt.Errorf("listing the events of %s: %w", key, err)
	}
	var last time.Time
	for i := range list.Items {
		rec, err := notify.RecordOf(&list.Items[i])
		if err != nil {
			continue
		}
		if t, ok := rec.LastSent(name); ok && t.After(last) {
			last = t
		}
	}
	return last, nil
}

// awaitCache waits up to a second until the cache holds ev's record.
func (r *NotifyReconciler) awaitCache(ctx context.Context, ev *corev1.Event) {
	want := ev.Annotations[notify.Annotation]
	_ = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &corev1.Event{}
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(ev), cur); err != nil {
			return apierrors.IsNotFound(err), nil
		}
		return cur.Annotations[notify.Annotation] == want, nil
	})
}

// worker is the Worker ev is about, or nil. It is read around the cache,
// which may not hold yet the crash record the Event reports.
func (r *NotifyReconciler) worker(ctx context.Context, ev *corev1.Event) *v1.Worker {
	if ev.InvolvedObject.Kind != "Worker" {
		return nil
	}
	w := &v1.Worker{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: ev.Namespace, Name: ev.InvolvedObject.Name}, w); err != nil {
		return nil
	}
	return w
}

// hook is the Hook ev is about, or nil, read around the cache.
func (r *NotifyReconciler) hook(ctx context.Context, ev *corev1.Event) *v1.Hook {
	if ev.InvolvedObject.Kind != "Hook" {
		return nil
	}
	h := &v1.Hook{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: ev.Namespace, Name: ev.InvolvedObject.Name}, h); err != nil {
		return nil
	}
	return h
}

// failed records a Warning Event about the object of a notifier run that
// failed. Its reason is no notify reason, so it notifies nobody.
func (r *NotifyReconciler) failed(j notify.Job, err error) {
	p := j.Payload
	var obj client.Object
	switch p.Kind {
	case "Worker":
		obj = &v1.Worker{}
	case "Hook":
		obj = &v1.Hook{}
	default:
		return
	}
	if err := r.client.Get(context.Background(), client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, obj); err != nil {
		return
	}
	r.events.Eventf(obj, nil, corev1.EventTypeWarning, EventNotifyFailed, "Notify", "notifier %s about %s: %v", j.Notifier.Name, p.Reason, err)
}

// SetupNotify registers the notify reconciler and its pool with mgr when
// cfg names notifiers; without any it adds nothing, not even a watch of
// Events. SetupAll calls it; tests may call it alone.
func SetupNotify(mgr ctrl.Manager, cfg *config.Config, recoveryBase string, skipNameValidation bool) error {
	if len(cfg.Notify) == 0 {
		return nil
	}
	r := &NotifyReconciler{
		client:       mgr.GetClient(),
		reader:       mgr.GetAPIReader(),
		notifiers:    cfg.Notify,
		events:       mgr.GetEventRecorder(NotifyControllerName),
		now:          time.Now,
		recoveryBase: recoveryBase,
	}
	logger := mgr.GetLogger().WithName("notify")
	r.runner = notify.NewRunner(notifyWorkers, notifyQueue, logger, func(j notify.Job, res notify.Result) {
		if res.Err != nil {
			r.failed(j, res.Err)
		}
	})
	if err := mgr.Add(r.runner); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Event{}, NotifyKeyField, func(o client.Object) []string {
		if key, ok := notifyKey(o.(*corev1.Event)); ok {
			return []string{key}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing events by %s: %w", NotifyKeyField, err)
	}
	notifiable := predicate.NewPredicateFuncs(func(o client.Object) bool {
		ev, ok := o.(*corev1.Event)
		if !ok {
			return false
		}
		_, ok = notifyReasonOf(ev)
		return ok
	})
	return complete(ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Event{}, builder.WithPredicates(notifiable, predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return false }})).
		Named("notify").
		// One at a time: each decision reads the records the previous one wrote.
		WithOptions(controller.Options{SkipNameValidation: &skipNameValidation, MaxConcurrentReconciles: 1}), r)
}

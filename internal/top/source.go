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

package top

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// Snapshot is what one frame shows: the objects as the watches last saw
// them, each list sorted by namespace and name.
type Snapshot struct {
	// Hooks are the Hooks.
	Hooks []v1.Hook
	// Workers are the Workers.
	Workers []v1.Worker
	// Warnings are the Warning Events about tether's objects.
	Warnings []corev1.Event
}

// Source keeps Hooks, Workers and Warning Events up to date from watches
// on a client: client-go informers (list, then watch from the list's
// resourceVersion, re-listing when a watch cannot resume) over any
// client.WithWatch, so the local store and a cluster are watched alike.
type Source struct {
	informers []toolscache.SharedIndexInformer
	changed   chan struct{}

	mu      sync.Mutex
	lastErr error
	errAt   time.Time
}

// NewSource watches the Hooks, Workers and Events of namespace, or of every
// namespace when namespace is empty. Nothing is read until Start.
func NewSource(c client.WithWatch, namespace string) (*Source, error) {
	s := &Source{changed: make(chan struct{}, 1)}
	for _, obj := range []client.ObjectList{&v1.HookList{}, &v1.WorkerList{}, &corev1.EventList{}} {
		example, err := itemOf(c.Scheme(), obj)
		if err != nil {
			return nil, err
		}
		lw := &listerWatcher{c: c, namespace: namespace, newList: func() client.ObjectList {
			return obj.DeepCopyObject().(client.ObjectList)
		}}
		inf := toolscache.NewSharedIndexInformerWithOptions(lw, example, toolscache.SharedIndexInformerOptions{})
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.notify() },
			UpdateFunc: func(any, any) { s.notify() },
			DeleteFunc: func(any) { s.notify() },
		}); err != nil {
			return nil, err
		}
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *toolscache.Reflector, err error) {
			s.setErr(err)
		}); err != nil {
			return nil, err
		}
		s.informers = append(s.informers, inf)
	}
	return s, nil
}

// itemOf is an empty object of the kind list holds.
func itemOf(scheme *runtime.Scheme, list client.ObjectList) (runtime.Object, error) {
	gvks, _, err := scheme.ObjectKinds(list)
	if err != nil {
		return nil, err
	}
	gvk := gvks[0]
	gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
	return scheme.New(gvk)
}

// Start runs the watches until ctx ends.
func (s *Source) Start(ctx context.Context) {
	for _, inf := range s.informers {
		go inf.RunWithContext(ctx)
	}
}

// Changed receives a value after any object changed; several changes
// between two reads make one value.
func (s *Source) Changed() <-chan struct{} { return s.changed }

func (s *Source) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *Source) setErr(err error) {
	s.mu.Lock()
	s.lastErr, s.errAt = err, time.Now()
	s.mu.Unlock()
	s.notify()
}

// LastError is when a watch last reported an error, and the error, or
// nil; the watches retry by themselves, with client-go's backoff.
func (s *Source) LastError() (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errAt, s.lastErr
}

// Snapshot copies what the watches hold now.
func (s *Source) Snapshot() Snapshot {
	var snap Snapshot
	for _, obj := range s.informers[0].GetStore().List() {
		snap.Hooks = append(snap.Hooks, *obj.(*v1.Hook).DeepCopy())
	}
	for _, obj := range s.informers[1].GetStore().List() {
		snap.Workers = append(snap.Workers, *obj.(*v1.Worker).DeepCopy())
	}
	live := map[string]types.UID{}
	for i := range snap.Hooks {
		live[objectKey("Hook", &snap.Hooks[i].ObjectMeta)] = snap.Hooks[i].UID
	}
	for i := range snap.Workers {
		live[objectKey("Worker", &snap.Workers[i].ObjectMeta)] = snap.Workers[i].UID
	}
	for _, obj := range s.informers[2].GetStore().List() {
		if e := obj.(*corev1.Event); e.Type == corev1.EventTypeWarning && aboutTether(e) && !aboutDeleted(e, live) {
			snap.Warnings = append(snap.Warnings, *e.DeepCopy())
		}
	}
	snap.sort()
	return snap
}

func objectKey(kind string, m *metav1.ObjectMeta) string {
	return kind + "/" + m.Namespace + "/" + m.Name
}

// aboutDeleted tells whether e regards a Hook or a Worker that no longer
// exists (or exists anew, with another UID): its alert is over. Events
// about other kinds are kept: top does not watch them.
func aboutDeleted(e *corev1.Event, live map[string]types.UID) bool {
	o := e.InvolvedObject
	if o.Kind != "Hook" && o.Kind != "Worker" {
		return false
	}
	uid, ok := live[o.Kind+"/"+o.Namespace+"/"+o.Name]
	return !ok || o.UID != "" && uid != "" && o.UID != uid
}

func (snap *Snapshot) sort() {
	sort.Slice(snap.Hooks, func(i, j int) bool { return less(&snap.Hooks[i].ObjectMeta, &snap.Hooks[j].ObjectMeta) })
	sort.Slice(snap.Workers, func(i, j int) bool { return less(&snap.Workers[i].ObjectMeta, &snap.Workers[j].ObjectMeta) })
	sort.SliceStable(snap.Warnings, func(i, j int) bool {
		ti, tj := EventTime(&snap.Warnings[i]), EventTime(&snap.Warnings[j])
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return less(&snap.Warnings[i].ObjectMeta, &snap.Warnings[j].ObjectMeta)
	})
}

func less(a, b *metav1.ObjectMeta) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// EventTime is when e last happened: the last observation of its series,
// else its last timestamp, event time, first timestamp or creation.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// listerWatcher lists and watches one kind through a client.WithWatch.
type listerWatcher struct {
	c         client.WithWatch
	namespace string
	newList   func() client.ObjectList
}

func (lw *listerWatcher) options(o metav1.ListOptions) *client.ListOptions {
	return &client.ListOptions{Namespace: lw.namespace, Raw: &o}
}

// List implements toolscache.Lister.
func (lw *listerWatcher) List(o metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), o)
}

// ListWithContext implements toolscache.ListerWithContext.
func (lw *listerWatcher) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	list := lw.newList()
	if err := lw.c.List(ctx, list, lw.options(o)); err != nil {
		return nil, err
	}
	return list, nil
}

// Watch implements toolscache.Watcher.
func (lw *listerWatcher) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), o)
}

// WatchWithContext implements toolscache.WatcherWithContext.
func (lw *listerWatcher) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return lw.c.Watch(ctx, lw.newList(), lw.options(o))
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to list and
// then watch: the local store does not stream an initial list, and a plain
// list then watch works on an API server too.
func (lw *listerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

// aboutTether tells whether e regards one of tether's objects or the local
// store itself (a quarantined journal line): a cluster's own Warnings, such
// as a Service's IP repair, are not an agent's alert.
func aboutTether(e *corev1.Event) bool {
	o := e.InvolvedObject
	return strings.HasPrefix(o.APIVersion, v1.GroupVersion.Group+"/") || o.APIVersion == "v1" && o.Kind == "Store"
}

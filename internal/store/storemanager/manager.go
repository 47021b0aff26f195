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

// Package storemanager builds a complete controller-runtime Manager that
// runs on the local file store with no API server: the store's client, a
// stock controller-runtime cache fed by the store's list and watch, the
// store's REST mapper, the store's client as API reader, event recorders
// writing into the store, the hand-edit watcher and the run lock. A
// placeholder rest.Config whose transport refuses every request is the
// tripwire that proves nothing goes to a network.
package storemanager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/store/eventsink"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// Tripwire is an http.RoundTripper that refuses and counts every request.
type Tripwire struct {
	attempts atomic.Int64
}

// RoundTrip refuses the request.
func (t *Tripwire) RoundTrip(req *http.Request) (*http.Response, error) {
	t.attempts.Add(1)
	return nil, fmt.Errorf("tether runs on the local file store: refusing network request %s %s", req.Method, req.URL)
}

// Attempts returns how many requests were refused.
func (t *Tripwire) Attempts() int64 { return t.attempts.Load() }

// StoreComponent is the source of the Events the hand-edit watcher records.
const StoreComponent = "tether-store"

// Options configure the Manager.
type Options struct {
	// Scheme must be the store's scheme.
	Scheme *runtime.Scheme
	// MetricsBindAddress serves Prometheus metrics; "0" or empty disables it.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; empty disables it.
	HealthProbeBindAddress string
	// PprofBindAddress serves net/http/pprof's /debug/pprof/; "0" or empty
	// disables it.
	PprofBindAddress string
	// Log is the store's logger when Open opens it; default discard.
	Log logr.Logger
	// StoreObserver is the store's Observer when Open opens it; nil
	// observes nothing.
	StoreObserver filestore.Observer
}

// Manager is a complete controller-runtime Manager on the local file
// store: its client reads from a cache fed by the store's list and watch
// and writes to the store, GetAPIReader is the store's own (uncached)
// client, and event recorders write Events into the store through an
// eventsink.Provider. It runs the store's hand-edit watcher, and owns the
// resources it was given to own (the run lock and the store itself when
// built by Open), releasing them when Start returns or on Close.
//
// Reconcilers therefore use it exactly like a Manager on a cluster.
type Manager struct {
	manager.Manager
	store  *filestore.Store
	events *eventsink.Provider
	trip   *Tripwire
	// settled is closed once the caches have synced and the memory of
	// their first lists has been returned to the system.
	settled chan struct{}

	closeOnce sync.Once
	closers   []func() error
	closeErr  error
}

var _ manager.Manager = (*Manager)(nil)

// New builds a Manager over store, which the caller keeps owning. Its
// client reads from the cache and writes to the store; its cache lists
// and watches the store.
func New(store *filestore.Store, opts Options) (*Manager, error) {
	trip := &Tripwire{}
	cfg := &rest.Config{Host: "http://tether-file-store.invalid", Transport: trip}
	storeClient := store.Client()
	metricsAddr := opts.MetricsBindAddress
	if metricsAddr == "" {
		metricsAddr = "0"
	}
	inner, err := manager.New(cfg, manager.Options{
		Scheme:                 opts.Scheme,
		Cache:                  cache.Options{DefaultTransform: CacheTransform()},
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: opts.HealthProbeBindAddress,
		PprofBindAddress:       opts.PprofBindAddress,
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
			return store.RESTMapper(), nil
		},
		NewCache: func(config *rest.Config, co cache.Options) (cache.Cache, error) {
			if len(co.DefaultNamespaces) > 0 || len(co.ByObject) > 0 || co.DefaultLabelSelector != nil || co.DefaultFieldSelector != nil {
				return nil, errors.New("the file store cache does not support namespace, label or field restrictions")
			}
			co.NewInformer = func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
				lw, err := newListerWatcher(storeClient, obj, co.DefaultTransform)
				if err != nil {
					// NewInformer cannot return an error; an unservable type is a programming error.
					panic(err)
				}
				return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
			}
			return cache.New(config, co)
		},
		NewClient: func(_ *rest.Config, co client.Options) (client.Client, error) {
			if co.Cache == nil || co.Cache.Reader == nil {
				return storeClient, nil
			}
			return GuardTrimmed(&cachedClient{Client: storeClient, reader: co.Cache.Reader}), nil
		},
	})
	if err != nil {
		return nil, err
	}
	m := &Manager{Manager: inner, store: store, trip: trip, events: eventsink.NewProvider(storeClient, opts.Scheme), settled: make(chan struct{})}
	storeEvents := m.events.GetEventRecorder(StoreComponent)
	if err := inner.Add(manager.RunnableFunc(func(ctx context.Context) error {
		// The watcher's first scan reads every store file, as the caches'
		// first lists do, which adopt the hand edits of the kinds they
		// list: scanning after them leaves start-up the cores, and still
		// adopts every other edit made while nothing was watching.
		if !inner.GetCache().WaitForCacheSync(ctx) {
			return nil
		}
		// The first lists decode every object several times over (file,
		// JSON, map, typed object, cache); little of it stays, and the
		// runtime would hand the rest back to the system only minutes later.
		debug.FreeOSMemory()
		close(m.settled)
		return store.WatchHandEdits(ctx, storeEvents)
	})); err != nil {
		m.events.Shutdown()
		return nil, err
	}
	return m, nil
}

// Open builds the Manager of `tether run` on the store in dir: it opens
// the store serving crds (creating it if need be), takes the store's run
// lock (so a second `tether run` fails at once, naming the first one's
// PID), and builds the Manager, which owns both and releases them when
// Start returns or on Close.
func Open(dir string, crds []*apiextensionsv1.CustomResourceDefinition, opts Options) (*Manager, error) {
	log := opts.Log
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	store, err := filestore.Open(dir, filestore.Options{Scheme: opts.Scheme, CRDs: crds, Log: log, Observer: opts.StoreObserver})
	if err != nil {
		return nil, err
	}
	lock, err := AcquireRunLock(dir)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	m, err := New(store, opts)
	if err != nil {
		_ = store.Close()
		_ = lock.Release()
		return nil, err
	}
	// Closed in reverse: the store before the lock that guards it.
	m.closers = append(m.closers, lock.Release, store.Close)
	return m, nil
}

// GetAPIReader returns the store's client, which reads the store directly,
// around the cache.
func (m *Manager) GetAPIReader() client.Reader { return m.store.Client() }

// GetEventRecorder returns a recorder of events.k8s.io/v1 Events written
// into the store.
func (m *Manager) GetEventRecorder(name string) recorder.EventRecorder {
	return m.events.GetEventRecorder(name)
}

// GetEventRecorderFor returns a recorder of core/v1 Events written into
// the store.
//
// Deprecated: use GetEventRecorder, as on controller-runtime's Manager.
func (m *Manager) GetEventRecorderFor(name string) record.EventRecorder {
	return m.events.GetEventRecorderFor(name)
}

// Settled is closed once the started Manager's caches have synced and the
// memory that their first lists used and left has been returned to the
// system, before the hand-edit watcher's first scan.
func (m *Manager) Settled() <-chan struct{} { return m.settled }

// Store returns the file store the Manager runs on.
func (m *Manager) Store() *filestore.Store { return m.store }

// Tripwire returns the transport that refuses and counts network requests.
func (m *Manager) Tripwire() *Tripwire { return m.trip }

// Start runs the Manager until ctx is done, then flushes the recorded
// Events and releases what the Manager owns.
func (m *Manager) Start(ctx context.Context) error {
	err := m.Manager.Start(ctx)
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close flushes the recorded Events and releases what the Manager owns.
// Start calls it when it returns; call it when the Manager is never
// started. Calls after the first return the first call's result.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.events.Shutdown()
		for i := len(m.closers) - 1; i >= 0; i-- {
			if err := m.closers[i](); err != nil && m.closeErr == nil {
				m.closeErr = err
			}
		}
	})
	return m.closeErr
}

// cachedClient reads from the informer cache and writes to the store, as
// controller-runtime's default client does against an API server.
type cachedClient struct {
	client.Client
	reader client.Reader
}

func (c *cachedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

func (c *cachedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reader.List(ctx, list, opts...)
}

// listerWatcher lists and watches one kind through the store client.
type listerWatcher struct {
	c       client.WithWatch
	newList func() client.ObjectList
	// decoded asks the store to apply the informer's transform as it
	// decodes (filestore.Transform); nil when the informer has none.
	decoded []client.ListOption
}

// newListerWatcher lists and watches obj's kind in the store for an
// informer whose transform is transform (nil for none). The store applies
// it as it decodes each object, and the informer again, to no effect.
// CacheTransform changes an object in place and changes nothing the
// second time, as filestore.Transform asks.
func newListerWatcher(c client.WithWatch, obj runtime.Object, transform toolscache.TransformFunc) (*listerWatcher, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	var decoded []client.ListOption
	if transform != nil {
		decoded = []client.ListOption{filestore.Transform(func(o client.Object) { _, _ = transform(o) })}
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return &listerWatcher{c: c, decoded: decoded, newList: func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(listGVK)
			return l
		}}, nil
	}
	if _, err := c.Scheme().New(listGVK); err != nil {
		return nil, fmt.Errorf("file store informer for %T: %w", obj, err)
	}
	return &listerWatcher{c: c, decoded: decoded, newList: func() client.ObjectList {
		l, _ := c.Scheme().New(listGVK)
		return l.(client.ObjectList)
	}}, nil
}

func listOptions(o metav1.ListOptions) (*client.ListOptions, error) {
	lo := &client.ListOptions{Raw: &o}
	if o.LabelSelector != "" {
		sel, err := labels.Parse(o.LabelSelector)
		if err != nil {
			return nil, err
		}
		lo.LabelSelector = sel
	}
	if o.FieldSelector != "" {
		sel, err := fields.ParseSelector(o.FieldSelector)
		if err != nil {
			return nil, err
		}
		lo.FieldSelector = sel
	}
	return lo, nil
}

// List implements toolscache.ListerWatcher.
func (lw *listerWatcher) List(o metav1.ListOptions) (runtime.Object, error) {
	lo, err := listOptions(o)
	if err != nil {
		return nil, err
	}
	list := lw.newList()
	return list, lw.c.List(context.Background(), list, append([]client.ListOption{lo}, lw.decoded...)...)
}

// Watch implements toolscache.ListerWatcher.
func (lw *listerWatcher) Watch(o metav1.ListOptions) (watch.Interface, error) {
	lo, err := listOptions(o)
	if err != nil {
		return nil, err
	}
	return lw.c.Watch(context.Background(), lw.newList(), append([]client.ListOption{lo}, lw.decoded...)...)
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to list and
// then watch: the store does not stream an initial list with bookmarks.
func (lw *listerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

// RunLock is held by the one `tether run` serving a store.
type RunLock struct {
	f *os.File
}

// AcquireRunLock takes the store's run lock without waiting. When another
// process holds it, the error names that process's PID. The kernel drops
// the lock when the holder exits, even by SIGKILL.
func AcquireRunLock(dir string) (*RunLock, error) {
	path := filepath.Join(dir, ".run.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := atomicfs.TryLock(f, atomicfs.Exclusive); err != nil {
		data, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, atomicfs.ErrLocked) {
			holder := strings.TrimSpace(string(data))
			return nil, fmt.Errorf("store %s is already served by another tether run (pid %s)", dir, holder)
		}
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &RunLock{f: f}, nil
}

// Release drops the run lock.
func (l *RunLock) Release() error {
	_ = l.f.Truncate(0)
	return l.f.Close()
}

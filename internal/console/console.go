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

// Package console is tether's read-only web console: an http.Handler that
// renders the Hooks, Workers and Checkpoints it reads through a
// controller-runtime client.Reader as server-side HTML, and pushes a
// "changed" server-sent event to open pages whenever a watch sees one, so
// they refresh themselves without a reload. It serves only GET and HEAD.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

//go:embed assets
var assets embed.FS

// Watcher is what the live updates need of a client: a list for the
// resourceVersion to start from, and a watch from it. A client.WithWatch,
// of the local store or of a cluster, is one; the watch is the one
// `tether get -w` reads.
type Watcher interface {
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
	Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error)
}

// LogTail returns the end of a Worker's log, at most max bytes, as
// `tether logs` reads it.
type LogTail func(ctx context.Context, w *v1.Worker, max int64) (string, error)

// Options configure a console.
type Options struct {
	// Reader reads the objects: the cache of tether run, or a client of the
	// store or the cluster.
	Reader client.Reader
	// APIReader, when set, reads the one object a Hook or Worker page is
	// about, fresh and whole, where Reader is a cache that may lag.
	APIReader client.Reader
	// Watcher, when set, drives the live updates; without it pages do not
	// follow changes.
	Watcher Watcher
	// WatchStart are further options of the list that gives each watch the
	// resourceVersion it starts from. That list is unstructured and asks for
	// one object; a store that reads every object of a list whole anyway
	// (the local store: filestore.Fields{} decodes no field of them) is
	// told here to read as little.
	WatchStart []client.ListOption
	// EventFields, when set, narrows the watch of Events, such as to
	// tether's objects on a cluster, where every Event would otherwise
	// refresh the open pages.
	EventFields fields.Selector
	// Config gives each Hook's effective staleAfter; nil uses the defaults.
	Config *config.Config
	// Keys verify receipts; nil leaves the signatures unchecked.
	Keys receipts.KeyManager
	// Logs reads a Worker's log tail; nil shows none.
	Logs LogTail
	// LoopbackOnly refuses requests whose Host header is not a loopback
	// name or address, so that a web page cannot reach a console bound to
	// loopback through a rebound DNS name.
	LoopbackOnly bool
	// Log logs failed renders.
	Log logr.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Handler is the console.
type Handler struct {
	o     Options
	mux   *http.ServeMux
	pages map[string]*template.Template
	// starting lets one watch's start list run at a time: on the local
	// store each reads every object of its kind, and the event stream
	// starts four (and each open page one stream), whose garbage at once
	// would raise the process's heap goal by their sum.
	starting sync.Mutex
}

// New returns the console over o.Reader.
func New(o Options) (*Handler, error) {
	if o.Reader == nil {
		return nil, errors.New("console: no Reader")
	}
	if o.Config == nil {
		o.Config = config.Default("")
	}
	if o.APIReader == nil {
		o.APIReader = o.Reader
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	h := &Handler{o: o, mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	for _, page := range []string{"overview", "hook", "worker", "diff", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/chart.html", "assets/"+page+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", page, err)
		}
		h.pages[page] = t
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /{$}", h.overview)
	h.mux.HandleFunc("GET /hooks/{namespace}/{name}", h.hook)
	h.mux.HandleFunc("GET /hooks/{namespace}/{name}/diff/{checkpoint}", h.diff)
	h.mux.HandleFunc("GET /workers/{namespace}/{name}", h.worker)
	h.mux.HandleFunc("GET /events", h.events)
	return h, nil
}

// ServeHTTP serves GET and HEAD; any other method is 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the console is read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if h.o.LoopbackOnly && !loopbackHost(r.Host) {
		http.Error(w, "this console answers only to a loopback host name (localhost, 127.0.0.1, [::1])", http.StatusMisdirectedRequest)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether host (a Host header) names the loopback
// interface.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// render executes page with data, or the error page when it fails.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, page string, data any) {
	var buf strings.Builder
	if err := h.pages[page].Execute(&buf, data); err != nil {
		h.o.Log.Error(err, "rendering a console page", "page", page, "path", r.URL.Path)
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, buf.String())
}

// fail renders err as a page: 404 for what does not exist, else 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	if apierrors.IsNotFound(err) {
		status = http.StatusNotFound
	}
	w.WriteHeader(status)
	h.render(w, r, "error", page{Title: http.StatusText(status), Body: struct{ Message string }{err.Error()}})
}

// page is what layout.html renders around a page's Body.
type page struct {
	Title string
	// Live makes the page follow changes.
	Live bool
	Body any
}

// watchedKind is a kind whose changes refresh an open page: its typed
// list, which the watch decodes, and the list's kind, which the list that
// starts the watch asks for unstructured.
type watchedKind struct {
	list client.ObjectList
	gvk  schema.GroupVersionKind
}

// watched are the kinds whose changes refresh an open page.
func watched() []watchedKind {
	return []watchedKind{
		{&v1.HookList{}, v1.GroupVersion.WithKind("HookList")},
		{&v1.WorkerList{}, v1.GroupVersion.WithKind("WorkerList")},
		{&v1.CheckpointList{}, v1.GroupVersion.WithKind("CheckpointList")},
		{&corev1.EventList{}, corev1.SchemeGroupVersion.WithKind("EventList")},
	}
}

// events streams server-sent events: "ready" once the watches run, then
// "changed" (with KIND NAMESPACE/NAME) for every change they see. A watch
// that ends is started again, and followed by a "changed" in case it
// missed one.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	if h.o.Watcher == nil {
		http.Error(w, "this console does not follow changes", http.StatusNotImplemented)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	changes := make(chan string, 64)
	// "ready" promises that a change made after it is seen: it waits until
	// every watch runs (or its first attempt failed, when it is retried
	// and followed by a "changed" of its kind).
	var started sync.WaitGroup
	for _, k := range watched() {
		started.Add(1)
		go h.follow(ctx, k, changes, started.Done)
	}
	started.Wait()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "retry: 2000\nevent: ready\ndata: ok\n\n")
	flusher.Flush()
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			_, _ = io.WriteString(w, ": ping\n\n")
		case c := <-changes:
			_, _ = fmt.Fprintf(w, "event: changed\ndata: %s\n\n", strings.ReplaceAll(c, "\n", " "))
		}
		flusher.Flush()
	}
}

// follow watches k from now on and sends a line per change to changes
// until ctx ends, starting the watch again when it ends. It calls started
// once its first watch runs or its first attempt failed.
func (h *Handler) follow(ctx context.Context, k watchedKind, changes chan<- string, started func()) {
	kind := strings.TrimSuffix(k.gvk.Kind, "List")
	restarted := false
	first := sync.OnceFunc(started)
	defer first()
	for ctx.Err() == nil {
		err := h.watchOnce(ctx, k, kind, changes, restarted, first)
		first()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.o.Log.V(1).Info("console watch ended", "kind", kind, "error", err.Error())
		}
		restarted = true
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (h *Handler) watchOnce(ctx context.Context, k watchedKind, kind string, changes chan<- string, restarted bool, running func()) error {
	// Only the list's resourceVersion is read: listed unstructured, one
	// object asked for, as little decoded as the Watcher allows.
	start := &unstructured.UnstructuredList{}
	start.SetGroupVersionKind(k.gvk)
	h.starting.Lock()
	err := h.o.Watcher.List(ctx, start, append([]client.ListOption{client.Limit(1)}, h.o.WatchStart...)...)
	h.starting.Unlock()
	if err != nil {
		return err
	}
	rv := start.GetResourceVersion()
	opts := &client.ListOptions{Raw: rawFrom(rv)}
	if _, events := k.list.(*corev1.EventList); events && h.o.EventFields != nil {
		opts.FieldSelector = h.o.EventFields
	}
	wi, err := h.o.Watcher.Watch(ctx, k.list.DeepCopyObject().(client.ObjectList), opts)
	if err != nil {
		return err
	}
	defer wi.Stop()
	running()
	if restarted {
		send(ctx, changes, kind+" *")
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return errors.New("the watch closed")
			}
			switch ev.Type {
			case watch.Bookmark:
				continue
			case watch.Error:
				return fmt.Errorf("watch error: %w", apierrors.FromObject(ev.Object))
			}
			name := "*"
			if o, ok := ev.Object.(client.Object); ok {
				name = o.GetNamespace() + "/" + o.GetName()
			}
			send(ctx, changes, kind+" "+name)
		}
	}
}

func send(ctx context.Context, changes chan<- string, s string) {
	select {
	case changes <- s:
	case <-ctx.Done():
	default:
		// A full channel already holds a change: the page refreshes anyway.
	}
}

func rawFrom(rv string) *metav1.ListOptions {
	return &metav1.ListOptions{ResourceVersion: rv}
}

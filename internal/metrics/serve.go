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

package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// DefaultLocalAddress is where `tether run` serves metrics on the local
// store unless told otherwise: loopback only, since the endpoint has no
// authentication, on a port outside Prometheus's exporter range (9100-9999,
// fully allocated) and away from the ports development servers and
// controllers favour (8080, 8443, 9090). docs/metrics.md says why.
const DefaultLocalAddress = "127.0.0.1:8383"

// Server serves controller-runtime's metrics.Registry, tether's metrics
// and controller-runtime's own, in plain HTTP on a listener bound before
// the Manager starts, so that its address is known (and logged) and a busy
// port is found before anything runs. It is a manager.Runnable that does
// not need leader election.
// An endpoint that fails once serving is logged, and the Manager runs on:
// metrics never stop reconciling.
type Server struct {
	listener net.Listener
	log      logr.Logger
	mounted  http.Handler
}

// Listen binds addr for a Server that logs to log.
func Listen(addr string, log logr.Logger) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Server{listener: l, log: log}, nil
}

// Mount serves h at every path but /metrics, on the same listener (the
// web console beside the metrics). Call it before Start.
func (s *Server) Mount(h http.Handler) { s.mounted = h }

// Addr is the address the Server is bound to.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Close releases the listener of a Server that is never started.
func (s *Server) Close() error { return s.listener.Close() }

// NeedLeaderElection tells the Manager to serve metrics on every replica.
func (*Server) NeedLeaderElection() bool { return false }

// Start serves /metrics until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	if s.mounted != nil {
		mux.Handle("/", s.mounted)
	}
	// Requests end with ctx, so that the console's event streams do not
	// hold the shutdown up.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(s.listener); !errors.Is(err, http.ErrServerClosed) {
		s.log.Error(err, "the metrics endpoint stopped; reconciling goes on without it", "address", s.Addr().String())
	}
	<-done
	return nil
}

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

package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Loopback reports whether addr (HOST:PORT) binds only the loopback
// interface: an empty host binds every interface.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckAddress refuses an address off the loopback interface unless
// allowRemote says so: the console has no login, and shows every Hook's
// goal, history and workspace diffs to whoever reaches it. flag names the
// flag that allows it, for the error.
func CheckAddress(addr string, allowRemote bool, flag string) error {
	if Loopback(addr) || allowRemote {
		return nil
	}
	return fmt.Errorf("the console would listen on %s, off the loopback interface, where anyone who reaches it reads every Hook without logging in: "+
		"bind it to 127.0.0.1, or pass %s to serve it there on purpose", addr, flag)
}

// Server serves a console on a listener bound before it starts, so that
// its address is known and a busy port is found early. It is a
// manager.Runnable that does not need leader election.
type Server struct {
	listener net.Listener
	handler  http.Handler
	log      logr.Logger
}

// Listen binds addr for a Server of h; an address off loopback needs
// allowRemote (CheckAddress).
func Listen(addr string, h http.Handler, allowRemote bool, flag string, log logr.Logger) (*Server, error) {
	if err := CheckAddress(addr, allowRemote, flag); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Server{listener: l, handler: h, log: log}, nil
}

// Addr is the address the Server is bound to.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// URL is the console's address as a link.
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() + "/" }

// Close releases the listener of a Server that is never started.
func (s *Server) Close() error { return s.listener.Close() }

// NeedLeaderElection tells the Manager to serve the console on every replica.
func (*Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends; open event streams end with it.
func (s *Server) Start(ctx context.Context) error {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	err := srv.Serve(s.listener)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

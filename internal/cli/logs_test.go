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
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// readLine reads one line of a streamed log, failing the test if none
// comes: the line must arrive while the stream is still open.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		line, _ := r.ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		return line
	case <-time.After(10 * time.Second):
		t.Fatal("no log line came")
		return ""
	}
}

// TestPrintPodLog reads a Worker's Pod log from a server speaking the
// pods/log subresource: the agent container of the current Pod, or of the
// previous one with -p, streamed as it comes, and followed with -f until
// the context ends.
func TestPrintPodLog(t *testing.T) {
	cases := []struct {
		name             string
		follow, previous bool
		wantPod          string
	}{
		{name: "current", wantPod: "agent-1"},
		{name: "follow", follow: true, wantPod: "agent-1"},
		{name: "previous", previous: true, wantPod: "agent-0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			queries := make(chan url.Values, 1)
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/namespaces/team/pods/"+tc.wantPod+"/log" {
					http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
					return
				}
				queries <- r.URL.Query()
				_, _ = io.WriteString(w, "first\n")
				w.(http.Flusher).Flush()
				if tc.follow {
					// A followed log stays open until the client goes.
					<-r.Context().Done()
					return
				}
				<-release
				_, _ = io.WriteString(w, "last\n")
			}))
			defer srv.Close()
			w := &v1.Worker{
				ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "team"},
				Spec: v1.WorkerSpec{Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "claude"}, {Name: "proxy"}},
				}}},
				Status: v1.WorkerStatus{PodName: "agent-1", Restarts: 1},
			}
			b := &Backend{podLogs: clusterPodLogs(&rest.Config{Host: srv.URL})}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				err := printPodLog(ctx, pw, b, w, tc.follow, tc.previous)
				_ = pw.CloseWithError(io.EOF)
				done <- err
			}()
			out := bufio.NewReader(pr)
			if line := readLine(t, out); line != "first\n" {
				t.Fatalf("first line %q", line)
			}
			q := <-queries
			if got := q.Get("container"); got != "claude" {
				t.Errorf("container=%q, want the agent's, claude", got)
			}
			if got, want := q.Get("follow") == "true", tc.follow; got != want {
				t.Errorf("follow=%q; want follow %v", q.Get("follow"), want)
			}
			if tc.follow {
				cancel()
			} else {
				close(release)
				if line := readLine(t, out); line != "last\n" {
					t.Errorf("last line %q", line)
				}
			}
			go func() { _, _ = io.Copy(io.Discard, out) }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("printPodLog: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("printPodLog did not return")
			}
		})
	}
}

// TestPrintLogFollow follows a local Worker's log file: what is appended
// appears, and following ends when the context ends or the file goes.
func TestPrintLogFollow(t *testing.T) {
	cases := []struct {
		name string
		end  func(cancel context.CancelFunc, path string) error
	}{
		{name: "interrupted", end: func(cancel context.CancelFunc, _ string) error { cancel(); return nil }},
		{name: "removed", end: func(_ context.CancelFunc, path string) error { return os.Remove(path) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agent.log")
			if err := os.WriteFile(path, []byte("one\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				err := printLog(ctx, pw, path, true)
				_ = pw.CloseWithError(io.EOF)
				done <- err
			}()
			out := bufio.NewReader(pr)
			if line := readLine(t, out); line != "one\n" {
				t.Fatalf("first line %q", line)
			}
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("two\n"); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			if line := readLine(t, out); line != "two\n" {
				t.Fatalf("appended line %q, want two", line)
			}
			go func() { _, _ = io.Copy(io.Discard, out) }()
			if err := tc.end(cancel, path); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("printLog: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("following did not end")
			}
		})
	}
}

// TestPodTimeoutFlags sets the Worker reconciler's Pod timeouts from
// tether run's flags, and refuses ones that are not positive.
func TestPodTimeoutFlags(t *testing.T) {
	cases := []struct {
		args                  []string
		wantPending, wantLost time.Duration
		wantErr               bool
	}{
		{args: nil, wantPending: 5 * time.Minute, wantLost: 5 * time.Minute},
		{args: []string{"--pod-pending-timeout=90s", "--node-lost-timeout=2m"}, wantPending: 90 * time.Second, wantLost: 2 * time.Minute},
		{args: []string{"--pod-pending-timeout=0"}, wantErr: true},
		{args: []string{"--node-lost-timeout=-1s"}, wantErr: true},
	}
	run := newRunCommand(&GlobalOptions{}).Flags()
	if run.Lookup("pod-pending-timeout") == nil || run.Lookup("node-lost-timeout") == nil {
		t.Fatal("tether run has no --pod-pending-timeout or --node-lost-timeout")
	}
	for _, tc := range cases {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		var timeouts podTimeouts
		bindPodFlags(fs, &timeouts)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		opts, err := timeouts.workerOptions()
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if err == nil && (opts.PodPendingTimeout != tc.wantPending || opts.NodeLostTimeout != tc.wantLost) {
			t.Errorf("%v: pending %s, node lost %s; want %s, %s", tc.args, opts.PodPendingTimeout, opts.NodeLostTimeout, tc.wantPending, tc.wantLost)
		}
	}
}

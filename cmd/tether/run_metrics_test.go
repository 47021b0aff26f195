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
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tether-dev/tether/internal/testing/testenv"
)

// TestRunLogsABusyMetricsPortWithoutAStackTrace: a busy metrics port is
// an expected condition: tether run says so in one error line, with no Go
// stack trace, and goes on reconciling; --zap-stacktrace-level=error brings
// stack traces back for whoever wants them.
func TestRunLogsABusyMetricsPortWithoutAStackTrace(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	for _, tc := range []struct {
		extra []string
		trace bool
	}{{nil, false}, {[]string{"--zap-stacktrace-level=error"}, true}} {
		dir := t.TempDir()
		cmd := exec.Command(tetherBin, append([]string{"run", "--store", filepath.Join(dir, "store"), "--metrics-bind-address", busy.Addr().String()}, tc.extra...)...)
		cmd.Env = append(os.Environ(), "TETHER_HOME="+filepath.Join(dir, "home"))
		output := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = output, output
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(output.String(), "Starting workers") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		out := output.String()
		if !strings.Contains(out, "NOT SERVING METRICS") || !strings.Contains(out, "Starting workers") {
			t.Fatalf("%v: tether run did not report the busy port and go on:\n%s", tc.extra, out)
		}
		if got := strings.Contains(out, `"stacktrace"`); got != tc.trace {
			t.Errorf("%v: stack trace in the log %t, want %t:\n%s", tc.extra, got, tc.trace, out)
		}
	}
}

// TestRunServesMetricsLocally starts `tether run` with its metrics on a
// free port, finds the address it logged, and scrapes tether's metrics
// and controller-runtime's there.
func TestRunServesMetricsLocally(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(tetherBin, "run", "--store", filepath.Join(dir, "store"), "--metrics-bind-address", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TETHER_HOME="+filepath.Join(dir, "home"))
	output := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := regexp.MustCompile(`"url":"(http://127\.0\.0\.1:[0-9]+/metrics)"`)
	deadline := time.Now().Add(30 * time.Second)
	var m []string
	for m = url.FindStringSubmatch(output.String()); m == nil; m = url.FindStringSubmatch(output.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("tether run logged no metrics address:\n%s", output.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var body string
	for {
		resp, err := http.Get(m[1])
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			body = string(data)
			if resp.StatusCode == http.StatusOK && strings.Contains(body, "controller_runtime_reconcile_total") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v\n%s", m[1], err, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{`tether_hook_transitions_total{event="begin"} 0`, "tether_store_journal_bytes ", `tether_checkpoints_total{trigger="manual"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("the scrape has no %q", want)
		}
	}
}

// TestRunServesPprofWhenAsked: --pprof-bind-address serves Go's heap
// profile from tether run, and without it no pprof server starts.
func TestRunServesPprofWhenAsked(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	_ = free.Close()
	for _, tc := range []struct {
		args  []string
		serve bool
	}{{[]string{"--pprof-bind-address", addr}, true}, {nil, false}} {
		dir := t.TempDir()
		cmd := exec.Command(tetherBin, append([]string{"run", "--store", filepath.Join(dir, "store"), "--metrics-bind-address", "0"}, tc.args...)...)
		cmd.Env = append(os.Environ(), "TETHER_HOME="+filepath.Join(dir, "home"))
		output := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = output, output
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(output.String(), "Starting workers") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		var body string
		resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				body = string(data)
			}
		}
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if served := strings.Contains(body, "# runtime.MemStats"); served != tc.serve {
			t.Errorf("%v: heap profile served %t, want %t (%v):\n%s", tc.args, served, tc.serve, err, output.String())
		}
	}
}

// TestRunOnClusterServesMetricsToAuthorizedClients runs `tether run
// --cluster` with its metrics on, as the Deployment does: over HTTPS, a
// client without a token is refused (401), a ServiceAccount without the
// metrics-reader role is forbidden (403), and one bound to it scrapes.
func TestRunOnClusterServesMetricsToAuthorizedClients(t *testing.T) {
	env := testenv.Start(t)
	addr := freeAddr(t)
	cmd := exec.Command(tetherBin, "run", "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default", "--metrics-bind-address", addr)
	output := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	token := func(sa string) string {
		t.Helper()
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	// The roles of config/rbac/metrics_reader_role.yaml, bound to one of them.
	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tether-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scraper, stranger := token("scraper"), token("stranger")

	// The manager serves a self-signed certificate unless given one.
	httpc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 10 * time.Second}
	get := func(tok string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, _, err := get("")
		if err == nil {
			if code != http.StatusUnauthorized {
				t.Fatalf("a client without a token: %d, want 401", code)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics endpoint never answered: %v\n%s", err, output.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	tests := []struct {
		name, token string
		code        int
		want        string
	}{
		{"a ServiceAccount without metrics-reader", stranger, http.StatusForbidden, ""},
		{"a ServiceAccount bound to metrics-reader", scraper, http.StatusOK, `tether_hook_transitions_total{event="begin"} 0`},
	}
	for _, tt := range tests {
		// RBAC caches and the authorization filter's cache may lag the binding briefly.
		var code int
		var body string
		var err error
		for {
			code, body, err = get(tt.token)
			if err == nil && code == tt.code || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil || code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d, %v, want %d and %q in:\n%s", tt.name, code, err, tt.code, tt.want, truncate(body, 2000))
		}
		if strings.Contains(body, "tether_store_journal_bytes") {
			t.Errorf("%s: the cluster backend reports a local store's journal", tt.name)
		}
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// TestRunEventTTLFlag: --event-ttl is the local store's; a negative one, or
// one given with --cluster (whose API server expires Events), is refused
// before anything starts.
func TestRunEventTTLFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--store", filepath.Join(dir, "store"), "--event-ttl", "-1s"}, "--event-ttl: -1s is negative"},
		{[]string{"run", "--cluster", "--event-ttl", "2h"}, "--event-ttl: only on the local store"},
	} {
		_, stderr, code := run(t, tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("tether %s: exit %d, %q; want exit 1 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
		t.Errorf("a refused tether run created the store: %v", err)
	}
}

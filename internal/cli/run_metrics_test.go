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
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/agent/stepdone"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// sample names one series: a metric and its labels. A histogram's value is
// its sample count.
type sample struct {
	name   string
	labels map[string]string
}

func (s sample) String() string {
	var ls []string
	for k, v := range s.labels {
		ls = append(ls, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(ls)
	return s.name + "{" + strings.Join(ls, ",") + "}"
}

// scrape reads addr's /metrics over HTTP and parses it.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is s's value in fams; 0 when absent.
func (s sample) value(fams map[string]*dto.MetricFamily) float64 {
	f, ok := fams[s.name]
	if !ok {
		return 0
	}
metrics:
	for _, m := range f.GetMetric() {
		for k, v := range s.labels {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue metrics
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// metricsRun is a `tether run` on a local store, started in this process
// with its metrics on a free port, and a second store client on the same
// directory that plays the CLI's part.
type metricsRun struct {
	addr string
	dir  string
	c    client.WithWatch
	cfg  *config.Config
	log  *testsupport.SyncBuffer
}

func startMetricsRun(t *testing.T) *metricsRun {
	t.Helper()
	t.Setenv(config.HomeEnv, t.TempDir())
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "store")
	g := NewGlobalOptions()
	g.Store = dir
	buf := &testsupport.SyncBuffer{}
	log := zap.New(zap.WriteTo(buf))
	o := &runOptions{metricsAddr: "127.0.0.1:0"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.run(ctx, g, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("tether run: %v", err)
		}
	})
	r := &metricsRun{dir: dir, cfg: cfg, log: buf}
	addrLine := regexp.MustCompile(`"msg":"serving metrics","address":"([^"]+)"`)
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err // for the cleanup, which waits for it
			return false, fmt.Errorf("tether run ended: %w", err)
		default:
		}
		if m := addrLine.FindStringSubmatch(buf.String()); m != nil {
			r.addr = m[1]
		}
		return r.addr != "", nil
	})
	if err != nil {
		t.Fatalf("tether run did not start: %v\n%s", err, buf.String())
	}
	store, err := testsupport.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	r.c = store.Client()
	return r
}

func (r *metricsRun) hook(t *testing.T, name string, mutate func(*v1.Hook)) {
	t.Helper()
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.HookSpec{Goal: "metrics " + name, Steps: []v1.Step{{Name: "one"}, {Name: "two"}}},
	}
	if mutate != nil {
		mutate(h)
	}
	if err := r.c.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	r.waitHook(t, name, func(h *v1.Hook) bool { return h.Status.State == v1.HookStepPending })
}

func (r *metricsRun) waitHook(t *testing.T, name string, cond func(*v1.Hook) bool) {
	t.Helper()
	h := &v1.Hook{}
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(h), nil
	})
	if err != nil {
		t.Fatalf("hook %s: condition not reached; status %+v", name, h.Status)
	}
}

func (r *metricsRun) agent(t *testing.T, name string, e hookfsm.Event) {
	t.Helper()
	_, _, err := hookwrite.Transition(context.Background(), r.c, client.ObjectKey{Namespace: "default", Name: name},
		hookwrite.Input(hookfsm.Input{Event: e}), hookwrite.Options{Actor: "test-agent"})
	if err != nil {
		t.Fatalf("%s %s: %v", e, name, err)
	}
}

// stepDone runs `step done` in process on a Hook whose step one validates
// with `true`, as the CLI would in another process.
func (r *metricsRun) stepDone(t *testing.T, name string) {
	t.Helper()
	if err := r.validate(t, name, "true"); err != nil {
		t.Fatal(err)
	}
}

// validate begins a new Hook's step whose validation runs command, and
// runs step done on it.
func (r *metricsRun) validate(t *testing.T, name, command string) error {
	t.Helper()
	ws := t.TempDir()
	r.hook(t, name, func(h *v1.Hook) {
		h.Spec.Workspace = ws
		h.Spec.Steps[0].Validate = []v1.ValidationCommand{{Command: []string{command}}}
	})
	r.agent(t, name, hookfsm.Begin)
	_, err := stepdone.Run(context.Background(), stepdone.Options{
		Client: r.c, Key: client.ObjectKey{Namespace: "default", Name: name},
		Write: hookwrite.Options{Actor: "test-agent"}, Keys: &receipts.FileKeyManager{Dir: r.cfg.KeyDir},
	})
	return err
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"},
		{"commit", "-q", "--allow-empty", "-m", "start"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "work.txt"), []byte("work\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editStoreFile rewrites a Hook's store file as a person would: its goal,
// or a field the schema refuses.
func (r *metricsRun) editStoreFile(t *testing.T, name, from, to string) {
	t.Helper()
	path := filepath.Join(r.dir, "hooks", "default", name+".yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), from, to, 1)
	if edited == string(data) {
		t.Fatalf("%s has no %q:\n%s", path, from, data)
	}
	tmp := path + ".edit"
	if err := os.WriteFile(tmp, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestRunMetrics starts `tether run` on a local store with its metrics
// endpoint, causes each event a tether metric counts, and scrapes the
// endpoint over HTTP until every one of the event's series has moved.
func TestRunMetrics(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := startMetricsRun(t)
	ctx := context.Background()
	yes := true
	tests := []struct {
		name  string
		cause func(t *testing.T)
		moves []sample
	}{{
		name:  "a new Hook is counted by state and written by the store",
		cause: func(t *testing.T) { r.hook(t, "gauge", nil) },
		moves: []sample{
			{"tether_hooks", map[string]string{"namespace": "default", "state": "step_pending"}},
			{"tether_hook_transitions_total", map[string]string{"event": "initialize"}},
			{"tether_store_write_seconds", map[string]string{"verb": "update"}},
			{"tether_store_journal_bytes", nil},
		},
	}, {
		name: "an agent's transition in another process",
		cause: func(t *testing.T) {
			r.hook(t, "begin", nil)
			r.agent(t, "begin", hookfsm.Begin)
		},
		moves: []sample{{"tether_hook_transitions_total", map[string]string{"event": "begin"}}},
	}, {
		name: "a missed heartbeat",
		cause: func(t *testing.T) {
			r.hook(t, "stale", func(h *v1.Hook) { h.Spec.StaleAfter = &metav1.Duration{Duration: time.Second} })
			r.agent(t, "stale", hookfsm.Begin)
			r.waitHook(t, "stale", func(h *v1.Hook) bool { return h.Status.State == v1.HookRecovering })
		},
		moves: []sample{
			{"tether_stale_detections_total", nil},
			{"tether_stale_detection_delay_seconds", nil},
			{"tether_hook_transitions_total", map[string]string{"event": "interrupt"}},
		},
	}, {
		name:  "step done validates and signs",
		cause: func(t *testing.T) { r.stepDone(t, "signed") },
		moves: []sample{
			{"tether_receipts_signed_total", nil},
			{"tether_validation_duration_seconds", map[string]string{"result": "passed"}},
			{"tether_hook_transitions_total", map[string]string{"event": "pass"}},
		},
	}, {
		name: "a failed validation",
		cause: func(t *testing.T) {
			if err := r.validate(t, "failing", "false"); err == nil {
				t.Fatal("step done of a failing validation reported no failure")
			}
		},
		moves: []sample{
			{"tether_validation_duration_seconds", map[string]string{"result": "failed"}},
			{"tether_hook_transitions_total", map[string]string{"event": "fail_validation"}},
		},
	}, {
		name: "a tampered receipt",
		cause: func(t *testing.T) {
			r.stepDone(t, "tampered")
			r.waitHook(t, "tampered", func(h *v1.Hook) bool { return h.Status.State == v1.HookStepPending })
			// The reconciler may write the Hook meanwhile: tamper with what is stored then.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				h := &v1.Hook{}
				if err := r.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "tampered"}, h); err != nil {
					return err
				}
				h.Status.Steps[0].Receipts[0].DurationMillis += 1000
				return r.c.Status().Update(ctx, h)
			})
			if err != nil {
				t.Fatal(err)
			}
		},
		moves: []sample{{"tether_receipt_verification_failures_total", nil}},
	}, {
		name: "a checkpoint taken by the CLI",
		cause: func(t *testing.T) {
			ws := gitRepo(t)
			r.hook(t, "checkpointed", func(h *v1.Hook) { h.Spec.Workspace = ws })
			if _, err := checkpoint.Take(ctx, r.c, client.ObjectKey{Namespace: "default", Name: "checkpointed"},
				checkpoint.Request{Trigger: v1.TriggerManual}); err != nil {
				t.Fatal(err)
			}
		},
		moves: []sample{
			{"tether_checkpoints_total", map[string]string{"trigger": "manual"}},
			{"tether_checkpoint_capture_seconds", map[string]string{"trigger": "manual"}},
		},
	}, {
		name: "a Worker crashes holding a Hook",
		cause: func(t *testing.T) {
			r.hook(t, "held", func(h *v1.Hook) { h.Spec.Assignee = "crasher" })
			w := &v1.Worker{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "crasher"},
				Spec: v1.WorkerSpec{
					Command:              []string{"sh", "-c", "sleep 0.3; exit 3"},
					Restart:              v1.RestartPolicy{Auto: true, MaxCrashes: 2},
					ClearAssigneeOnCrash: &yes,
				},
			}
			if err := r.c.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
		},
		moves: []sample{
			{"tether_worker_crashes_total", map[string]string{"reason": "Exited"}},
			{"tether_worker_restarts_total", nil},
			{"tether_worker_restart_latency_seconds", nil},
			{"tether_assignee_cleared_total", nil},
		},
	}, {
		name: "a valid hand edit",
		cause: func(t *testing.T) {
			r.hook(t, "edited", nil)
			r.editStoreFile(t, "edited", "goal: metrics edited", "goal: edited by hand")
		},
		moves: []sample{{"tether_store_hand_edits_total", map[string]string{"result": "adopted"}}},
	}, {
		name: "an invalid hand edit",
		cause: func(t *testing.T) {
			r.hook(t, "refused", nil)
			r.editStoreFile(t, "refused", "goal: metrics refused", "goal: metrics refused\n  noSuchField: 1")
		},
		moves: []sample{{"tether_store_hand_edits_total", map[string]string{"result": "refused"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := scrape(t, r.addr)
			tt.cause(t)
			var after map[string]*dto.MetricFamily
			err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				after = scrape(t, r.addr)
				for _, s := range tt.moves {
					if s.value(after) <= s.value(before) {
						return false, nil
					}
				}
				return true, nil
			})
			if err != nil {
				for _, s := range tt.moves {
					if s.value(after) <= s.value(before) {
						t.Errorf("%s did not move: %v before, %v after", s, s.value(before), s.value(after))
					}
				}
			}
		})
	}
	t.Run("controller-runtime's own metrics are served beside", func(t *testing.T) {
		s := sample{"controller_runtime_reconcile_total", map[string]string{"controller": "hook", "result": "success"}}
		if v := s.value(scrape(t, r.addr)); v == 0 {
			t.Errorf("%s = 0, want the Hook reconciler's reconciles", s)
		}
	})
}

// TestRunMetricsPortBusy: a metrics address that cannot be bound is logged
// loudly, and the local backend is built all the same, so that reconciling
// goes on without metrics.
func TestRunMetricsPortBusy(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	t.Setenv(config.HomeEnv, t.TempDir())
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	g := NewGlobalOptions()
	g.Store = t.TempDir()
	buf := &testsupport.SyncBuffer{}
	o := &runOptions{metricsAddr: busy.Addr().String()}
	mgr, _, err := o.localBackend(context.Background(), g, s, cfg, zap.New(zap.WriteTo(buf)))
	if err != nil {
		t.Fatalf("a busy metrics port stopped tether run: %v", err)
	}
	if c, ok := mgr.(interface{ Close() error }); ok {
		defer func() { _ = c.Close() }()
	}
	var line struct {
		Level, Msg, Address string
	}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if err := json.Unmarshal([]byte(l), &line); err == nil && strings.HasPrefix(line.Msg, "NOT SERVING METRICS") {
			break
		}
		line.Msg = ""
	}
	if line.Level != "error" || line.Address != busy.Addr().String() {
		t.Errorf("no error log naming %s and saying metrics are off; log:\n%s", busy.Addr(), buf.String())
	}
}

// TestRunServesMetricsByDefault: without --metrics-bind-address, tether run
// on the local store serves metrics on metrics.DefaultLocalAddress, which is
// on the loopback interface only. The test skips when another process holds
// the default port, as tether run itself then goes on without metrics.
func TestRunServesMetricsByDefault(t *testing.T) {
	if host, _, err := net.SplitHostPort(metrics.DefaultLocalAddress); err != nil || host != "127.0.0.1" {
		t.Fatalf("default metrics address %s, want one on 127.0.0.1 (%v)", metrics.DefaultLocalAddress, err)
	}
	if def := newRunCommand(NewGlobalOptions()).Flags().Lookup("metrics-bind-address").DefValue; def != "" {
		t.Fatalf("--metrics-bind-address defaults to %q, want empty: the backend chooses", def)
	}
	probe, err := net.Listen("tcp", metrics.DefaultLocalAddress)
	if err != nil {
		t.Skipf("the default metrics port is busy: %v", err)
	}
	_ = probe.Close()

	t.Setenv(config.HomeEnv, t.TempDir())
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	g := NewGlobalOptions()
	g.Store = t.TempDir()
	buf := &testsupport.SyncBuffer{}
	mgr, _, err := (&runOptions{}).localBackend(context.Background(), g, s, cfg, zap.New(zap.WriteTo(buf)))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := mgr.(interface{ Close() error }); ok {
		defer func() { _ = c.Close() }()
	}
	if strings.Contains(buf.String(), "NOT SERVING METRICS") {
		t.Skipf("another process took the default metrics port meanwhile:\n%s", buf.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("tether run's manager: %v", err)
		}
	}()
	var body string
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get("http://" + metrics.DefaultLocalAddress + "/metrics")
		if err != nil {
			return false, nil
		}
		defer func() { _ = resp.Body.Close() }()
		var sb strings.Builder
		if _, err := io.Copy(&sb, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
			return false, nil
		}
		body = sb.String()
		return strings.Contains(body, "tether_store_journal_bytes"), nil
	})
	if err != nil {
		t.Fatalf("no tether metrics on http://%s/metrics: %v\nlast body:\n%.2000s\nlog:\n%s", metrics.DefaultLocalAddress, err, body, buf.String())
	}
}

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
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// hookWith is a Hook whose history holds events, newest last, after
// dropped entries that were trimmed, and whose one step holds receipts.
func hookWith(dropped int64, events []string, receipts ...v1.Receipt) *v1.Hook {
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default", UID: "uid-1"}}
	h.Status.HistoryDropped = dropped
	for _, e := range events {
		h.Status.History = append(h.Status.History, v1.HistoryEntry{Event: e})
	}
	h.Status.Steps = []v1.StepResult{{Name: "one", Receipts: receipts}}
	return h
}

func receipt(start int64, exit int32, signed bool) v1.Receipt {
	r := v1.Receipt{
		Command: []string{"make", "test"}, ExitCode: exit, DurationMillis: 1500,
		StartedAt: metav1.Unix(start, 0), FinishedAt: metav1.Unix(start+1, 0),
	}
	if signed {
		r.Envelope = &v1.Envelope{Signatures: []v1.Signature{{Sig: "c2ln"}}}
	}
	return r
}

// repeat is n copies of e.
func repeat(e string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = e
	}
	return out
}

// TestCountHook checks what one observed change of a Hook adds to the
// transition, receipt and validation counters.
func TestCountHook(t *testing.T) {
	full := repeat("heartbeat", v1.HookHistoryLimit)
	tests := []struct {
		name                          string
		old, new                      *v1.Hook
		begin, pass, other, heartbeat float64
		signed, passed, failed        float64
	}{{
		name:  "first sight of a Hook created while watching counts everything",
		new:   hookWith(0, []string{"initialize", "begin"}),
		begin: 1,
	}, {
		name:  "entries appended",
		old:   hookWith(0, []string{"initialize"}),
		new:   hookWith(0, []string{"initialize", "begin", "validate", "pass"}),
		begin: 1, pass: 1,
	}, {
		name:      "a full history that trims its oldest entries still counts the new ones",
		old:       hookWith(5, full),
		new:       hookWith(7, append(full[2:], "begin", "heartbeat")),
		begin:     1,
		heartbeat: 1,
	}, {
		name: "no new entry, a status write of other fields",
		old:  hookWith(0, []string{"initialize", "begin"}),
		new:  hookWith(0, []string{"initialize", "begin"}),
	}, {
		name: "a history shortened by hand counts nothing",
		old:  hookWith(0, []string{"initialize", "begin"}),
		new:  hookWith(0, []string{"initialize"}),
	}, {
		name:  "an event no state machine records is counted as other",
		old:   hookWith(0, nil),
		new:   hookWith(0, []string{"typed-by-hand"}),
		other: 1,
	}, {
		name:   "new receipts: signed, passed and failed",
		old:    hookWith(0, nil, receipt(100, 0, true)),
		new:    hookWith(0, nil, receipt(100, 0, true), receipt(200, 0, true), receipt(300, 2, false)),
		signed: 1, passed: 1, failed: 1,
	}, {
		name:   "a step's receipts replaced by a new validation run",
		old:    hookWith(0, nil, receipt(100, 1, true)),
		new:    hookWith(0, nil, receipt(400, 0, true)),
		signed: 1, passed: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counters := []struct {
				name string
				get  func() float64
				want float64
			}{
				{"begin", func() float64 { return testutil.ToFloat64(HookTransitions.WithLabelValues("begin")) }, tt.begin},
				{"pass", func() float64 { return testutil.ToFloat64(HookTransitions.WithLabelValues("pass")) }, tt.pass},
				{"heartbeat", func() float64 { return testutil.ToFloat64(HookTransitions.WithLabelValues("heartbeat")) }, tt.heartbeat},
				{"other", func() float64 { return testutil.ToFloat64(HookTransitions.WithLabelValues(OtherLabel)) }, tt.other},
				{"signed", func() float64 { return testutil.ToFloat64(ReceiptsSigned) }, tt.signed},
				{"passed", func() float64 { return float64(histogramCount(t, ValidationPassed)) }, tt.passed},
				{"failed", func() float64 { return float64(histogramCount(t, ValidationFailed)) }, tt.failed},
			}
			before := make([]float64, len(counters))
			for i, c := range counters {
				before[i] = c.get()
			}
			countHook(tt.old, tt.new)
			for i, c := range counters {
				if got := c.get() - before[i]; got != c.want {
					t.Errorf("%s moved by %v, want %v", c.name, got, c.want)
				}
			}
		})
	}
}

// histogram reads the count and sum of one series of a histogram.
func histogram(t *testing.T, h *prometheus.HistogramVec, label string) (uint64, float64) {
	t.Helper()
	m := &dto.Metric{}
	if err := h.WithLabelValues(label).(prometheus.Metric).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

func histogramCount(t *testing.T, result string) uint64 {
	t.Helper()
	n, _ := histogram(t, ValidationDuration, result)
	return n
}

// TestCountVerificationFailures: a failure is counted once however often
// the evidence is checked; edited evidence is a new failure; evidence that
// holds is never counted.
func TestCountVerificationFailures(t *testing.T) {
	bad := &receipts.Failure{Step: "build", StepIndex: 0, Receipt: 0, Kind: receipts.FailureExitCode, Message: "exit code 1 in a passed step"}
	report := func(h *v1.Hook) *receipts.Report {
		rep := &receipts.Report{Steps: []receipts.StepReport{{Index: 0, Name: "build"}}}
		if h.Status.Steps[0].Receipts[0].ExitCode != 0 {
			rep.Steps[0].Failures = []*receipts.Failure{bad}
		}
		return rep
	}
	evidence := CountVerificationFailures(report)
	withReceipt := func(r v1.Receipt) *v1.Hook {
		h := hookWith(0, nil)
		h.Status.Steps = []v1.StepResult{{Name: "build", Receipts: []v1.Receipt{r}}}
		return h
	}
	failing := receipt(100, 0, true)
	failing.ExitCode = 1
	edited := failing
	edited.DurationMillis++
	good := receipt(200, 0, true)
	tests := []struct {
		name string
		h    *v1.Hook
		want float64
	}{
		{"a failing receipt", withReceipt(failing), 1},
		{"the same evidence checked again", withReceipt(failing), 0},
		{"the receipt edited again", withReceipt(edited), 1},
		{"evidence that holds", withReceipt(good), 0},
	}
	for _, tt := range tests {
		before := testutil.ToFloat64(ReceiptVerificationFailures)
		if rep := evidence(tt.h); rep == nil || len(rep.Steps) != 1 {
			t.Fatalf("%s: the wrapped evidence's report was not passed through: %+v", tt.name, rep)
		}
		if got := testutil.ToFloat64(ReceiptVerificationFailures) - before; got != tt.want {
			t.Errorf("%s: counted %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCheckpointAdded counts a Checkpoint created while watching, with its
// recorded capture time, and not the ones the first list finds.
func TestCheckpointAdded(t *testing.T) {
	cp := &v1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Name: "h-1", Namespace: "default",
			Annotations: map[string]string{v1.CaptureDurationAnnotation: (1500 * time.Millisecond).String()}},
		Spec: v1.CheckpointSpec{HookName: "h", Trigger: v1.TriggerGitCommit},
	}
	count := func() float64 { return testutil.ToFloat64(Checkpoints.WithLabelValues("git_commit")) }
	before := count()
	checkpointAdded(cp, true)
	if got := count() - before; got != 0 {
		t.Errorf("a Checkpoint of the initial list counted %v times", got)
	}
	n0, sum0 := histogram(t, CheckpointCapture, "git_commit")
	checkpointAdded(cp, false)
	if got := count() - before; got != 1 {
		t.Errorf("a new Checkpoint counted %v times, want 1", got)
	}
	n1, sum1 := histogram(t, CheckpointCapture, "git_commit")
	if n1-n0 != 1 || sum1-sum0 != 1.5 {
		t.Errorf("capture time: %d observations adding %v s, want 1 adding 1.5 s", n1-n0, sum1-sum0)
	}
}

// TestHookGaugeCountsStates: tether_hooks counts the Hooks of each
// namespace by state, every state of a namespace reported (zeros
// included), alike whether it reads the informer's store or a reader.
func TestHookGaugeCountsStates(t *testing.T) {
	hooks := []*v1.Hook{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Status: v1.HookStatus{State: v1.HookStepRunning}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}, Status: v1.HookStatus{State: v1.HookStepRunning}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a"}, Status: v1.HookStatus{State: v1.HookCompleted}},
	}
	want := map[[2]string]float64{
		{"default", string(v1.HookStepRunning)}:  2,
		{"default", string(v1.HookInitializing)}: 1,
		{"team", string(v1.HookCompleted)}:       1,
	}
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	builder := fake.NewClientBuilder().WithScheme(testScheme(t))
	for _, h := range hooks {
		if err := store.Add(h); err != nil {
			t.Fatal(err)
		}
		builder = builder.WithObjects(h.DeepCopy())
	}
	for _, tc := range []struct {
		name string
		src  *hookSource
	}{
		{"the informer's store", &hookSource{store: store}},
		{"a reader", &hookSource{reader: builder.Build()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &hookCollector{}
			c.source.Store(tc.src)
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			families, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[[2]string]float64{}
			series := 0
			for _, f := range families {
				for _, m := range f.GetMetric() {
					series++
					labels := map[string]string{}
					for _, l := range m.GetLabel() {
						labels[l.GetName()] = l.GetValue()
					}
					if v := m.GetGauge().GetValue(); v != 0 {
						got[[2]string{labels["namespace"], labels["state"]}] = v
					}
				}
			}
			if series != 2*len(hookStates) {
				t.Errorf("%d series, want every state of 2 namespaces (%d)", series, 2*len(hookStates))
			}
			if len(got) != len(want) {
				t.Errorf("non-zero series %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("tether_hooks%v = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

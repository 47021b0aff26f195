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

package receipts_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

var (
	vet   = []string{"go", "vet", "./..."}
	gotst = []string{"go", "test", "./..."}
	doc   = []string{"test", "-s", "DOC.md"}
)

func commands(argvs ...[]string) []v1.ValidationCommand {
	out := make([]v1.ValidationCommand, len(argvs))
	for i, a := range argvs {
		out[i] = v1.ValidationCommand{Command: a}
	}
	return out
}

// run is the receipts of one validation run of step, signed by s: one per
// exit code, for the step's commands in order.
func run(t testing.TB, s receipts.ReceiptSigner, hook *v1.Hook, step string, attempt int32, exits ...int32) []v1.Receipt {
	t.Helper()
	var validate []v1.ValidationCommand
	for i := range hook.Spec.Steps {
		if hook.Spec.Steps[i].Name == step {
			validate = hook.Spec.Steps[i].Validate
		}
	}
	rs := make([]v1.Receipt, len(exits))
	for i, code := range exits {
		rs[i] = testReceipt()
		rs[i].Command, rs[i].ExitCode, rs[i].Attempt = validate[i].Command, code, attempt
		rs[i].StdoutSHA256 = strings.Repeat(string(rune('a'+i)), 64)
	}
	if err := receipts.SignRun(s, hook, step, validate, rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// signV1 signs rs as a receipt of version 1 did, without a place in its run.
func signV1(t *testing.T, s receipts.ReceiptSigner, hook *v1.Hook, step string, rs []v1.Receipt) {
	t.Helper()
	for i := range rs {
		st := receipts.StatementFor(hook, step, receipts.Position{Validate: [][]string{rs[i].Command}}, &rs[i])
		st.PredicateType = receipts.PredicateTypeV1
		st.Predicate.CommandIndex, st.Predicate.CommandCount, st.Predicate.ValidateSHA256 = nil, nil, ""
		payload, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		sig, _ := s.Sign(receipts.PAE(receipts.PayloadType, payload))
		rs[i].Envelope = &v1.Envelope{PayloadType: receipts.PayloadType, Payload: base64.StdEncoding.EncodeToString(payload),
			Signatures: []v1.Signature{{KeyID: s.KeyID(), Sig: base64.StdEncoding.EncodeToString(sig)}}}
	}
}

func claimHook(name, uid string) *v1.Hook {
	return &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid)},
		Spec: v1.HookSpec{Goal: "g", MaxAttempts: 3, Steps: []v1.Step{
			{Name: "plan"},
			{Name: "build", Validate: commands(vet, gotst)},
			{Name: "docs", Validate: commands(doc)},
		}},
	}
}

// fixture is a completed Hook signed by its key, a failed run of its
// build step, and another Hook's receipts of the same steps.
type fixture struct {
	hook                  *v1.Hook
	pub                   ed25519.PublicKey
	failedBuild, failDocs []v1.Receipt
	otherBuild            []v1.Receipt
	signer                receipts.ReceiptSigner
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	km := newManager(t)
	ctx := context.Background()
	h := claimHook("task", "11111111-1111-4111-8111-111111111111")
	s, err := km.Signer(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := km.PublicKey(ctx, h)
	done := metav1.NewTime(time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC))
	h.Status = v1.HookStatus{
		State:       v1.HookCompleted,
		CurrentStep: &v1.CurrentStep{Index: 2, Name: "docs", Attempt: 1},
		Steps: []v1.StepResult{
			{Name: "plan", Phase: v1.StepPassed, Attempts: 1, CompletedAt: &done},
			{Name: "build", Phase: v1.StepPassed, Attempts: 2, CompletedAt: &done, Receipts: run(t, s, h, "build", 2, 0, 0)},
			{Name: "docs", Phase: v1.StepPassed, Attempts: 1, CompletedAt: &done, Receipts: run(t, s, h, "docs", 1, 0)},
		},
	}
	other := claimHook("other", "22222222-2222-4222-8222-222222222222")
	otherSigner, err := km.Signer(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{
		hook: h, pub: pub, signer: s,
		failedBuild: run(t, s, h, "build", 1, 0, 1),
		failDocs:    run(t, s, h, "docs", 3, 1),
		otherBuild:  run(t, otherSigner, other, "build", 2, 0, 0),
	}
}

// TestCheckWholeClaim edits a completed Hook's status as a person or an
// agent editing the store could, and checks each step's verdict and the
// kinds of failure named.
func TestCheckWholeClaim(t *testing.T) {
	f := newFixture(t)
	const build, docs = 1, 2
	type want struct {
		verdicts [3]receipts.Verdict
		kinds    []receipts.FailureKind
		text     string // in the failures or notes
	}
	ok := [3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictVerified, receipts.VerdictVerified}
	invalidBuild := [3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictInvalid, receipts.VerdictVerified}
	invalidDocs := [3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictVerified, receipts.VerdictInvalid}
	tests := []struct {
		name  string
		edit  func(h *v1.Hook)
		noKey bool
		want  want
	}{
		{"untouched", func(*v1.Hook) {}, false, want{ok, nil, ""}},
		{"untouched, no key", func(*v1.Hook) {}, true, want{[3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictUnverified, receipts.VerdictUnverified}, nil, ""}},
		{"forged pass: a failed last attempt marked passed", func(h *v1.Hook) {
			h.Status.Steps[docs].Receipts, h.Status.Steps[docs].Attempts = clone(f.failDocs), 3
		}, false, want{invalidDocs, []receipts.FailureKind{receipts.FailureExitCode}, "exit code 1 in a passed step"}},
		{"forged pass, seen without a key", func(h *v1.Hook) {
			h.Status.Steps[docs].Receipts, h.Status.Steps[docs].Attempts = clone(f.failDocs), 3
		}, true, want{[3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictUnverified, receipts.VerdictInvalid}, []receipts.FailureKind{receipts.FailureExitCode}, "exit code 1"}},
		{"forged pass: an earlier failed run kept", func(h *v1.Hook) { h.Status.Steps[build].Receipts = clone(f.failedBuild) },
			false, want{invalidBuild, []receipts.FailureKind{receipts.FailureOtherAttempt, receipts.FailureOtherAttempt, receipts.FailureExitCode}, "the step passed in attempt 2"}},
		{"forged exit code field", func(h *v1.Hook) {
			h.Status.Steps[docs].Receipts, h.Status.Steps[docs].Attempts = clone(f.failDocs), 3
			h.Status.Steps[docs].Receipts[0].ExitCode = 0
		}, false, want{invalidDocs, []receipts.FailureKind{receipts.FailureSignature}, "exitCode 0 differs from the signed 1"}},
		{"swapped between steps", func(h *v1.Hook) {
			b, d := &h.Status.Steps[build].Receipts[0], &h.Status.Steps[docs].Receipts[0]
			*b, *d = *d, *b
		}, false, want{[3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictInvalid, receipts.VerdictInvalid},
			[]receipts.FailureKind{receipts.FailureOtherStep, receipts.FailureMissing, receipts.FailureOtherStep, receipts.FailureMissing}, `receipt of step "docs" stored under step "build"`}},
		{"swapped in from another hook", func(h *v1.Hook) { h.Status.Steps[build].Receipts = clone(f.otherBuild) },
			false, want{invalidBuild, []receipts.FailureKind{receipts.FailureOtherHook, receipts.FailureOtherHook, receipts.FailureMissing}, "names hook default/other"}},
		{"duplicated", func(h *v1.Hook) {
			rs := h.Status.Steps[build].Receipts
			h.Status.Steps[build].Receipts = []v1.Receipt{rs[0], rs[0], rs[1]}
		}, false, want{invalidBuild, []receipts.FailureKind{receipts.FailureDuplicate}, "a second receipt of command 1 of 2 (go vet ./...)"}},
		{"duplicated in place of a dropped one", func(h *v1.Hook) {
			rs := h.Status.Steps[build].Receipts
			h.Status.Steps[build].Receipts = []v1.Receipt{rs[0], rs[0]}
		}, false, want{invalidBuild, []receipts.FailureKind{receipts.FailureDuplicate, receipts.FailureMissing}, "no receipt of validate command 2 of 2 (go test ./...)"}},
		{"dropped", func(h *v1.Hook) { h.Status.Steps[build].Receipts = h.Status.Steps[build].Receipts[:1] },
			false, want{invalidBuild, []receipts.FailureKind{receipts.FailureMissing}, "no receipt of validate command 2 of 2"}},
		{"all dropped", func(h *v1.Hook) { h.Status.Steps[build].Receipts = nil },
			false, want{invalidBuild, []receipts.FailureKind{receipts.FailureMissing}, "passed with no receipts, but spec.steps[1].validate declares 2 commands"}},
		{"reordered", func(h *v1.Hook) { slices.Reverse(h.Status.Steps[build].Receipts) },
			false, want{invalidBuild, []receipts.FailureKind{receipts.FailureOrder}, "stored after the receipt of command 2"}},
		{"completed with a step not passed", func(h *v1.Hook) { h.Status.Steps[0].Phase = v1.StepPending },
			false, want{[3]receipts.Verdict{receipts.VerdictInvalid, receipts.VerdictVerified, receipts.VerdictVerified}, []receipts.FailureKind{receipts.FailureNotPassed}, "the hook is completed, but this step is Pending"}},
		{"validate commands edited since", func(h *v1.Hook) { h.Spec.Steps[build].Validate = commands(gotst) },
			false, want{ok, nil, "differ from the 1 the spec declares now"}},
		{"validate commands added to a step that passed without", func(h *v1.Hook) { h.Spec.Steps[0].Validate = commands(vet) },
			false, want{[3]receipts.Verdict{receipts.VerdictInvalid, receipts.VerdictVerified, receipts.VerdictVerified}, []receipts.FailureKind{receipts.FailureMissing}, "declares 1 commands"}},
		{"version 1 receipts", func(h *v1.Hook) { signV1(t, f.signer, h, "build", h.Status.Steps[build].Receipts) },
			false, want{ok, nil, "version 1 receipts sign no place in their run"}},
		{"version 1 receipts reordered", func(h *v1.Hook) {
			signV1(t, f.signer, h, "build", h.Status.Steps[build].Receipts)
			slices.Reverse(h.Status.Steps[build].Receipts)
		}, false, want{invalidBuild, []receipts.FailureKind{receipts.FailureOrder}, "stored after"}},
		{"version 1 receipts duplicated", func(h *v1.Hook) {
			signV1(t, f.signer, h, "build", h.Status.Steps[build].Receipts)
			h.Status.Steps[build].Receipts[1] = h.Status.Steps[build].Receipts[0]
		}, false, want{invalidBuild, []receipts.FailureKind{receipts.FailureDuplicate, receipts.FailureMissing}, "a second receipt"}},
		{"a failed step's run, untouched", func(h *v1.Hook) {
			h.Status.State = v1.HookFailed
			h.Status.Steps[docs].Phase, h.Status.Steps[docs].Attempts, h.Status.Steps[docs].Receipts = v1.StepFailed, 3, clone(f.failDocs)
		}, false, want{[3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictVerified, receipts.VerdictNotPassed}, nil, ""}},
		{"a running step's earlier run reordered", func(h *v1.Hook) {
			h.Status.State = v1.HookStepRunning
			h.Status.Steps[build].Phase, h.Status.Steps[build].Receipts = v1.StepRunning, clone(f.failedBuild)
			slices.Reverse(h.Status.Steps[build].Receipts)
			h.Status.Steps[docs] = v1.StepResult{Name: "docs", Phase: v1.StepPending}
		}, false, want{[3]receipts.Verdict{receipts.VerdictNoValidation, receipts.VerdictInvalid, receipts.VerdictNotPassed}, []receipts.FailureKind{receipts.FailureOrder}, "stored after"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := f.hook.DeepCopy()
			tt.edit(h)
			var observed []receipts.FailureKind
			defer receipts.ObserveFailures(func(fl *receipts.Failure) { observed = append(observed, fl.Kind) })()
			pub := f.pub
			if tt.noKey {
				pub = nil
			}
			rep := receipts.Check(h, pub, nil)
			var verdicts [3]receipts.Verdict
			for i := range rep.Steps {
				verdicts[i] = rep.Steps[i].Verdict
			}
			var kinds []receipts.FailureKind
			var text []string
			for _, fl := range rep.Failures() {
				kinds = append(kinds, fl.Kind)
				text = append(text, fl.Error())
				if !strings.Contains(fl.Error(), `step "`+fl.Step+`"`) {
					t.Errorf("failure %q does not name its step", fl.Error())
				}
			}
			for i := range rep.Steps {
				text = append(text, rep.Steps[i].Notes...)
			}
			if verdicts != tt.want.verdicts {
				t.Errorf("verdicts %q, want %q\n%s", verdicts, tt.want.verdicts, strings.Join(text, "\n"))
			}
			if !slices.Equal(kinds, tt.want.kinds) {
				t.Errorf("failure kinds %q, want %q\n%s", kinds, tt.want.kinds, strings.Join(text, "\n"))
			}
			if !slices.Equal(observed, kinds) {
				t.Errorf("the observer saw %q, the report holds %q", observed, kinds)
			}
			if rep.OK() != (len(tt.want.kinds) == 0) {
				t.Errorf("OK() = %v with failures %q", rep.OK(), kinds)
			}
			if joined := strings.Join(text, "\n"); !strings.Contains(joined, tt.want.text) {
				t.Errorf("the failures and notes do not say %q:\n%s", tt.want.text, joined)
			}
			if tt.noKey != (rep.KeyErr != nil) || (tt.noKey && !errors.Is(rep.KeyErr, receipts.ErrNoKey)) {
				t.Errorf("KeyErr = %v", rep.KeyErr)
			}
		})
	}
}

// TestCheckHookWithKeyManager derives the key through a KeyManager, and
// without one says why the signatures were not checked.
func TestCheckHookWithKeyManager(t *testing.T) {
	km := newManager(t)
	h := claimHook("task", "33333333-3333-4333-8333-333333333333")
	s, err := km.Signer(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	h.Status.Steps = []v1.StepResult{{Name: "build", Phase: v1.StepPassed, Attempts: 1, Receipts: run(t, s, h, "build", 1, 0, 0)}}
	rep := receipts.CheckHook(context.Background(), h, km)
	if rep.KeyErr != nil || rep.Steps[0].Verdict != receipts.VerdictVerified {
		t.Fatalf("with the key: %v, %s", rep.KeyErr, rep.Steps[0].Describe())
	}
	if got, want := rep.Steps[0].Describe(), "verified: 2 of 2 validate commands, attempt 1"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if st := rep.Steps[0].Receipts[0].Status(rep.KeyErr); st != "verified" {
		t.Errorf("receipt status %q", st)
	}
	rep = receipts.CheckHook(context.Background(), h, newManager(t))
	if !errors.Is(rep.KeyErr, receipts.ErrNoKey) || rep.Steps[0].Verdict != receipts.VerdictUnverified {
		t.Fatalf("without a key: %v, %s", rep.KeyErr, rep.Steps[0].Verdict)
	}
	if st := rep.Steps[0].Receipts[0].Status(rep.KeyErr); st != "signed, not verified (no key available here)" {
		t.Errorf("receipt status without a key %q", st)
	}
}

// TestSignRefusesAWrongPosition: a receipt signs only the command at its
// place in the run.
func TestSignRefusesAWrongPosition(t *testing.T) {
	km := newManager(t)
	h := testHook()
	s, err := km.Signer(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	r := testReceipt()
	for _, pos := range []receipts.Position{{Index: 1, Validate: [][]string{r.Command}}, {Index: 0, Validate: [][]string{{"other"}}}, {Index: 0}} {
		if err := receipts.Sign(s, h, "build", pos, &r); err == nil {
			t.Errorf("Sign at %+v succeeded", pos)
		}
	}
}

func TestValidateDigest(t *testing.T) {
	// The documented encoding: compact JSON without HTML escaping.
	got := receipts.ValidateDigest([][]string{{"sh", "-c", "a && b"}})
	want := receipts.ValidateDigest([][]string{{"sh", "-c", "a && b"}})
	if got != want || len(got) != 64 {
		t.Fatalf("digest %q", got)
	}
	const doc = `[["sh","-c","a && b"]]`
	if sum := sha256Hex(doc); got != sum {
		t.Errorf("ValidateDigest = %s, want sha256(%s) = %s", got, doc, sum)
	}
	if receipts.ValidateDigest(nil) != sha256Hex("[]") {
		t.Error("no commands do not hash as []")
	}
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func clone(rs []v1.Receipt) []v1.Receipt {
	out := make([]v1.Receipt, len(rs))
	for i := range rs {
		rs[i].DeepCopyInto(&out[i])
	}
	return out
}

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

package controllers

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// TestReconcileReceipts drives the ReceiptsVerified phase through a
// sequence of reconciles of one Hook, with a stubbed verification: it
// verifies only when the evidence changed, flags a failure with one
// Warning Event, and retries a key it could not read.
func TestReconcileReceipts(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	verified := &receipts.Report{Steps: []receipts.StepReport{{Name: "one", Phase: v1.StepPassed, Verdict: receipts.VerdictVerified, Receipts: make([]receipts.ReceiptReport, 2)}}}
	forged := &receipts.Report{Steps: []receipts.StepReport{{Name: "one", Failures: []*receipts.Failure{
		{Hook: "default/task", Step: "one", Receipt: 0, Kind: receipts.FailureSignature, Message: "the signature does not verify"},
	}}}}
	noKey := &receipts.Report{KeyErr: fmt.Errorf("%w: Secret default/tether-receipt-key does not exist", receipts.ErrNoKey), Steps: verified.Steps}
	unavailable := &receipts.Report{KeyErr: errors.New("reading the receipt key Secret: connection refused"), Steps: verified.Steps}

	type reconcile struct {
		name string
		// steps is how many receipts the Hook's one step holds; -1 for no
		// step result at all.
		receipts int
		report   *receipts.Report
		// wantChecks is whether the evidence is verified (not memoized).
		wantCheck   bool
		wantStatus  metav1.ConditionStatus // "" for no condition
		wantReason  string
		wantEvent   bool
		wantRequeue bool
	}
	steps := []reconcile{
		{name: "no step results", receipts: -1, report: verified},
		{name: "a step not passed, no receipts", receipts: 0, report: verified},
		{name: "first receipts", receipts: 2, report: verified, wantCheck: true, wantStatus: metav1.ConditionTrue, wantReason: ReasonReceiptsVerified},
		{name: "heartbeat, same receipts", receipts: 2, report: forged, wantStatus: metav1.ConditionTrue, wantReason: ReasonReceiptsVerified},
		{name: "forged", receipts: 3, report: forged, wantCheck: true, wantStatus: metav1.ConditionFalse, wantReason: ReasonReceiptsInvalid, wantEvent: true},
		{name: "forged, seen", receipts: 3, report: verified, wantStatus: metav1.ConditionFalse, wantReason: ReasonReceiptsInvalid},
		{name: "key unreadable", receipts: 4, report: unavailable, wantCheck: true, wantStatus: metav1.ConditionUnknown, wantReason: ReasonReceiptKeyUnavailable, wantRequeue: true},
		{name: "key unreadable is retried", receipts: 4, report: noKey, wantCheck: true, wantStatus: metav1.ConditionUnknown, wantReason: ReasonNoReceiptKey},
		{name: "forged again after others", receipts: 5, report: forged, wantCheck: true, wantStatus: metav1.ConditionFalse, wantReason: ReasonReceiptsInvalid, wantEvent: true},
	}
	var report *receipts.Report
	checks := 0
	r := &HookReconciler{Evidence: func(*v1.Hook) *receipts.Report { checks++; return report }}
	hook := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task", UID: "u1"}}
	for _, step := range steps {
		hook.Status.Steps = nil
		switch {
		case step.receipts == 0:
			hook.Status.Steps = []v1.StepResult{{Name: "one", Phase: v1.StepRunning}}
		case step.receipts > 0:
			hook.Status.Steps = []v1.StepResult{{Name: "one", Phase: v1.StepPassed, Receipts: make([]v1.Receipt, step.receipts)}}
		}
		report, checks = step.report, 0
		s := &hookScope{hook: hook, orig: hook.Status.DeepCopy(), now: now}
		if err := r.reconcileReceipts(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := checks == 1; got != step.wantCheck {
			t.Errorf("%s: verified %d times, want a verification: %v", step.name, checks, step.wantCheck)
		}
		cond := meta.FindStatusCondition(hook.Status.Conditions, ConditionReceiptsVerified)
		switch {
		case step.wantStatus == "" && cond != nil:
			t.Errorf("%s: condition %+v, want none", step.name, cond)
		case step.wantStatus != "" && (cond == nil || cond.Status != step.wantStatus || cond.Reason != step.wantReason):
			t.Errorf("%s: condition %+v, want %s %s", step.name, cond, step.wantStatus, step.wantReason)
		}
		events := 0
		for _, e := range s.events {
			if e.Type != corev1.EventTypeWarning || e.Reason != EventReceiptVerificationFailed || !strings.Contains(e.Note, "status.steps[0].receipts[0]") {
				t.Errorf("%s: event %+v", step.name, e)
			}
			events++
		}
		if got := events == 1; got != step.wantEvent || events > 1 {
			t.Errorf("%s: %d Events, want one: %v", step.name, events, step.wantEvent)
		}
		if got := !s.requeueAt.IsZero(); got != step.wantRequeue {
			t.Errorf("%s: requeue at %v, want a requeue: %v", step.name, s.requeueAt, step.wantRequeue)
		}
	}
}

// TestRecoveryFileSharesTheReconcilesVerification checks that the
// recovery file of a reconcile renders the verification its
// ReceiptsVerified phase made, instead of verifying the same receipts
// again, and verifies whenever that would not be the same evidence: no
// verification this reconcile (the verdict was memoized), evidence changed
// since, or another Hook.
func TestRecoveryFileSharesTheReconcilesVerification(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	passed := func(receipts int) *v1.Hook {
		return &v1.Hook{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task", UID: "u1"},
			Status:     v1.HookStatus{Steps: []v1.StepResult{{Name: "one", Phase: v1.StepPassed, Receipts: make([]v1.Receipt, receipts)}}},
		}
	}
	for _, tc := range []struct {
		name string
		// memoized runs a reconcile of the same evidence first, so that
		// this one finds the verdict memoized and verifies nothing.
		memoized bool
		// change alters the Hook after the phase and before the file.
		change func(h *v1.Hook) *v1.Hook
		// wantChecks is how many verifications the phase and the file
		// make together.
		wantChecks int
	}{
		{name: "first reconcile: one verification for both", wantChecks: 1},
		{name: "memoized verdict: the file verifies", memoized: true, wantChecks: 1},
		{name: "status written after the phase, evidence unchanged", change: func(h *v1.Hook) *v1.Hook {
			h.Status.ObservedGeneration = 7
			return h
		}, wantChecks: 1},
		{name: "evidence changed after the phase", change: func(h *v1.Hook) *v1.Hook {
			h.Status.Steps[0].Receipts = append(h.Status.Steps[0].Receipts, v1.Receipt{})
			return h
		}, wantChecks: 2},
		{name: "another Hook", change: func(h *v1.Hook) *v1.Hook { return h.DeepCopy() }, wantChecks: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks := 0
			report := &receipts.Report{Steps: []receipts.StepReport{{Name: "one", Phase: v1.StepPassed, Verdict: receipts.VerdictVerified}}}
			r := &HookReconciler{Evidence: func(*v1.Hook) *receipts.Report { checks++; return report }}
			if tc.memoized {
				h := passed(2)
				if err := r.reconcileReceipts(context.Background(), &hookScope{hook: h, orig: h.Status.DeepCopy(), now: now}); err != nil {
					t.Fatal(err)
				}
				checks = 0
			}
			h := passed(2)
			s := &hookScope{hook: h, orig: h.Status.DeepCopy(), now: now}
			if err := r.reconcileReceipts(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			rendered := h
			if tc.change != nil {
				rendered = tc.change(h)
			}
			if got := r.evidence(s)(rendered); got != report {
				t.Errorf("the file's evidence is %v, want the verification's report", got)
			}
			if checks != tc.wantChecks {
				t.Errorf("%d verifications, want %d", checks, tc.wantChecks)
			}
		})
	}
}

// TestReceiptMemo: a verdict is found again only for the Hook and the
// evidence it was put for, whole, and Hooks with the same verdict share
// its text.
func TestReceiptMemo(t *testing.T) {
	var m receiptMemo
	a := types.NamespacedName{Namespace: "default", Name: "a"}
	b := types.NamespacedName{Namespace: "default", Name: "b"}
	d1, d2 := sha256.Sum256([]byte("one")), sha256.Sum256([]byte("two"))
	ok := condition(ConditionReceiptsVerified, metav1.ConditionTrue, ReasonReceiptsVerified, "verified: 1 passed steps, 0 receipts")
	bad := condition(ConditionReceiptsVerified, metav1.ConditionFalse, ReasonReceiptsInvalid, "step api: receipt 0: bad signature")
	m.put(a, d1, ok)
	m.put(b, d1, ok)
	if m.seen[a].text != m.seen[b].text {
		t.Error("two Hooks with one verdict hold two copies of its text")
	}
	cases := []struct {
		name   string
		before func()
		key    types.NamespacedName
		digest [sha256.Size]byte
		want   *metav1.Condition
	}{
		{name: "the evidence put", key: a, digest: d1, want: &ok},
		{name: "other evidence", key: a, digest: d2},
		{name: "a Hook never put", key: types.NamespacedName{Namespace: "default", Name: "c"}, digest: d1},
		{name: "same name, other namespace", key: types.NamespacedName{Namespace: "other", Name: "a"}, digest: d1},
		{name: "replaced by a new verdict", before: func() { m.put(b, d2, bad) }, key: b, digest: d2, want: &bad},
		{name: "the replaced evidence", key: b, digest: d1},
		{name: "forgotten", before: func() { m.forget(a) }, key: a, digest: d1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			got, found := m.get(tc.key, tc.digest)
			if found != (tc.want != nil) {
				t.Fatalf("found = %v, want %v", found, tc.want != nil)
			}
			if tc.want != nil && got != *tc.want {
				t.Errorf("got %+v, want %+v", got, *tc.want)
			}
		})
	}
}

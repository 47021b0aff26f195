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
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// Receipt verification on the Hook: the condition, its reasons and the
// Event of a failed verification.
const (
	// ConditionReceiptsVerified says whether the Hook's receipts support
	// its status, checked with the receipt key of its backend.
	ConditionReceiptsVerified = "ReceiptsVerified"
	// ReasonReceiptsVerified: every receipt and passed step checks out.
	ReasonReceiptsVerified = "ReceiptsVerified"
	// ReasonReceiptsInvalid: some receipt or passed step does not.
	ReasonReceiptsInvalid = "ReceiptsInvalid"
	// ReasonNoReceiptKey: there is no key to check signatures with yet.
	ReasonNoReceiptKey = "NoReceiptKey"
	// ReasonReceiptKeyUnavailable: reading the key failed; it is retried.
	ReasonReceiptKeyUnavailable = "ReceiptKeyUnavailable"
	// EventReceiptVerificationFailed is the Warning recorded when a
	// Hook's receipts stop supporting its status.
	EventReceiptVerificationFailed = "ReceiptVerificationFailed"
)

// receiptKeyRetry is how soon a Hook whose key could not be read is
// verified again.
const receiptKeyRetry = time.Minute

// receiptMemo remembers, per Hook, the evidence last verified and its
// verdict: a Hook is reconciled at every heartbeat, while its receipts
// change only at step done, and each verification reads the key (on a
// cluster, a Secret GET). It holds an entry for every Hook that claims
// evidence, so an entry is kept small: the digest and a handle on the
// verdict's text, which the Hooks that share a verdict share.
type receiptMemo struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]receiptVerdict
}

type receiptVerdict struct {
	digest [sha256.Size]byte
	text   unique.Handle[verdictText]
}

// verdictText is what a ReceiptsVerified condition says.
type verdictText struct {
	status          metav1.ConditionStatus
	reason, message string
}

func (m *receiptMemo) get(key types.NamespacedName, digest [sha256.Size]byte) (metav1.Condition, bool) {
	m.mu.Lock()
	v, ok := m.seen[key]
	m.mu.Unlock()
	if !ok || v.digest != digest {
		return metav1.Condition{}, false
	}
	t := v.text.Value()
	return condition(ConditionReceiptsVerified, t.status, t.reason, t.message), true
}

func (m *receiptMemo) put(key types.NamespacedName, digest [sha256.Size]byte, cond metav1.Condition) {
	text := unique.Make(verdictText{status: cond.Status, reason: cond.Reason, message: cond.Message})
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[types.NamespacedName]receiptVerdict{}
	}
	m.seen[key] = receiptVerdict{digest: digest, text: text}
}

func (m *receiptMemo) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, key)
}

// evidenceDigest covers everything receipts.Check reads of hook.
func evidenceDigest(hook *v1.Hook) [sha256.Size]byte {
	js, _ := json.Marshal(struct {
		UID       types.UID
		Spec      []v1.Step
		Steps     []v1.StepResult
		Completed bool
	}{hook.UID, hook.Spec.Steps, hook.Status.Steps, hook.Status.State == v1.HookCompleted})
	return sha256.Sum256(js)
}

// claimsEvidence tells whether hook's status claims anything receipts must
// support: a completed Hook, a passed step, or a receipt. A Hook with none
// is not verified, so a namespace of Hooks no agent has validated yet costs
// no key read (on a cluster, a GET of a Secret that may not exist).
func claimsEvidence(hook *v1.Hook) bool {
	if hook.Status.State == v1.HookCompleted {
		return true
	}
	for _, st := range hook.Status.Steps {
		if st.Phase == v1.StepPassed || len(st.Receipts) > 0 {
			return true
		}
	}
	return false
}

// reconcileReceipts keeps the ReceiptsVerified condition: it verifies the
// Hook's receipts with the key manager whenever they (or what they are
// checked against) changed since the last verification, and records a
// Warning Event when they stop supporting the status. It never writes to
// disk, so the operator checks receipts whether or not it keeps recovery
// files.
func (r *HookReconciler) reconcileReceipts(_ context.Context, s *hookScope) error {
	hook, st := s.hook, &s.hook.Status
	if r.Evidence == nil || !claimsEvidence(hook) {
		meta.RemoveStatusCondition(&st.Conditions, ConditionReceiptsVerified)
		return nil
	}
	key := types.NamespacedName{Namespace: hook.Namespace, Name: hook.Name}
	digest := evidenceDigest(hook)
	cond, ok := r.receipts.get(key, digest)
	if !ok {
		s.report, s.reportDigest = r.Evidence(hook), digest
		cond = receiptCondition(s.report)
		if cond.Reason == ReasonReceiptKeyUnavailable {
			s.requeue(s.now.Add(receiptKeyRetry))
		} else {
			r.receipts.put(key, digest, cond)
		}
	}
	prev := meta.FindStatusCondition(s.orig.Conditions, ConditionReceiptsVerified)
	if cond.Status == metav1.ConditionFalse && (prev == nil || prev.Status != metav1.ConditionFalse || prev.Message != cond.Message) {
		s.events = append(s.events, pendingEvent{
			Type: corev1.EventTypeWarning, Reason: EventReceiptVerificationFailed, Action: "Verify",
			Note: "the receipts do not support the status: " + cond.Message,
		})
	}
	cond.ObservedGeneration, cond.LastTransitionTime = hook.Generation, metav1.NewTime(s.now)
	meta.SetStatusCondition(&st.Conditions, cond)
	return nil
}

// maxReceiptsMessage keeps the condition, and so the Hook, small however
// many receipts fail.
const maxReceiptsMessage = 2048

// receiptCondition turns a verification report into the condition.
func receiptCondition(rep *receipts.Report) metav1.Condition {
	if bad := rep.Failures(); len(bad) > 0 {
		msgs := make([]string, len(bad))
		for i, f := range bad {
			msgs[i] = f.Error()
		}
		msg := strings.Join(msgs, "; ")
		if len(msg) > maxReceiptsMessage {
			msg = msg[:maxReceiptsMessage-3] + "..."
		}
		return condition(ConditionReceiptsVerified, metav1.ConditionFalse, ReasonReceiptsInvalid, msg)
	}
	switch {
	case errors.Is(rep.KeyErr, receipts.ErrNoKey):
		return condition(ConditionReceiptsVerified, metav1.ConditionUnknown, ReasonNoReceiptKey,
			"consistent, signatures not checked: "+rep.KeyErr.Error())
	case rep.KeyErr != nil:
		return condition(ConditionReceiptsVerified, metav1.ConditionUnknown, ReasonReceiptKeyUnavailable,
			"consistent, signatures not checked: "+rep.KeyErr.Error())
	}
	verified, receiptsChecked := 0, 0
	for _, step := range rep.Steps {
		if step.Verdict == receipts.VerdictVerified {
			verified++
		}
		receiptsChecked += len(step.Receipts)
	}
	return condition(ConditionReceiptsVerified, metav1.ConditionTrue, ReasonReceiptsVerified,
		fmt.Sprintf("verified: %d passed steps, %d receipts", verified, receiptsChecked))
}

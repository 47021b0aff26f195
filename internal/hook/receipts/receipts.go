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

// Package receipts signs and verifies validation receipts: a DSSE envelope
// carrying an in-toto Statement, signed with a per-task Ed25519 key derived
// from a master key. docs/receipts.md documents the format.
package receipts

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/validation"
)

// The identifiers of the format.
const (
	// PayloadType is the DSSE payload type of an in-toto Statement.
	PayloadType = "application/vnd.in-toto+json"
	// StatementType is the in-toto Statement's _type.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateType identifies tether's receipt predicate.
	PredicateType = "https://tether.dev/receipt/v1"
)

// maxPayload bounds the payload a decoder accepts; a real one is under 2 KiB
// plus the command line.
const maxPayload = 256 << 10

// ErrUnsigned means a receipt carries no envelope.
var ErrUnsigned = errors.New("receipt is not signed")

// Statement is an in-toto Statement v1 whose predicate is a Predicate.
type Statement struct {
	// Type is StatementType.
	Type string `json:"_type"`
	// Subject is the Hook the receipt belongs to.
	Subject []Subject `json:"subject"`
	// PredicateType is PredicateType.
	PredicateType string `json:"predicateType"`
	// Predicate is the receipt.
	Predicate Predicate `json:"predicate"`
}

// Subject is an in-toto ResourceDescriptor naming the Hook.
type Subject struct {
	// Name is hooks.agents.tether.dev/NAMESPACE/NAME.
	Name string `json:"name"`
	// Digest holds "sha256": the hex SHA-256 of "NAMESPACE/NAME/UID".
	Digest map[string]string `json:"digest"`
}

// Predicate is one validation command's run.
type Predicate struct {
	// Hook identifies the Hook.
	Hook HookRef `json:"hook"`
	// Step is the name of the step the command validates.
	Step string `json:"step"`
	// Attempt is the step attempt the run belongs to.
	Attempt int32 `json:"attempt"`
	// Command is the argv that was run.
	Command []string `json:"command"`
	// ExitCode is the exit code; -1 when a signal ended the command.
	ExitCode int32 `json:"exitCode"`
	// StartedAt and FinishedAt are RFC 3339 UTC times, to the second, as
	// the receipt stores them.
	StartedAt string `json:"startedAt"`
	// FinishedAt is when the command ended.
	FinishedAt string `json:"finishedAt"`
	// DurationMillis is the run time in milliseconds.
	DurationMillis int64 `json:"durationMillis"`
	// StdoutSHA256 is the hex SHA-256 of the whole stdout.
	StdoutSHA256 string `json:"stdoutSHA256"`
	// StderrSHA256 is the hex SHA-256 of the whole stderr.
	StderrSHA256 string `json:"stderrSHA256"`
}

// HookRef identifies a Hook, including its uid so that a receipt does not
// verify against a Hook re-created under the same name.
type HookRef struct {
	// Namespace is the Hook's namespace.
	Namespace string `json:"namespace"`
	// Name is the Hook's name.
	Name string `json:"name"`
	// UID is the Hook's metadata.uid.
	UID string `json:"uid"`
}

// PAE is the DSSE v1 pre-authentication encoding of a payload:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// SubjectName is the in-toto subject name of hook.
func SubjectName(hook *v1.Hook) string {
	return "hooks." + v1.GroupVersion.Group + "/" + hook.Namespace + "/" + hook.Name
}

// SubjectDigest is the sha256 digest of hook's subject: the hex SHA-256 of
// "NAMESPACE/NAME/UID".
func SubjectDigest(hook *v1.Hook) string {
	h := sha256.Sum256([]byte(hook.Namespace + "/" + hook.Name + "/" + string(hook.UID)))
	return hex.EncodeToString(h[:])
}

// formatTime is how the predicate writes a time: as metav1.Time stores it.
func formatTime(t metav1.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// StatementFor is the Statement that a receipt of hook's step signs.
func StatementFor(hook *v1.Hook, step string, r *v1.Receipt) *Statement {
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: SubjectName(hook), Digest: map[string]string{"sha256": SubjectDigest(hook)}}},
		PredicateType: PredicateType,
		Predicate: Predicate{
			Hook:           HookRef{Namespace: hook.Namespace, Name: hook.Name, UID: string(hook.UID)},
			Step:           step,
			Attempt:        r.Attempt,
			Command:        append([]string{}, r.Command...),
			ExitCode:       r.ExitCode,
			StartedAt:      formatTime(r.StartedAt),
			FinishedAt:     formatTime(r.FinishedAt),
			DurationMillis: r.DurationMillis,
			StdoutSHA256:   r.StdoutSHA256,
			StderrSHA256:   r.StderrSHA256,
		},
	}
}

// Sign sets r.Envelope: a DSSE envelope of the Statement of r, a receipt of
// hook's step, signed by s. r's times are first truncated to the second, as
// they are stored.
func Sign(s ReceiptSigner, hook *v1.Hook, step string, r *v1.Receipt) error {
	if hook.UID == "" {
		return fmt.Errorf("hook %q: metadata.uid is empty; a receipt names the Hook's uid", hook.Name)
	}
	r.StartedAt = metav1.NewTime(r.StartedAt.UTC().Truncate(time.Second))
	r.FinishedAt = metav1.NewTime(r.FinishedAt.UTC().Truncate(time.Second))
	payload, err := json.Marshal(StatementFor(hook, step, r))
	if err != nil {
		return fmt.Errorf("encoding the receipt statement: %w", err)
	}
	sig, err := s.Sign(PAE(PayloadType, payload))
	if err != nil {
		return fmt.Errorf("signing the receipt: %w", err)
	}
	r.Envelope = &v1.Envelope{
		PayloadType: PayloadType,
		Payload:     base64.StdEncoding.EncodeToString(payload),
		Signatures:  []v1.Signature{{KeyID: s.KeyID(), Sig: base64.StdEncoding.EncodeToString(sig)}},
	}
	return nil
}

var strictBase64 = base64.StdEncoding.Strict()

// DecodeEnvelope checks env's payload type and signature against pub and
// returns the decoded Statement. A signature whose keyid is set must name
// pub; at least one signature must verify.
func DecodeEnvelope(env *v1.Envelope, pub ed25519.PublicKey) (*Statement, error) {
	if env == nil {
		return nil, ErrUnsigned
	}
	if env.PayloadType != PayloadType {
		return nil, fmt.Errorf("envelope.payloadType is %q, want %q", env.PayloadType, PayloadType)
	}
	if len(env.Payload) > base64.StdEncoding.EncodedLen(maxPayload) {
		return nil, fmt.Errorf("envelope.payload is longer than %d bytes", maxPayload)
	}
	payload, err := strictBase64.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("envelope.payload is not base64: %w", err)
	}
	if len(env.Signatures) == 0 {
		return nil, errors.New("envelope.signatures is empty")
	}
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("public key: %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	keyID, message := KeyID(pub), PAE(env.PayloadType, payload)
	verified := false
	var reasons []string
	for i, s := range env.Signatures {
		sig, err := strictBase64.DecodeString(s.Sig)
		switch {
		case s.KeyID != "" && s.KeyID != keyID:
			reasons = append(reasons, fmt.Sprintf("envelope.signatures[%d].keyid %q is not the task key %s", i, s.KeyID, keyID))
		case err != nil:
			reasons = append(reasons, fmt.Sprintf("envelope.signatures[%d].sig is not base64", i))
		case !ed25519.Verify(pub, message, sig):
			reasons = append(reasons, fmt.Sprintf("envelope.signatures[%d].sig does not verify", i))
		default:
			verified = true
		}
	}
	if !verified {
		return nil, errors.New(reasons[0])
	}
	var st Statement
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("envelope.payload is not a receipt statement: %w", err)
	}
	if dec.More() {
		return nil, errors.New("envelope.payload has data after the statement")
	}
	return &st, nil
}

// Verify checks that r, a receipt of hook's step, carries an envelope signed
// by pub whose Statement matches hook's identity and every field of r. The
// error names the first field that does not match.
func Verify(hook *v1.Hook, step string, r *v1.Receipt, pub ed25519.PublicKey) error {
	st, err := DecodeEnvelope(r.Envelope, pub)
	if err != nil {
		return err
	}
	want := StatementFor(hook, step, r)
	switch {
	case st.Type != want.Type:
		return fmt.Errorf("statement _type is %q, want %q", st.Type, want.Type)
	case st.PredicateType != want.PredicateType:
		return fmt.Errorf("statement predicateType is %q, want %q", st.PredicateType, want.PredicateType)
	case len(st.Subject) != 1 || st.Subject[0].Name != want.Subject[0].Name ||
		len(st.Subject[0].Digest) != 1 || st.Subject[0].Digest["sha256"] != want.Subject[0].Digest["sha256"]:
		return fmt.Errorf("statement subject does not name hook %s/%s (uid %s)", hook.Namespace, hook.Name, hook.UID)
	}
	return comparePredicate(&st.Predicate, &want.Predicate)
}

func comparePredicate(got, want *Predicate) error {
	fields := []struct {
		name     string
		got, exp any
	}{
		{"hook", got.Hook, want.Hook},
		{"step", got.Step, want.Step},
		{"attempt", got.Attempt, want.Attempt},
		{"exitCode", got.ExitCode, want.ExitCode},
		{"startedAt", got.StartedAt, want.StartedAt},
		{"finishedAt", got.FinishedAt, want.FinishedAt},
		{"durationMillis", got.DurationMillis, want.DurationMillis},
		{"stdoutSHA256", got.StdoutSHA256, want.StdoutSHA256},
		{"stderrSHA256", got.StderrSHA256, want.StderrSHA256},
	}
	if !slices.Equal(got.Command, want.Command) {
		return fmt.Errorf("receipt command %q differs from the signed %q", want.Command, got.Command)
	}
	for _, f := range fields {
		if f.got != f.exp {
			return fmt.Errorf("receipt %s %v differs from the signed %v", f.name, f.exp, f.got)
		}
	}
	return nil
}

// Result is the verification of one stored receipt.
type Result struct {
	// Step is the step's name and StepIndex its position in status.steps.
	Step      string
	StepIndex int
	// Index is the receipt's position in the step's receipts.
	Index int
	// Receipt is the receipt verified.
	Receipt *v1.Receipt
	// Err is why the receipt does not verify; nil when it does.
	Err error
}

// Name names the receipt for messages: status.steps[1].receipts[0] (step "build").
func (r *Result) Name() string {
	return fmt.Sprintf("status.steps[%d].receipts[%d] (step %q, attempt %d, %q)",
		r.StepIndex, r.Index, r.Step, r.Receipt.Attempt, r.Receipt.Command)
}

// VerifyAll verifies every receipt in hook's status with km's key for hook
// and returns one result per receipt, in status order. When km has no key
// it returns no results and an error wrapping ErrNoKey.
func VerifyAll(ctx context.Context, hook *v1.Hook, km KeyManager) ([]Result, error) {
	pub, err := km.PublicKey(ctx, hook)
	if err != nil {
		return nil, err
	}
	var results []Result
	for i := range hook.Status.Steps {
		step := &hook.Status.Steps[i]
		for j := range step.Receipts {
			r := &step.Receipts[j]
			results = append(results, Result{Step: step.Name, StepIndex: i, Index: j, Receipt: r, Err: Verify(hook, step.Name, r, pub)})
		}
	}
	return results, nil
}

// FromResult is the unsigned receipt of a validation command's run in the
// given step attempt.
func FromResult(res *validation.Result, attempt int32) v1.Receipt {
	return v1.Receipt{
		Command:        append([]string(nil), res.Command...),
		ExitCode:       int32(res.ExitCode), //nolint:gosec // exit codes fit in int32
		StartedAt:      metav1.NewTime(res.StartedAt),
		FinishedAt:     metav1.NewTime(res.FinishedAt),
		DurationMillis: res.Duration.Milliseconds(),
		StdoutSHA256:   res.StdoutSHA256,
		StderrSHA256:   res.StderrSHA256,
		Attempt:        attempt,
	}
}

// StatusFunc returns a function that describes, for the recovery file, the
// signature status of receipt r of hook's step number step: "verified",
// "INVALID: …", "UNSIGNED", or, when km has no key, that the signature was
// not checked. A missing key never makes it fail: recovery goes on.
func StatusFunc(ctx context.Context, km KeyManager) func(hook *v1.Hook, step int, r *v1.Receipt) string {
	return func(hook *v1.Hook, step int, r *v1.Receipt) string {
		if r.Envelope == nil || len(r.Envelope.Signatures) == 0 {
			return "UNSIGNED"
		}
		if step < 0 || step >= len(hook.Status.Steps) {
			return fmt.Sprintf("INVALID: no status.steps[%d]", step)
		}
		pub, err := km.PublicKey(ctx, hook)
		if err != nil {
			if errors.Is(err, ErrNoKey) {
				return "signed, not verified (no key available here)"
			}
			return "signed, not verified: " + err.Error()
		}
		if err := Verify(hook, hook.Status.Steps[step].Name, r, pub); err != nil {
			return "INVALID: " + err.Error()
		}
		return "verified"
	}
}

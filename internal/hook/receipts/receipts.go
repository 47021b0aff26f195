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
	// PredicateType identifies tether's receipt predicate. Version 2 binds
	// each receipt to its place in the validation run: commandIndex,
	// commandCount and validateSHA256.
	PredicateType = "https://tether.dev/receipt/v2"
	// PredicateTypeV1 is the predicate of receipts signed before version 2.
	// They still verify one by one; their place in the run is checked
	// against the current spec, which nothing signed.
	PredicateTypeV1 = "https://tether.dev/receipt/v1"
)

// maxPayload bounds the payload a decoder accepts; a real one is under 2 KiB
// plus the command line.
const maxPayload = 256 << 10

// maxCommands is the schema's bound on a step's validate commands.
const maxCommands = 16

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
	// CommandIndex is the zero-based position of Command in the step's
	// validate commands; set from version 2 on.
	CommandIndex *int32 `json:"commandIndex,omitempty"`
	// CommandCount is how many validate commands the step declared when
	// the run began; set from version 2 on.
	CommandCount *int32 `json:"commandCount,omitempty"`
	// ValidateSHA256 is ValidateDigest of those commands; set from version
	// 2 on.
	ValidateSHA256 string `json:"validateSHA256,omitempty"`
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

// Position places a receipt in its validation run: the receipt of the
// Index-th of Validate, the argv of every validate command of the step as
// the run found them.
type Position struct {
	// Index is the zero-based position of the receipt's command.
	Index int
	// Validate lists the argv of each of the step's validate commands.
	Validate [][]string
}

// Argvs lists the argv of each command in validate.
func Argvs(validate []v1.ValidationCommand) [][]string {
	out := make([][]string, len(validate))
	for i := range validate {
		out[i] = validate[i].Command
	}
	return out
}

// ValidateDigest is the hex SHA-256 of the JSON array of the argv arrays of
// a step's validate commands, encoded compactly without HTML escaping, for
// example [["go","vet","./..."],["go","test","./..."]].
func ValidateDigest(validate [][]string) string {
	if validate == nil {
		validate = [][]string{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(validate) // a [][]string always encodes
	h := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return hex.EncodeToString(h[:])
}

// StatementFor is the Statement that a receipt of hook's step at position
// pos signs.
func StatementFor(hook *v1.Hook, step string, pos Position, r *v1.Receipt) *Statement {
	st := statementV1(hook, step, r)
	st.PredicateType = PredicateType
	index, count := int32(pos.Index), int32(len(pos.Validate)) //nolint:gosec // both are bounded by the schema (16 commands)
	st.Predicate.CommandIndex, st.Predicate.CommandCount = &index, &count
	st.Predicate.ValidateSHA256 = ValidateDigest(pos.Validate)
	return st
}

// statementV1 is the version 1 statement of a receipt: what the receipt's
// own fields and the Hook determine.
func statementV1(hook *v1.Hook, step string, r *v1.Receipt) *Statement {
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: SubjectName(hook), Digest: map[string]string{"sha256": SubjectDigest(hook)}}},
		PredicateType: PredicateTypeV1,
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

// Sign sets r.Envelope: a DSSE envelope of the Statement of r, the receipt
// at pos in a validation run of hook's step, signed by s. r's times are
// first truncated to the second, as they are stored. r.Command must be the
// command at pos.
func Sign(s ReceiptSigner, hook *v1.Hook, step string, pos Position, r *v1.Receipt) error {
	if hook.UID == "" {
		return fmt.Errorf("hook %q: metadata.uid is empty; a receipt names the Hook's uid", hook.Name)
	}
	if pos.Index < 0 || pos.Index >= len(pos.Validate) || !slices.Equal(pos.Validate[pos.Index], r.Command) {
		return fmt.Errorf("receipt of %q is not command %d of the step's %d validate commands", r.Command, pos.Index, len(pos.Validate))
	}
	r.StartedAt = metav1.NewTime(r.StartedAt.UTC().Truncate(time.Second))
	r.FinishedAt = metav1.NewTime(r.FinishedAt.UTC().Truncate(time.Second))
	payload, err := json.Marshal(StatementFor(hook, step, pos, r))
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

// SignRun signs rs, the receipts of one validation run of hook's step, in
// the order the step's validate commands ran: rs[i] is the receipt of
// validate[i]. A run that stopped at a failing command has fewer receipts
// than commands.
func SignRun(s ReceiptSigner, hook *v1.Hook, step string, validate []v1.ValidationCommand, rs []v1.Receipt) error {
	argvs := Argvs(validate)
	for i := range rs {
		if err := Sign(s, hook, step, Position{Index: i, Validate: argvs}, &rs[i]); err != nil {
			return err
		}
	}
	return nil
}

var strictBase64 = base64.StdEncoding.Strict()

// DecodeEnvelope checks env's payload type and signature against pub and
// returns the decoded Statement. A signature whose keyid is set must name
// pub; at least one signature must verify.
func DecodeEnvelope(env *v1.Envelope, pub ed25519.PublicKey) (*Statement, error) {
	payload, err := envelopePayload(env)
	if err != nil {
		return nil, err
	}
	if err := checkSignatures(env, payload, pub); err != nil {
		return nil, err
	}
	return decodeStatement(payload)
}

// envelopePayload checks env's form and returns its decoded payload.
func envelopePayload(env *v1.Envelope) ([]byte, error) {
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
	return payload, nil
}

// errBadSignature marks a signature that does not verify with the task key.
var errBadSignature = errors.New("signature")

func checkSignatures(env *v1.Envelope, payload []byte, pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("public key: %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	keyID, message := KeyID(pub), PAE(env.PayloadType, payload)
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
			return nil
		}
	}
	return fmt.Errorf("%w: %s", errBadSignature, reasons[0])
}

func decodeStatement(payload []byte) (*Statement, error) {
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
// error is a *Failure naming the first field that does not match. It checks
// the receipt alone; Check checks a step's receipts together.
func Verify(hook *v1.Hook, step string, r *v1.Receipt, pub ed25519.PublicKey) error {
	_, f := verifyReceipt(hook, step, r, pub)
	if f != nil {
		return f
	}
	return nil
}

// verifyReceipt checks r as Verify does and returns its decoded statement.
// With no pub the signature is not checked but the rest is: the statement
// is then only as good as the stored bytes. The statement is returned
// whenever the payload decodes, even when r fails.
func verifyReceipt(hook *v1.Hook, step string, r *v1.Receipt, pub ed25519.PublicKey) (*Statement, *Failure) {
	fail := func(kind FailureKind, err error) *Failure {
		return &Failure{Kind: kind, Message: err.Error(), err: err}
	}
	payload, err := envelopePayload(r.Envelope)
	if errors.Is(err, ErrUnsigned) {
		return nil, fail(FailureUnsigned, err)
	}
	if err != nil {
		return nil, fail(FailureSignature, err)
	}
	if pub != nil {
		if err := checkSignatures(r.Envelope, payload, pub); err != nil {
			// Another Hook's receipt is signed with that Hook's key; say so
			// rather than only that the signature fails.
			if st, derr := decodeStatement(payload); derr == nil && st.Predicate.Hook != (HookRef{Namespace: hook.Namespace, Name: hook.Name, UID: string(hook.UID)}) {
				return nil, fail(FailureOtherHook, fmt.Errorf("statement names hook %s/%s (uid %s), not this hook, and %w",
					st.Predicate.Hook.Namespace, st.Predicate.Hook.Name, st.Predicate.Hook.UID, err))
			}
			return nil, fail(FailureSignature, err)
		}
	}
	st, err := decodeStatement(payload)
	if err != nil {
		return nil, fail(FailureSignature, err)
	}
	want := statementV1(hook, step, r)
	switch {
	case st.Type != want.Type:
		return st, fail(FailureSignature, fmt.Errorf("statement _type is %q, want %q", st.Type, want.Type))
	case st.PredicateType != PredicateType && st.PredicateType != PredicateTypeV1:
		return st, fail(FailureSignature, fmt.Errorf("statement predicateType is %q, want %q", st.PredicateType, PredicateType))
	case len(st.Subject) != 1 || st.Subject[0].Name != want.Subject[0].Name ||
		len(st.Subject[0].Digest) != 1 || st.Subject[0].Digest["sha256"] != want.Subject[0].Digest["sha256"] ||
		st.Predicate.Hook != want.Predicate.Hook:
		return st, fail(FailureOtherHook, fmt.Errorf("statement names hook %s/%s (uid %s), not this hook %s/%s (uid %s)",
			st.Predicate.Hook.Namespace, st.Predicate.Hook.Name, st.Predicate.Hook.UID, hook.Namespace, hook.Name, hook.UID))
	case st.Predicate.Step != step:
		return st, fail(FailureOtherStep, fmt.Errorf("receipt of step %q stored under step %q", st.Predicate.Step, step))
	}
	if err := checkPosition(st); err != nil {
		return st, fail(FailureSignature, err)
	}
	if err := comparePredicate(&st.Predicate, &want.Predicate); err != nil {
		return st, fail(FailureSignature, err)
	}
	return st, nil
}

// checkPosition requires the position fields in a version 2 statement and
// refuses them in a version 1 statement.
func checkPosition(st *Statement) error {
	p := &st.Predicate
	if st.PredicateType == PredicateTypeV1 {
		if p.CommandIndex != nil || p.CommandCount != nil || p.ValidateSHA256 != "" {
			return fmt.Errorf("a %s statement carries the position fields of %s", PredicateTypeV1, PredicateType)
		}
		return nil
	}
	switch {
	case p.CommandIndex == nil || p.CommandCount == nil || p.ValidateSHA256 == "":
		return errors.New("statement lacks commandIndex, commandCount or validateSHA256")
	case *p.CommandCount < 1 || *p.CommandCount > maxCommands:
		return fmt.Errorf("statement commandCount %d is not within 1 to %d", *p.CommandCount, maxCommands)
	case *p.CommandIndex < 0 || *p.CommandIndex >= *p.CommandCount:
		return fmt.Errorf("statement commandIndex %d is not within commandCount %d", *p.CommandIndex, *p.CommandCount)
	}
	return nil
}

func comparePredicate(got, want *Predicate) error {
	fields := []struct {
		name     string
		got, exp any
	}{
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

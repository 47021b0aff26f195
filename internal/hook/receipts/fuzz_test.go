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
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// FuzzDecodeEnvelope feeds arbitrary stored envelopes to the decoder and
// Verify: they must never panic, and only the original payload and
// signature bytes may verify.
func FuzzDecodeEnvelope(f *testing.F) {
	hook := testHook()
	km := &receipts.FileKeyManager{Dir: f.TempDir() + "/keys"}
	s, err := km.Signer(context.Background(), hook)
	if err != nil {
		f.Fatal(err)
	}
	orig := testReceipt()
	if err := receipts.Sign(s, hook, "build", receipts.Position{Validate: [][]string{orig.Command}}, &orig); err != nil {
		f.Fatal(err)
	}
	origPayload, _ := base64.StdEncoding.DecodeString(orig.Envelope.Payload)
	origSig, _ := base64.StdEncoding.DecodeString(orig.Envelope.Signatures[0].Sig)
	pub := s.PublicKey()
	seed, _ := json.Marshal(orig.Envelope)
	f.Add(seed)
	seedYAML, _ := yaml.Marshal(orig.Envelope)
	f.Add(seedYAML)
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"sig":""}]}`))
	f.Add([]byte(`{}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		var env v1.Envelope
		if err := yaml.Unmarshal(data, &env); err != nil {
			return
		}
		st, err := receipts.DecodeEnvelope(&env, pub)
		if err != nil {
			return
		}
		payload, _ := base64.StdEncoding.DecodeString(env.Payload)
		if !bytes.Equal(payload, origPayload) {
			t.Fatalf("a payload other than the signed one verified: %q", payload)
		}
		anyOrig := false
		for _, sig := range env.Signatures {
			b, err := base64.StdEncoding.DecodeString(sig.Sig)
			anyOrig = anyOrig || (err == nil && ed25519.Verify(pub, receipts.PAE(receipts.PayloadType, payload), b) && bytes.Equal(b, origSig))
		}
		if !anyOrig {
			t.Fatal("verified without the original signature")
		}
		r := *orig.DeepCopy()
		r.Envelope = &env
		if err := receipts.Verify(hook, "build", &r, pub); err != nil {
			t.Fatalf("the decoded statement %+v no longer matches its receipt: %v", st, err)
		}
	})
}

// FuzzCheck feeds arbitrary step results, seeded with the tampering cases
// (a forged pass, receipts swapped, duplicated, dropped and reordered), to
// the whole-claim check: it must never panic or hang, and a step it calls
// verified must hold exactly one receipt per command of its run, of the
// passing attempt, each exiting 0 and verifying on its own.
func FuzzCheck(f *testing.F) {
	fx := newFixture(f)
	const build, docs = 1, 2
	seed := func(edit func(st *v1.HookStatus)) {
		st := fx.hook.Status.DeepCopy()
		edit(st)
		data, err := yaml.Marshal(st.Steps)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	seed(func(*v1.HookStatus) {})
	seed(func(st *v1.HookStatus) { st.Steps[docs].Receipts, st.Steps[docs].Attempts = clone(fx.failDocs), 3 })
	seed(func(st *v1.HookStatus) {
		st.Steps[build].Receipts[0], st.Steps[docs].Receipts[0] = st.Steps[docs].Receipts[0], st.Steps[build].Receipts[0]
	})
	seed(func(st *v1.HookStatus) { st.Steps[build].Receipts = clone(fx.otherBuild) })
	seed(func(st *v1.HookStatus) {
		st.Steps[build].Receipts = append(st.Steps[build].Receipts, st.Steps[build].Receipts[0])
	})
	seed(func(st *v1.HookStatus) { st.Steps[build].Receipts = st.Steps[build].Receipts[1:] })
	seed(func(st *v1.HookStatus) { slices.Reverse(st.Steps[build].Receipts) })
	f.Add([]byte(`[{name: build, phase: Passed, attempts: 1, receipts: [{command: [x], exitCode: 0, attempt: 1, startedAt: "2026-01-01T00:00:00Z", finishedAt: "2026-01-01T00:00:00Z", durationMillis: 0, stdoutSHA256: "", stderrSHA256: "", envelope: {payloadType: application/vnd.in-toto+json, payload: "e30=", signatures: [{sig: ""}]}}]}]`))

	f.Fuzz(func(t *testing.T, data []byte) {
		var steps []v1.StepResult
		if err := yaml.Unmarshal(data, &steps); err != nil || len(steps) > 64 {
			return
		}
		h := fx.hook.DeepCopy()
		h.Status.Steps = steps
		for _, pub := range []ed25519.PublicKey{fx.pub, nil} {
			rep := receipts.Check(h, pub, nil)
			for i := range rep.Steps {
				s := &rep.Steps[i]
				if s.Verdict != receipts.VerdictVerified && s.Verdict != receipts.VerdictUnverified {
					continue
				}
				if s.Phase != v1.StepPassed || len(s.Receipts) != s.Commands || s.Commands == 0 {
					t.Fatalf("step %q verified as %s with %d receipts of %d commands", s.Name, s.Phase, len(s.Receipts), s.Commands)
				}
				for _, r := range s.Receipts {
					if r.Err != nil || r.Receipt.ExitCode != 0 || r.Receipt.Attempt != s.Attempt {
						t.Fatalf("step %q verified with receipt %+v (%v)", s.Name, r.Receipt, r.Err)
					}
				}
			}
		}
	})
}

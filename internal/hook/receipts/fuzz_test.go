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

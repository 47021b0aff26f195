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
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/scheme"
)

func TestSecretKeyManager(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	km := &receipts.SecretKeyManager{Client: c}
	ctx := context.Background()
	hook := testHook()

	if _, err := km.PublicKey(ctx, hook); !errors.Is(err, receipts.ErrNoKey) {
		t.Fatalf("PublicKey before any key = %v, want ErrNoKey", err)
	}
	r, pub := signed(t, km, hook)
	if err := receipts.Verify(hook, "build", &r, pub); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: hook.Namespace, Name: receipts.DefaultSecretName}, secret); err != nil {
		t.Fatal(err)
	}
	if len(secret.Data[receipts.SecretKey]) != 32 || secret.Immutable == nil || !*secret.Immutable {
		t.Fatalf("Secret %+v: want an immutable 32-byte key", secret)
	}
	again, err := km.Signer(ctx, hook)
	if err != nil || !again.PublicKey().Equal(pub) {
		t.Fatalf("a second Signer has another key (%v)", err)
	}

	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: receipts.DefaultSecretName}, Data: map[string][]byte{receipts.SecretKey: []byte("short")}}
	if err := c.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	other := testHook()
	other.Namespace = "other"
	if _, err := km.Signer(ctx, other); err == nil || !strings.Contains(err.Error(), `Secret other/tether-receipt-key: data["master.key"] holds 5 bytes`) {
		t.Fatalf("a malformed Secret: %v", err)
	}
}

// TestSecretKeyManagerReadOnly is the operator's verifier: it reads the
// Secret through a Reader, never creates one, and verifies what a signer
// with the same Secret signed.
func TestSecretKeyManagerReadOnly(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	verifier := &receipts.SecretKeyManager{Reader: c}
	ctx := context.Background()
	hook := testHook()

	if _, err := verifier.Signer(ctx, hook); !errors.Is(err, receipts.ErrNoKey) {
		t.Fatalf("Signer of a read-only manager with no Secret = %v, want ErrNoKey", err)
	}
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets); err != nil || len(secrets.Items) != 0 {
		t.Fatalf("the read-only manager created a Secret (%d, %v)", len(secrets.Items), err)
	}
	r, _ := signed(t, &receipts.SecretKeyManager{Client: c}, hook)
	pub, err := verifier.PublicKey(ctx, hook)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipts.Verify(hook, "build", &r, pub); err != nil {
		t.Fatalf("the read-only verifier rejects a receipt signed with the same Secret: %v", err)
	}
}

// countingReader counts the Gets that reach the API.
type countingReader struct {
	client.Reader
	gets int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestSecretKeyManagerCache reads a namespace's key once per CacheFor, not
// once per Hook, and never caches the absence of the Secret: the first
// step done in a namespace creates it.
func TestSecretKeyManagerCache(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	reader := &countingReader{Reader: c}
	now := time.Unix(0, 0)
	verifier := &receipts.SecretKeyManager{Reader: reader, CacheFor: time.Minute, Now: func() time.Time { return now }}
	ctx := context.Background()
	hook := testHook()
	var want ed25519.PublicKey
	steps := []struct {
		name     string
		advance  time.Duration
		sign     bool
		wantGets int
		wantKey  bool
	}{
		{name: "no Secret yet", wantGets: 1},
		{name: "absence is not cached", sign: true, wantGets: 1, wantKey: true},
		{name: "cached", advance: 59 * time.Second, wantGets: 0, wantKey: true},
		{name: "expired", advance: time.Second, wantGets: 1, wantKey: true},
	}
	for _, step := range steps {
		now = now.Add(step.advance)
		if step.sign {
			_, want = signed(t, &receipts.SecretKeyManager{Client: c}, hook)
		}
		reader.gets = 0
		pub, err := verifier.PublicKey(ctx, hook)
		if reader.gets != step.wantGets {
			t.Errorf("%s: %d Gets, want %d", step.name, reader.gets, step.wantGets)
		}
		if got := err == nil && pub.Equal(want); got != step.wantKey {
			t.Errorf("%s: key %x, %v; want the signer's: %v", step.name, pub, err, step.wantKey)
		}
	}
}

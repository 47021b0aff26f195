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

package receipts

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// DefaultSecretName is the Secret that holds a namespace's master key in a cluster.
const DefaultSecretName = "tether-receipt-key"

// SecretKey is the key in the Secret's data that holds the 32-byte master key.
const SecretKey = "master.key"

// SecretKeyManager keeps the master key in an immutable Secret in each
// Hook's namespace, for cluster mode, where RBAC on Secrets takes the place
// of file permissions.
type SecretKeyManager struct {
	// Client reads and creates the Secret; a verifier that never signs may
	// leave it nil and set Reader.
	Client client.Client
	// Reader, when set, reads the Secret instead of Client: an uncached
	// reader spares the operator a cluster-wide watch of Secrets.
	Reader client.Reader
	// Name is the Secret's name; empty means DefaultSecretName.
	Name string
	// CacheFor keeps each namespace's master key, once read, for this long;
	// zero reads the Secret every time. The Secret is immutable, so only
	// its deletion and re-creation with a new key goes unseen meanwhile.
	// A verifier of many Hooks (the operator) sets it: one GET per
	// namespace instead of one per Hook.
	CacheFor time.Duration
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	cached map[string]cachedKey
}

type cachedKey struct {
	master []byte
	at     time.Time
}

func (m *SecretKeyManager) name() string {
	if m.Name == "" {
		return DefaultSecretName
	}
	return m.Name
}

// Signer returns hook's signer, creating the Secret with a random master key
// if there is none. Concurrent creators agree on the one the API server kept.
func (m *SecretKeyManager) Signer(ctx context.Context, hook *v1.Hook) (ReceiptSigner, error) {
	master, err := m.load(ctx, hook.Namespace)
	if apierrors.IsNotFound(err) {
		master, err = m.create(ctx, hook.Namespace)
	}
	if err != nil {
		return nil, err
	}
	key, err := DeriveTaskKey(master, hook)
	if err != nil {
		return nil, err
	}
	return NewSigner(key), nil
}

// PublicKey returns the key that verifies hook's receipts, or an error
// wrapping ErrNoKey when the Secret does not exist.
func (m *SecretKeyManager) PublicKey(ctx context.Context, hook *v1.Hook) (ed25519.PublicKey, error) {
	master, err := m.load(ctx, hook.Namespace)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s/%s does not exist", ErrNoKey, hook.Namespace, m.name())
	}
	if err != nil {
		return nil, err
	}
	key, err := DeriveTaskKey(master, hook)
	if err != nil {
		return nil, err
	}
	pub, _ := key.Public().(ed25519.PublicKey)
	return pub, nil
}

func (m *SecretKeyManager) load(ctx context.Context, namespace string) ([]byte, error) {
	if m.CacheFor <= 0 {
		return m.read(ctx, namespace)
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	m.mu.Lock()
	c, ok := m.cached[namespace]
	m.mu.Unlock()
	if ok && now().Sub(c.at) < m.CacheFor {
		return c.master, nil
	}
	master, err := m.read(ctx, namespace)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.cached == nil {
		m.cached = map[string]cachedKey{}
	}
	m.cached[namespace] = cachedKey{master: master, at: now()}
	m.mu.Unlock()
	return master, nil
}

func (m *SecretKeyManager) read(ctx context.Context, namespace string) ([]byte, error) {
	var r client.Reader = m.Client
	if m.Reader != nil {
		r = m.Reader
	}
	s := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: m.name()}, s); err != nil {
		return nil, fmt.Errorf("reading the receipt key Secret: %w", err)
	}
	key := s.Data[SecretKey]
	if len(key) != masterKeySize {
		return nil, fmt.Errorf("receipt key Secret %s/%s: data[%q] holds %d bytes, want %d", namespace, m.name(), SecretKey, len(key), masterKeySize)
	}
	return key, nil
}

func (m *SecretKeyManager) create(ctx context.Context, namespace string) ([]byte, error) {
	if m.Client == nil {
		return nil, fmt.Errorf("%w: Secret %s/%s does not exist, and this verifier cannot create it", ErrNoKey, namespace, m.name())
	}
	key := make([]byte, masterKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the master key: %w", err)
	}
	immutable := true
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: m.name(), Labels: map[string]string{"app.kubernetes.io/part-of": "tether"}},
		Type:       corev1.SecretTypeOpaque,
		Immutable:  &immutable,
		Data:       map[string][]byte{SecretKey: key},
	}
	err := m.Client.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		return m.load(ctx, namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("creating the receipt key Secret: %w", err)
	}
	return key, nil
}

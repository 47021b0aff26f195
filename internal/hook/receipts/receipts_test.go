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
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

func testHook() *v1.Hook {
	return &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task", UID: types.UID("7c2a0e6e-1111-4c1e-9b1e-000000000001")}}
}

func testReceipt() v1.Receipt {
	start := time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC)
	return v1.Receipt{
		Command:        []string{"go", "test", "./..."},
		ExitCode:       0,
		StartedAt:      metav1.NewTime(start),
		FinishedAt:     metav1.NewTime(start.Add(2500 * time.Millisecond)),
		DurationMillis: 2500,
		StdoutSHA256:   strings.Repeat("a", 64),
		StderrSHA256:   strings.Repeat("b", 64),
		Attempt:        2,
	}
}

func newManager(t testing.TB) *receipts.FileKeyManager {
	t.Helper()
	return &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "home", "keys")}
}

func signed(t *testing.T, km receipts.KeyManager, hook *v1.Hook) (v1.Receipt, ed25519.PublicKey) {
	t.Helper()
	s, err := km.Signer(context.Background(), hook)
	if err != nil {
		t.Fatal(err)
	}
	r := testReceipt()
	if err := receipts.Sign(s, hook, "build", receipts.Position{Validate: [][]string{r.Command}}, &r); err != nil {
		t.Fatal(err)
	}
	pub, err := km.PublicKey(context.Background(), hook)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(s.PublicKey()) || r.Envelope.Signatures[0].KeyID != receipts.KeyID(pub) {
		t.Fatal("signer and PublicKey disagree")
	}
	return r, pub
}

func TestPAE(t *testing.T) {
	// The DSSE specification's test vector.
	got := string(receipts.PAE("http://example.com/HelloWorld", []byte("hello world")))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; got != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
}

func TestSignAndVerify(t *testing.T) {
	km := newManager(t)
	hook := testHook()
	r, pub := signed(t, km, hook)
	if err := receipts.Verify(hook, "build", &r, pub); err != nil {
		t.Fatalf("untouched receipt: %v", err)
	}
	if !r.StartedAt.Equal(&metav1.Time{Time: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}) {
		t.Errorf("Sign did not truncate startedAt to the second, as it is stored: %v", r.StartedAt)
	}
	payload, _ := base64.StdEncoding.DecodeString(r.Envelope.Payload)
	var st map[string]any
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	if st["_type"] != receipts.StatementType || st["predicateType"] != receipts.PredicateType {
		t.Errorf("statement %s", payload)
	}

	// The stored form, as the store or API server round-trips it, still verifies.
	data, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	var back v1.Receipt
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if err := receipts.Verify(hook, "build", &back, pub); err != nil {
		t.Fatalf("round-tripped receipt: %v", err)
	}
}

func TestVerifyNamesWhatWasTampered(t *testing.T) {
	km := newManager(t)
	hook := testHook()
	orig, pub := signed(t, km, hook)
	otherKM := newManager(t)
	_, otherPub := signed(t, otherKM, hook)

	flip := func(s string, i int) string {
		b := []byte(s)
		b[i] ^= 0x01
		return string(b)
	}
	tests := []struct {
		name   string
		step   string
		hook   func(h *v1.Hook)
		mutate func(r *v1.Receipt)
		pub    ed25519.PublicKey
		want   string
	}{
		{"exit code", "build", nil, func(r *v1.Receipt) { r.ExitCode = 1 }, pub, "exitCode"},
		{"command", "build", nil, func(r *v1.Receipt) { r.Command = []string{"true"} }, pub, "command"},
		{"stdout hash", "build", nil, func(r *v1.Receipt) { r.StdoutSHA256 = strings.Repeat("c", 64) }, pub, "stdoutSHA256"},
		{"stderr hash", "build", nil, func(r *v1.Receipt) { r.StderrSHA256 = strings.Repeat("c", 64) }, pub, "stderrSHA256"},
		{"attempt", "build", nil, func(r *v1.Receipt) { r.Attempt = 1 }, pub, "attempt"},
		{"duration", "build", nil, func(r *v1.Receipt) { r.DurationMillis = 1 }, pub, "durationMillis"},
		{"started", "build", nil, func(r *v1.Receipt) { r.StartedAt = metav1.NewTime(r.StartedAt.Add(time.Hour)) }, pub, "startedAt"},
		{"finished", "build", nil, func(r *v1.Receipt) { r.FinishedAt = metav1.NewTime(r.FinishedAt.Add(time.Hour)) }, pub, "finishedAt"},
		{"step", "test", nil, nil, pub, "step"},
		{"hook uid", "build", func(h *v1.Hook) { h.UID = "other" }, nil, pub, "not this hook"},
		{"hook name", "build", func(h *v1.Hook) { h.Name = "other" }, nil, pub, "not this hook"},
		{"payload byte", "build", nil, func(r *v1.Receipt) { r.Envelope.Payload = flip(r.Envelope.Payload, 10) }, pub, "sig does not verify"},
		{"signature byte", "build", nil, func(r *v1.Receipt) { r.Envelope.Signatures[0].Sig = flip(r.Envelope.Signatures[0].Sig, 5) }, pub, "signatures[0]"},
		{"payload type", "build", nil, func(r *v1.Receipt) { r.Envelope.PayloadType = "text/plain" }, pub, "payloadType"},
		{"no signatures", "build", nil, func(r *v1.Receipt) { r.Envelope.Signatures = nil }, pub, "signatures is empty"},
		{"unsigned", "build", nil, func(r *v1.Receipt) { r.Envelope = nil }, pub, "not signed"},
		{"another key", "build", nil, nil, otherPub, "keyid"},
		{"keyid", "build", nil, func(r *v1.Receipt) { r.Envelope.Signatures[0].KeyID = "0000" }, pub, "keyid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := *orig.DeepCopy()
			h := testHook()
			if tt.hook != nil {
				tt.hook(h)
			}
			if tt.mutate != nil {
				tt.mutate(&r)
			}
			err := receipts.Verify(h, tt.step, &r, tt.pub)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Verify = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

func TestTaskKeysDiffer(t *testing.T) {
	master := make([]byte, 32)
	base := testHook()
	key := func(h *v1.Hook) string {
		k, err := receipts.DeriveTaskKey(master, h)
		if err != nil {
			t.Fatal(err)
		}
		return receipts.KeyID(k.Public().(ed25519.PublicKey))
	}
	first := key(base)
	if key(testHook()) != first {
		t.Fatal("derivation is not deterministic")
	}
	for name, mutate := range map[string]func(h *v1.Hook){
		"namespace": func(h *v1.Hook) { h.Namespace = "other" },
		"name":      func(h *v1.Hook) { h.Name = "other" },
		"uid":       func(h *v1.Hook) { h.UID = "other" },
	} {
		h := testHook()
		mutate(h)
		if key(h) == first {
			t.Errorf("changing the %s keeps the key", name)
		}
	}
	if _, err := receipts.DeriveTaskKey(master, &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); err == nil || !strings.Contains(err.Error(), "uid") {
		t.Errorf("a Hook without uid: %v", err)
	}
}

func TestFileKeyManagerPermissions(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, km *receipts.FileKeyManager)
		want  string
		noKey bool
	}{
		{"missing key", func(t *testing.T, km *receipts.FileKeyManager) {}, "does not exist", true},
		{"key 0644", func(t *testing.T, km *receipts.FileKeyManager) { chmod(t, km.Path(), 0o644) }, "mode 0644", false},
		{"key 0640", func(t *testing.T, km *receipts.FileKeyManager) { chmod(t, km.Path(), 0o640) }, "mode 0640", false},
		{"dir 0755", func(t *testing.T, km *receipts.FileKeyManager) { chmod(t, km.Dir, 0o755) }, "key directory", false},
		{"key is a symlink", func(t *testing.T, km *receipts.FileKeyManager) {
			target := km.Path() + ".real"
			if err := os.Rename(km.Path(), target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, km.Path()); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file", false},
		{"garbage key", func(t *testing.T, km *receipts.FileKeyManager) {
			if err := os.WriteFile(km.Path(), []byte("not hex\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "hex digits", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			km := newManager(t)
			if !tt.noKey {
				if _, err := km.Signer(context.Background(), testHook()); err != nil {
					t.Fatal(err)
				}
			}
			tt.setup(t, km)
			_, err := km.PublicKey(context.Background(), testHook())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("PublicKey = %v, want an error naming %q", err, tt.want)
			}
			if errors.Is(err, receipts.ErrNoKey) != tt.noKey {
				t.Fatalf("errors.Is(%v, ErrNoKey) = %v", err, !tt.noKey)
			}
			if !tt.noKey {
				if _, err := km.Signer(context.Background(), testHook()); err == nil {
					t.Fatal("Signer used a key PublicKey refused")
				}
			}
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestFileKeyManagerCreatesOneKey(t *testing.T) {
	km := newManager(t)
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := km.Signer(context.Background(), testHook())
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = s.KeyID()
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent first uses created different keys: %v", ids)
		}
	}
	for path, want := range map[string]os.FileMode{km.Dir: 0o700, km.Path(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", path, fi.Mode().Perm(), want)
		}
	}
	entries, err := os.ReadDir(km.Dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("key directory holds %v (%v), want master.key only", entries, err)
	}
}

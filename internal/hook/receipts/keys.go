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
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/atomicfs"
)

// ErrNoKey means there is no master key to derive a task key from. Callers
// that only read, such as recovery, treat it as a warning.
var ErrNoKey = errors.New("no receipt signing key")

// masterKeySize is the length of the master key in bytes.
const masterKeySize = 32

// KeyManager provides the per-task keys that sign and verify a Hook's
// receipts. FileKeyManager keeps the master key in a file; in a cluster an
// implementation keeps it in a Secret.
type KeyManager interface {
	// Signer returns the signer of hook's receipts, creating the master key
	// if the implementation creates keys on first use.
	Signer(ctx context.Context, hook *v1.Hook) (ReceiptSigner, error)
	// PublicKey returns the key that verifies hook's receipts. It never
	// creates a key: with none, it returns an error wrapping ErrNoKey.
	PublicKey(ctx context.Context, hook *v1.Hook) (ed25519.PublicKey, error)
}

// ReceiptSigner signs DSSE pre-authentication encodings with one task's key.
type ReceiptSigner interface {
	// KeyID identifies the public key: the hex SHA-256 of its 32 bytes.
	KeyID() string
	// PublicKey is the key that verifies the signatures.
	PublicKey() ed25519.PublicKey
	// Sign signs message, a DSSE pre-authentication encoding.
	Sign(message []byte) ([]byte, error)
}

// KeyID is the DSSE keyid of pub: the hex SHA-256 of its 32 bytes.
func KeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return hex.EncodeToString(h[:])
}

// DeriveTaskKey derives hook's Ed25519 key from master with HKDF-SHA256
// (RFC 5869): no salt, and info naming the Hook by namespace, name and uid,
// so one task's key signs only that task, and a Hook re-created under the
// same name gets a new key.
func DeriveTaskKey(master []byte, hook *v1.Hook) (ed25519.PrivateKey, error) {
	if len(master) != masterKeySize {
		return nil, fmt.Errorf("master key: %d bytes, want %d", len(master), masterKeySize)
	}
	if hook.UID == "" {
		return nil, fmt.Errorf("hook %q: metadata.uid is empty; a task key needs the Hook's uid", hook.Name)
	}
	seed, err := hkdf.Key(sha256.New, master, nil, taskKeyInfo(hook), ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("deriving the task key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// taskKeyInfo is the HKDF info: a version label and the Hook's identity,
// NUL-separated because none of them can contain NUL.
func taskKeyInfo(hook *v1.Hook) string {
	return strings.Join([]string{"tether.dev/receipt-key/v1", hook.Namespace, hook.Name, string(hook.UID)}, "\x00")
}

// keySigner is a ReceiptSigner over an in-memory Ed25519 key.
type keySigner struct {
	key ed25519.PrivateKey
	id  string
}

// NewSigner returns a ReceiptSigner for key.
func NewSigner(key ed25519.PrivateKey) ReceiptSigner {
	pub, _ := key.Public().(ed25519.PublicKey)
	return &keySigner{key: key, id: KeyID(pub)}
}

func (s *keySigner) KeyID() string { return s.id }

func (s *keySigner) PublicKey() ed25519.PublicKey {
	pub, _ := s.key.Public().(ed25519.PublicKey)
	return pub
}

func (s *keySigner) Sign(message []byte) ([]byte, error) {
	return ed25519.Sign(s.key, message), nil
}

// FileKeyManager keeps the master key in Dir/master.key (Dir is the
// configuration's keyDir, $TETHER_HOME/keys by default): 32 random bytes as
// 64 hex digits, mode 0600 in a 0700 directory. It refuses a key file or
// directory that group or others can access, or that is not a plain file
// or directory.
type FileKeyManager struct {
	// Dir is the key directory, normally $TETHER_HOME/keys.
	Dir string
}

// Path is the master key file.
func (m *FileKeyManager) Path() string { return filepath.Join(m.Dir, "master.key") }

// Signer returns hook's signer, creating the master key if there is none.
func (m *FileKeyManager) Signer(_ context.Context, hook *v1.Hook) (ReceiptSigner, error) {
	master, err := m.load()
	if errors.Is(err, ErrNoKey) {
		master, err = m.create()
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
// wrapping ErrNoKey when there is no master key.
func (m *FileKeyManager) PublicKey(_ context.Context, hook *v1.Hook) (ed25519.PublicKey, error) {
	master, err := m.load()
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

// CheckPerms checks the key directory and the master key file as every
// use of the key does, without reading or creating anything: an error
// wrapping ErrNoKey when either is missing, and an error naming the path,
// its mode and the chmod that fixes it when group or others can access
// it, or when it is a symbolic link or the wrong kind of file.
func (m *FileKeyManager) CheckPerms() error {
	if err := checkPerm(m.Dir, true); err != nil {
		return err
	}
	return checkPerm(m.Path(), false)
}

// load reads the master key after checking the permissions of its
// directory and file.
func (m *FileKeyManager) load() ([]byte, error) {
	if err := m.CheckPerms(); err != nil {
		return nil, err
	}
	path := m.Path()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the master key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != masterKeySize {
		return nil, fmt.Errorf("master key %s: want %d hex digits", path, 2*masterKeySize)
	}
	return key, nil
}

// checkPerm refuses a missing path (with ErrNoKey), a symlink, the wrong
// kind of file, and any permission for group or others.
func checkPerm(path string, dir bool) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist", ErrNoKey, path)
	case err != nil:
		return fmt.Errorf("checking %s: %w", path, err)
	case dir && !fi.IsDir():
		return fmt.Errorf("key directory %s is not a directory", path)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("master key %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		want, what := os.FileMode(0o600), "master key"
		if dir {
			want, what = 0o700, "key directory"
		}
		return fmt.Errorf("%s %s has mode %04o, which lets group or others access it; refusing to use it (run: chmod %04o %s)",
			what, path, perm, want, path)
	}
	return nil
}

// create writes a new random master key, 0600 in a 0700 directory. The key
// is linked into place, so concurrent creators agree on one key.
func (m *FileKeyManager) create() ([]byte, error) {
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the key directory: %w", err)
	}
	if err := checkPerm(m.Dir, true); err != nil {
		return nil, err
	}
	key := make([]byte, masterKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the master key: %w", err)
	}
	if err := atomicfs.CreateFile(m.Path(), []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return m.load()
		}
		return nil, fmt.Errorf("installing the master key: %w", err)
	}
	return key, nil
}

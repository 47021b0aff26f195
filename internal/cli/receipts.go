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

package cli

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

func newReceiptsCommand(g *GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "receipts",
		Short: "Verify a hook's signed validation receipts, or print the key that verifies them",
	}
	cmd.AddCommand(newReceiptsVerifyCommand(g), newReceiptsPubkeyCommand(g))
	return cmd
}

func getHook(cmd *cobra.Command, g *GlobalOptions, name string) (*Backend, *v1.Hook, error) {
	b, err := g.Backend(cmd.Context())
	if err != nil {
		return nil, nil, err
	}
	hook := &v1.Hook{}
	if err := b.Client.Get(cmd.Context(), client.ObjectKey{Namespace: b.Namespace, Name: name}, hook); err != nil {
		_ = b.Close()
		return nil, nil, explainHookErr(name, err)
	}
	return b, hook, nil
}

func newReceiptsVerifyCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "verify HOOK",
		Short: "Verify every receipt of a hook and name each one that fails",
		Long: `Check each receipt in status.steps[].receipts: its DSSE signature with the
task's key, and that the signed statement matches the receipt's fields and
the hook's namespace, name and uid. Exits 1 when any receipt fails, or when
there is no key to verify with.`,
		Args: exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, hook, err := getHook(cmd, g, args[0])
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			km, err := keyManager(g, b)
			if err != nil {
				return err
			}
			results, err := receipts.VerifyAll(cmd.Context(), hook, km)
			if err != nil {
				if errors.Is(err, receipts.ErrNoKey) {
					return fmt.Errorf("cannot verify the receipts of hook %q: %w", hook.Name, err)
				}
				return err
			}
			w := printers.GetNewTabWriter(cmd.OutOrStdout())
			_, _ = fmt.Fprintln(w, "STEP\tATTEMPT\tRECEIPT\tCOMMAND\tEXIT\tRESULT")
			var failed []string
			for i := range results {
				r := &results[i]
				result := "verified"
				if r.Err != nil {
					result = "FAILED: " + r.Err.Error()
					failed = append(failed, fmt.Sprintf("%s: %v", r.Name(), r.Err))
				}
				_, _ = fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\t%s\n", r.Step, r.Receipt.Attempt,
					fmt.Sprintf("steps[%d].receipts[%d]", r.StepIndex, r.Index), strings.Join(r.Receipt.Command, " "), r.Receipt.ExitCode, result)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d receipts of hook %q failed verification:\n  %s",
					len(failed), len(results), hook.Name, strings.Join(failed, "\n  "))
			}
			if len(results) == 0 {
				_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "hook %q has no receipts yet\n", hook.Name)
			}
			return nil
		},
	}
}

func newReceiptsPubkeyCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "pubkey HOOK",
		Short: "Print the public key that verifies a hook's receipts (PEM)",
		Long: `Print the hook's Ed25519 public key as a PEM "PUBLIC KEY" block (PKIX),
the only thing needed to verify its receipts; docs/receipts.md shows how.
Its DSSE keyid, the hex SHA-256 of the 32 key bytes, is printed to stderr.`,
		Args: exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, hook, err := getHook(cmd, g, args[0])
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			km, err := keyManager(g, b)
			if err != nil {
				return err
			}
			pub, err := km.PublicKey(cmd.Context(), hook)
			if err != nil {
				return fmt.Errorf("hook %q: %w", hook.Name, err)
			}
			der, err := x509.MarshalPKIXPublicKey(pub)
			if err != nil {
				return fmt.Errorf("encoding the public key: %w", err)
			}
			if err := pem.Encode(cmd.OutOrStdout(), &pem.Block{Type: "PUBLIC KEY", Bytes: der}); err != nil {
				return err
			}
			_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "keyid: %s\n", receipts.KeyID(pub))
			return nil
		},
	}
}

// keyManager is where the receipt keys live: the Secret in the Hook's
// namespace on a cluster; on the local store, the master key file in the
// configuration's keyDir ($TETHER_HOME/keys by default).
func keyManager(g *GlobalOptions, b *Backend) (receipts.KeyManager, error) {
	if b.Cluster {
		return &receipts.SecretKeyManager{Client: b.Client}, nil
	}
	cfg, err := config.Load(g.ConfigFile)
	if err != nil {
		return nil, err
	}
	return &receipts.FileKeyManager{Dir: cfg.KeyDir}, nil
}

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
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
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
		Short: "Verify that a hook's signed receipts support its steps' results",
		Long: `Check the whole claim of a hook's status, not each signature alone: every
Passed step must have, for the attempt it passed in, exactly one receipt per
validate command of the run that passed it, each exiting 0, in order, and
signed with the task's key for this hook (namespace, name and uid), this
step and that attempt; a completed hook must have every step passed. A
Passed step that declares no validate commands is "passed without
validation". Each receipt's DSSE signature and fields are checked too.

Prints one line per step and one per receipt. Exits 1 naming each step and
what is wrong when the evidence does not support the status, or when there
is no key to verify with (the rest is still checked and printed).`,
		Args: exactHook,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, hook, err := getHook(cmd, g, args[0])
			if err != nil {
				return err
			}
			defer func() { _ = b.Close() }()
			km, err := b.KeyManager()
			if err != nil {
				return err
			}
			rep := receipts.CheckHook(cmd.Context(), hook, km)
			if err := printEvidence(cmd, rep); err != nil {
				return err
			}
			var bad []string
			for i := range rep.Steps {
				for _, f := range rep.Steps[i].Failures {
					bad = append(bad, f.Error())
				}
			}
			invalid := 0
			for i := range rep.Steps {
				if rep.Steps[i].Verdict == receipts.VerdictInvalid {
					invalid++
				}
			}
			switch {
			case len(bad) > 0:
				return fmt.Errorf("the receipts of hook %q do not support its status: %d of %d steps fail:\n  %s",
					hook.Name, invalid, len(rep.Steps), strings.Join(bad, "\n  "))
			case rep.KeyErr != nil:
				return fmt.Errorf("cannot verify the receipts of hook %q: %w", hook.Name, rep.KeyErr)
			}
			if len(rep.Steps) == 0 {
				_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "hook %q has no step results yet\n", hook.Name)
			}
			return nil
		},
	}
}

// printEvidence prints a step table and a receipt table of rep.
func printEvidence(cmd *cobra.Command, rep *receipts.Report) error {
	w := printers.GetNewTabWriter(cmd.OutOrStdout())
	_, _ = fmt.Fprintln(w, "STEP\tPHASE\tATTEMPT\tRECEIPTS\tVERDICT")
	for i := range rep.Steps {
		s := &rep.Steps[i]
		attempt, receiptCount := "-", fmt.Sprint(len(s.Receipts))
		if s.Phase == v1.StepPassed {
			attempt = fmt.Sprint(s.Attempt)
		}
		if s.Commands >= 0 {
			receiptCount = fmt.Sprintf("%d/%d", len(s.Receipts), s.Commands)
		}
		verdict := string(s.Verdict)
		if s.Verdict == receipts.VerdictInvalid {
			verdict = fmt.Sprintf("INVALID (%d)", len(s.Failures))
		}
		for _, n := range s.Notes {
			verdict += "; " + n
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.Name, orDash(string(s.Phase)), attempt, receiptCount, verdict)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	n := 0
	for i := range rep.Steps {
		n += len(rep.Steps[i].Receipts)
	}
	if n == 0 {
		return nil
	}
	_, _ = fmt.Fprintln(cmd.OutOrStdout())
	_, _ = fmt.Fprintln(w, "STEP\tATTEMPT\tRECEIPT\tCOMMAND\tEXIT\tSIGNATURE")
	for i := range rep.Steps {
		s := &rep.Steps[i]
		for j := range s.Receipts {
			r := &s.Receipts[j]
			_, _ = fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\t%s\n", s.Name, r.Receipt.Attempt, fmt.Sprintf("steps[%d].receipts[%d]", s.Index, r.Index),
				strings.Join(r.Receipt.Command, " "), r.Receipt.ExitCode, r.Status(rep.KeyErr))
		}
	}
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
			km, err := b.KeyManager()
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

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
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/receipts"
)

func TestStatusFunc(t *testing.T) {
	km := newManager(t)
	hook := testHook()
	good, _ := signed(t, km, hook)
	hook.Status.Steps = []v1.StepResult{{Name: "build", Phase: v1.StepPassed, Receipts: []v1.Receipt{good}}}
	tampered := good
	tampered.ExitCode = 1
	unsigned := testReceipt()
	otherTask := testHook()
	otherTask.UID = "7c2a0e6e-1111-4c1e-9b1e-000000000002"
	otherTask.Status = hook.Status

	cases := []struct {
		name    string
		km      receipts.KeyManager
		hook    *v1.Hook
		receipt v1.Receipt
		want    string
	}{
		{"a signed receipt verifies", km, hook, good, "verified"},
		{"a changed field is named", km, hook, tampered, "INVALID: receipt exitCode 1 differs from the signed 0"},
		{"no envelope", km, hook, unsigned, "UNSIGNED"},
		{"another task's key does not verify it", km, otherTask, good, "INVALID: "},
		{"no key here never blocks", &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "none")}, hook, good, "signed, not verified (no key available here)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := receipts.StatusFunc(context.Background(), tc.km)(tc.hook, 0, &tc.receipt)
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("status %q, want it to start with %q", got, tc.want)
			}
		})
	}
}

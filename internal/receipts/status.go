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
	"errors"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// StatusFunc returns the signature check that the recovery file prints
// beside each receipt of a passed step: "verified", "INVALID: why",
// "UNSIGNED", or, when km holds no key, a note that it cannot be checked
// here. A missing key never blocks recovery; it only weakens the claim.
func StatusFunc(ctx context.Context, km KeyManager) func(hook *v1.Hook, step int, r *v1.Receipt) string {
	return func(hook *v1.Hook, step int, r *v1.Receipt) string {
		if r.Envelope == nil {
			return "UNSIGNED"
		}
		pub, err := km.PublicKey(ctx, hook)
		switch {
		case errors.Is(err, ErrNoKey):
			return "signed, not verified (no key available here)"
		case err != nil:
			return "signed, not verified: " + err.Error()
		}
		name := ""
		if step >= 0 && step < len(hook.Status.Steps) {
			name = hook.Status.Steps[step].Name
		}
		if err := Verify(hook, name, r, pub); err != nil {
			return "INVALID: " + err.Error()
		}
		return "verified"
	}
}

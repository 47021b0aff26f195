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

package metrics

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// invalidPrefix starts the status of a receipt that failed verification
// (see receipts.StatusFunc).
const invalidPrefix = "INVALID"

// maxRemembered bounds the receipts CountVerificationFailures remembers;
// beyond it, it forgets them all and may count a failing receipt again.
const maxRemembered = 100000

// CountVerificationFailures wraps status, the receipt verifier of the
// recovery file, to count in ReceiptVerificationFailures each distinct
// receipt that fails. A recovery file is rendered at every change of its
// Hook, so the same bad receipt is verified many times; it is counted
// once per process. A receipt edited again is a new receipt.
func CountVerificationFailures(status func(*v1.Hook, int, *v1.Receipt) string) func(*v1.Hook, int, *v1.Receipt) string {
	if status == nil {
		return nil
	}
	var mu sync.Mutex
	failed := map[string]bool{}
	return func(h *v1.Hook, step int, r *v1.Receipt) string {
		s := status(h, step, r)
		if !strings.HasPrefix(s, invalidPrefix) {
			return s
		}
		key := failureKey(h.UID, step, r)
		mu.Lock()
		defer mu.Unlock()
		if !failed[key] {
			if len(failed) >= maxRemembered {
				clear(failed)
			}
			failed[key] = true
			ReceiptVerificationFailures.Inc()
		}
		return s
	}
}

// failureKey identifies one version of one receipt: its Hook, step and
// whole content, signature included.
func failureKey(uid types.UID, step int, r *v1.Receipt) string {
	js, _ := json.Marshal(r)
	sum := sha256.Sum256(js)
	return fmt.Sprintf("%s/%d/%x", uid, step, sum)
}

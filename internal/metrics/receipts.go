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
	"sync"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// maxRemembered bounds the failures CountVerificationFailures remembers;
// beyond it, it forgets them all and may count a failure again.
const maxRemembered = 100000

// CountVerificationFailures wraps evidence, the recovery file's check of a
// Hook's receipts, to count in ReceiptVerificationFailures each distinct
// failure it reports. A recovery file is rendered at every change of its
// Hook, so the same bad evidence is checked many times; it is counted once
// per process. Evidence edited again is a new failure.
func CountVerificationFailures(evidence func(*v1.Hook) *receipts.Report) func(*v1.Hook) *receipts.Report {
	if evidence == nil {
		return nil
	}
	var mu sync.Mutex
	failed := map[string]bool{}
	return func(h *v1.Hook) *receipts.Report {
		rep := evidence(h)
		if rep == nil {
			return rep
		}
		mu.Lock()
		defer mu.Unlock()
		for _, st := range rep.Steps {
			for _, f := range st.Failures {
				key := failureKey(h.UID, st.Index, h, f)
				if failed[key] {
					continue
				}
				if len(failed) >= maxRemembered {
					clear(failed)
				}
				failed[key] = true
				ReceiptVerificationFailures.Inc()
			}
		}
		return rep
	}
}

// failureKey identifies one failure of one version of a step's evidence:
// its Hook, step, the failure and the step's whole status, receipts and
// signatures included.
func failureKey(uid types.UID, step int, h *v1.Hook, f *receipts.Failure) string {
	var js []byte
	if step >= 0 && step < len(h.Status.Steps) {
		js, _ = json.Marshal(h.Status.Steps[step])
	}
	sum := sha256.Sum256(js)
	return fmt.Sprintf("%s/%d/%d/%s/%s/%x", uid, step, f.Receipt, f.Kind, f.Message, sum)
}

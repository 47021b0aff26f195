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

package crdschema_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tether-dev/tether/internal/store/crdschema"
)

// StatusValidBeside validates only what a status changes from the one it
// replaces, and agrees with the status schema under ratcheting, which
// forgives an unchanged value's errors and no changed value's.
func TestStatusValidBeside(t *testing.T) {
	longHistory := "[" + strings.Repeat(`{"time": "2026-01-02T03:04:06Z", "event": "start", "to": "step_running"},`, 100) + `{"time": "2026-01-02T03:04:06Z", "event": "start", "to": "step_running"}]`
	tests := []struct {
		name     string
		gvk      schema.GroupVersionKind
		old, now string // status JSON; old "" means no stored status
		want     bool
	}{
		{name: "a valid change", gvk: hookGVK, old: `{"observedGeneration": 1}`, now: `{"observedGeneration": 1, "state": "step_running"}`, want: true},
		{name: "an invalid change", gvk: hookGVK, old: `{"observedGeneration": 1}`, now: `{"observedGeneration": 1, "state": "bogus"}`},
		{name: "an unchanged invalid value is forgiven", gvk: hookGVK, old: `{"state": "bogus"}`, now: `{"state": "bogus", "observedGeneration": 2}`, want: true},
		{name: "an invalid value changed to another", gvk: hookGVK, old: `{"state": "bogus"}`, now: `{"state": "worse"}`},
		{name: "an unchanged list past its maximum is forgiven", gvk: hookGVK, old: `{"history": ` + longHistory + `}`, now: `{"history": ` + longHistory + `, "observedGeneration": 3}`, want: true},
		{name: "a list grown past its maximum", gvk: hookGVK, old: `{"observedGeneration": 1}`, now: `{"history": ` + longHistory + `}`},
		{name: "a changed nested value", gvk: checkpointGVK, old: `{"conditions": [{"type": "Ready", "status": "True", "reason": "A", "message": "", "lastTransitionTime": "2026-01-02T03:04:06Z"}]}`,
			now: `{"conditions": [{"type": "Ready", "status": "True", "message": "", "lastTransitionTime": "2026-01-02T03:04:06Z"}]}`},
		{name: "no stored status: all of it is checked", gvk: hookGVK, now: `{"state": "bogus"}`},
		{name: "no stored status, valid", gvk: hookGVK, now: `{"state": "step_running"}`, want: true},
		{name: "a removed property", gvk: hookGVK, old: `{"state": "bogus", "observedGeneration": 1}`, now: `{"observedGeneration": 1}`, want: true},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old interface{}
			if tt.old != "" {
				old = decode(t, tt.old)
			}
			now := decode(t, tt.now)
			if got := v.StatusValidBeside(tt.gvk, now, old); got != tt.want {
				t.Errorf("StatusValidBeside %v, want %v", got, tt.want)
			}
			// The same verdict as the status schema with ratcheting, on
			// the whole objects, for the status's own errors.
			if old == nil {
				if whole := len(v.ValidateStatus(tt.gvk, now)) == 0; whole != tt.want {
					t.Errorf("ValidateStatus says valid %v", whole)
				}
				return
			}
			yml := hookYAML
			if tt.gvk == checkpointGVK {
				yml = checkpointYAML
			}
			oldObj := decode(t, yml)
			set("metadata", withStoredMeta(t, oldObj["metadata"]))(t, oldObj)
			oldObj["status"] = old
			newObj := runtime.DeepCopyJSON(oldObj)
			newObj["status"] = now
			statusErrs := 0
			for _, e := range v.ValidateStatusUpdate(context.Background(), tt.gvk, newObj, oldObj) {
				if strings.HasPrefix(e.Field, "status") {
					statusErrs++
				}
			}
			if ratcheted := statusErrs == 0; ratcheted != tt.want {
				t.Errorf("the status schema with ratcheting says valid %v: %v", ratcheted, v.ValidateStatusUpdate(context.Background(), tt.gvk, newObj, oldObj))
			}
		})
	}
	for _, gvk := range []schema.GroupVersionKind{hookGVK, workerGVK, checkpointGVK} {
		if !crdschema.ValidatesStatusByProperty(v, gvk) {
			t.Errorf("%s's status is validated whole at every write", gvk.Kind)
		}
	}
}

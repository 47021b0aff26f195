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

package optimistic_test

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tether-dev/tether/internal/optimistic"
)

func TestRetryOnConflict(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "agents.tether.dev", Resource: "hooks"}, "busy", errors.New("modified"))
	refused := errors.New("refused")
	tests := []struct {
		name      string
		conflicts int
		then      error
		wantCalls int
		wantErr   error
	}{
		{name: "no conflict", then: nil, wantCalls: 1},
		{name: "a write that lost 20 times in a row still lands", conflicts: 20, then: nil, wantCalls: 21},
		{name: "an error that is no conflict ends it at once", then: refused, wantCalls: 1, wantErr: refused},
		{name: "after conflicts, another error ends it", conflicts: 3, then: refused, wantCalls: 4, wantErr: refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := optimistic.RetryOnConflict(func() error {
				calls++
				if calls <= tt.conflicts {
					return conflict
				}
				return tt.then
			})
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if calls != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls, tt.wantCalls)
			}
		})
	}
}

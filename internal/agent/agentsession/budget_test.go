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

package agentsession

import (
	"context"
	"testing"
	"time"
)

// The git run that finds lost work gets what the event's deadline leaves,
// less the answer's reserve, not a fixed half second.
func TestLiveChangesBudget(t *testing.T) {
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		deadline time.Duration // from now; 0: none
		want     time.Duration
	}{
		{"no deadline", 0, liveChangesTimeout},
		{"a whole event's deadline", Timeout, Timeout - answerReserve},
		{"most of it spent", 700 * time.Millisecond, 200 * time.Millisecond},
		{"less than the reserve left: no git", 300 * time.Millisecond, -200 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
				defer cancel()
			}
			if got := liveChangesBudget(ctx, now); got != tc.want {
				t.Errorf("budget %v, want %v", got, tc.want)
			}
		})
	}
	if Timeout-answerReserve <= liveChangesTimeout {
		t.Errorf("a whole event gives git %v, no more than the fixed %v it had", Timeout-answerReserve, liveChangesTimeout)
	}
}

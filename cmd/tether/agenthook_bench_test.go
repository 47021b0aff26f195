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

package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/agent/agentsession"
)

// BenchmarkAgentHook times the whole `tether agent hook` process for a
// PostToolUse (the heartbeat path, run on every tool call) and a
// SessionStart (the recovery file) on a store of 1,000 Hooks, the session
// bound to one of them with `tether agent bind`. PostToolUse is measured
// twice: as a burst of tool calls sees it (the heartbeat is fresh, so it is
// read and not written) and with a write every time (each call from a new
// session, so the status is updated). The reference in the same
// run is `tether version`, the process's start-up floor; the goal is a
// PostToolUse within 1.5 times of it.
func BenchmarkAgentHook(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, "store")
	store := openStore(b, dir)
	populate(b, store.Client(), 1000)
	_ = store.Close()
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	if _, err := agentsession.WriteBinding(ws, agentsession.Binding{Namespace: "default", Hook: "hook-00500"}); err != nil {
		b.Fatal(err)
	}
	timeIt := func(stdin string, args ...string) time.Duration {
		cmd := exec.Command(tetherBin, args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "TETHER_STORE="+dir)
		cmd.Stdin = strings.NewReader(stdin)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		if err != nil || strings.Contains(string(out), "warning") {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
		return took
	}
	postToolUse := `{"session_id":"s1","cwd":"` + ws + `","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"x"}}`
	sessionStart := `{"session_id":"s1","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	// Warm the page cache.
	timeIt(postToolUse, "agent", "hook")
	timeIt(sessionStart, "agent", "hook")
	timeIt("", "version")
	var post, write, start, ref []time.Duration
	i := 0
	for b.Loop() {
		i++
		post = append(post, timeIt(postToolUse, "agent", "hook"))
		write = append(write, timeIt(strings.Replace(postToolUse, `"s1"`, fmt.Sprintf(`"w%d"`, i), 1), "agent", "hook"))
		timeIt(postToolUse, "agent", "hook") // s1 holds the Hook again, unmeasured
		start = append(start, timeIt(sessionStart, "agent", "hook"))
		ref = append(ref, timeIt("", "version"))
	}
	quantile := func(d []time.Duration, q float64) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[int(q*float64(len(d)-1)+0.5)]
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(quantile(post, 0.5)), "posttooluse-p50-ms")
	b.ReportMetric(ms(quantile(post, 0.99)), "posttooluse-p99-ms")
	b.ReportMetric(ms(quantile(write, 0.5)), "posttooluse-write-p50-ms")
	b.ReportMetric(ms(quantile(write, 0.99)), "posttooluse-write-p99-ms")
	b.ReportMetric(ms(quantile(start, 0.5)), "sessionstart-p50-ms")
	b.ReportMetric(ms(quantile(start, 0.99)), "sessionstart-p99-ms")
	b.ReportMetric(ms(quantile(ref, 0.5)), "ref-version-p50-ms")
	b.ReportMetric(ms(quantile(ref, 0.99)), "ref-version-p99-ms")
	b.ReportMetric(float64(quantile(post, 0.5))/float64(quantile(ref, 0.5)), "posttooluse-ratio-to-ref")
	b.ReportMetric(float64(quantile(write, 0.5))/float64(quantile(ref, 0.5)), "posttooluse-write-ratio-to-ref")
}

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
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// BenchmarkConsoleOverview measures the console's overview on a store of
// 1,000 and 10,000 Hooks (with their Workers and Checkpoints, as
// BenchmarkLocalOperatorScale10k fills it) served by tether run: the time
// to the first complete render once the reconcilers synced (while their
// first wave runs), the median render once tether run is idle, and its
// RSS then, with the overview open and following changes, beside the RSS
// of tether run on the same store without a console, measured in the same
// run.
func BenchmarkConsoleOverview(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("hooks=%d", n), func(b *testing.B) {
			home := scaleHome(b)
			dir := filepath.Join(b.TempDir(), "store")
			fill := testsupport.Store(b, dir, testsupport.WithoutFsync)
			newScaleFleet(b, n).populate(b, fill.Client(), "default", scaleProto(b), 8)
			_ = fill.Close()

			b.ResetTimer()
			without := consoleRun(b, dir, home, n, "--metrics-bind-address", "0", "--console-bind-address", "0")
			with := consoleRun(b, dir, home, n, "--metrics-bind-address", "127.0.0.1:0")
			b.StopTimer()
			b.ReportMetric(ms(with.first), "first-render-ms")
			b.ReportMetric(ms(with.median), "render-p50-ms")
			b.ReportMetric(float64(with.bytes)/(1<<20), "page-MiB")
			b.ReportMetric(with.rss, "rss-console-MiB")
			b.ReportMetric(without.rss, "rss-without-MiB")
			b.ReportMetric(with.rss/without.rss, "rss-ratio")
		})
	}
}

type consoleResult struct {
	first, median time.Duration
	bytes         int
	rss           float64
}

// consoleRun starts tether run on dir with args, waits for its Hook
// controller to sync, renders the overview when a console is served (with
// an event stream open, as a browser keeps it), and reads its RSS once
// settled.
func consoleRun(b *testing.B, dir, home string, hooks int, args ...string) consoleResult {
	b.Helper()
	cmd := exec.Command(tetherBin, append([]string{"run", "--store", dir}, args...)...)
	cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	log := &syncBuffer{}
	sig := newStartSignals()
	go scanSynced(stderr, log, sig)
	select {
	case <-sig.synced:
	case <-time.After(5 * time.Minute):
		b.Fatalf("tether run never synced:\n%s", log.String())
	}
	var res consoleResult
	if m := regexp.MustCompile(`"msg":"serving the console".*"url":"(http://[^"]+/)"`).FindStringSubmatch(log.String()); m != nil {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rows := fmt.Sprintf("%d of %d", hooks, hooks)
		start := time.Now()
		resp, err := http.Get(m[1])
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), rows) {
			b.Fatalf("GET %s: %d %v, without %q:\n%.2000s", m[1], resp.StatusCode, err, rows, body)
		}
		res.first, res.bytes = time.Since(start), len(body)
		var took []time.Duration
		waitIdle(b, cmd.Process.Pid)
		for range 5 {
			start := time.Now()
			resp, err := http.Get(m[1])
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		res.median = took[len(took)/2]
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, m[1]+"events", nil)
		if err != nil {
			b.Fatal(err)
		}
		stream, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = stream.Body.Close() }()
		if line, err := bufio.NewReader(stream.Body).ReadString('\n'); err != nil {
			b.Fatalf("the event stream: %v %q", err, line)
		}
	} else if !slices.Contains(args, "0") {
		b.Fatalf("tether run logged no console URL:\n%s", log.String())
	}
	waitIdle(b, cmd.Process.Pid)
	res.rss, _ = procMemory(b, cmd.Process.Pid)
	return res
}

// waitIdle waits until pid spends less than 5% of a second on the CPU: the
// reconcilers' first wave is over.
func waitIdle(b *testing.B, pid int) {
	b.Helper()
	ticks := func() int64 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatal(err)
		}
		// The fields after the command's closing parenthesis; utime and
		// stime are the 14th and 15th of the line.
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		return u + s
	}
	deadline := time.Now().Add(5 * time.Minute)
	last := ticks()
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		now := ticks()
		if now-last < 5 {
			return
		}
		last = now
	}
	b.Logf("tether run was still busy after 5 minutes")
}

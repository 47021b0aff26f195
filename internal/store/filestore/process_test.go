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

package filestore_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/atomicfs"
)

// The tests below re-execute the test binary as a helper process, so that
// several real processes share one store and can be killed with SIGKILL.
const helperEnv = "TETHER_FILESTORE_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "increment":
		os.Exit(runIncrementer())
	case "writer":
		os.Exit(runWriter())
	case stackHelper:
		os.Exit(runWithinStack())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(3)
	}
}

func openForHelper() (client.Client, func()) {
	s, err := newStore(os.Getenv("TETHER_STORE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	return s.Client(), func() { _ = s.Close() }
}

const countAnnotation = "test.tether.dev/count"

func readCount(h *agentsv1alpha1.Hook) int {
	n, _ := strconv.Atoi(h.Annotations[countAnnotation])
	return n
}

// runIncrementer adds 1 to the count annotation of hook "counter" N times,
// retrying on conflicts.
func runIncrementer() int {
	c, done := openForHelper()
	defer done()
	ctx := context.Background()
	n, _ := strconv.Atoi(os.Getenv("INCREMENTS"))
	for i := 0; i < n; i++ {
		for {
			h := &agentsv1alpha1.Hook{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "counter"}, h); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if h.Annotations == nil {
				h.Annotations = map[string]string{}
			}
			h.Annotations[countAnnotation] = strconv.Itoa(readCount(h) + 1)
			err := c.Update(ctx, h)
			if err == nil {
				break
			}
			if !apierrors.IsConflict(err) {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	return 0
}

// runWriter updates hooks w0..w4 round-robin forever, printing
// "name value resourceVersion" after each acknowledged write.
func runWriter() int {
	c, done := openForHelper()
	defer done()
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		name := fmt.Sprintf("w%d", i%5)
		h := &agentsv1alpha1.Hook{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if h.Annotations == nil {
			h.Annotations = map[string]string{}
		}
		value := readCount(h) + 1
		h.Annotations[countAnnotation] = strconv.Itoa(value)
		if err := c.Update(ctx, h); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(out, "%s %d %s\n", name, value, h.ResourceVersion)
		_ = out.Flush()
	}
}

func helperCommand(t *testing.T, dir, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "TETHER_STORE="+dir)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestMultiProcessIncrements(t *testing.T) {
	const processes, increments = 8, 200
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	if err := s.Client().Create(ctx, hook("counter")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, processes)
	for i := 0; i < processes; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := helperCommand(t, dir, "increment", fmt.Sprintf("INCREMENTS=%d", increments))
			if err := cmd.Run(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal("incrementer:", err)
	}
	h := &agentsv1alpha1.Hook{}
	if err := s.Client().Get(ctx, client.ObjectKey{Namespace: "default", Name: "counter"}, h); err != nil {
		t.Fatal(err)
	}
	if got := readCount(h); got != processes*increments {
		t.Fatalf("count = %d, want %d: updates were lost", got, processes*increments)
	}
}

// crashKills is how many times TestCrashSafety kills a writer; the
// torture target raises it.
var crashKills = envInt("TETHER_CRASH_KILLS", 200)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func TestCrashSafety(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openStore(t, dir)
	for i := 0; i < 5; i++ {
		if err := s.Client().Create(ctx, hook(fmt.Sprintf("w%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close()
	acked := map[string]int{}
	for kill := 0; kill < crashKills; kill++ {
		cmd := helperCommand(t, dir, "writer")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Let it get going, then kill it at a random moment mid-write.
		first, ok := <-lines
		if !ok {
			t.Fatalf("kill %d: the writer died before its first write", kill)
		}
		time.Sleep(time.Duration(rand.IntN(10000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		for _, line := range append([]string{first}, drain(lines)...) {
			f := strings.Fields(line)
			if len(f) != 3 {
				continue // a line cut by the kill was never acknowledged
			}
			v, _ := strconv.Atoi(f[1])
			acked[f[0]] = max(acked[f[0]], v)
		}

		s := openStore(t, dir)
		list := &agentsv1alpha1.HookList{}
		if err := s.Client().List(ctx, list); err != nil {
			t.Fatalf("kill %d: list: %v", kill, err)
		}
		if len(list.Items) != 5 {
			t.Fatalf("kill %d: %d hooks parse, want 5", kill, len(list.Items))
		}
		for _, h := range list.Items {
			if got := readCount(&h); got < acked[h.Name] {
				t.Fatalf("kill %d: %s has count %d, but %d was acknowledged", kill, h.Name, got, acked[h.Name])
			}
		}
		_ = s.Close()
	}
	// What the killed writers left under temp names went with the next
	// open, and a Close leaves none of its own.
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temp files left after %d kills: %v", crashKills, left)
	}
	t.Logf("%d kills, acknowledged writes per hook: %v", crashKills, acked)
}

// tempFiles lists the temp files below dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range storeFiles(t, dir) {
		if strings.HasPrefix(filepath.Base(f), atomicfs.TempPrefix) {
			out = append(out, f)
		}
	}
	return out
}

func drain(ch <-chan string) []string {
	var out []string
	for l := range ch {
		out = append(out, l)
	}
	return out
}

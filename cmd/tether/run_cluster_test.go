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
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/cli"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// TestRunOnClusterWithLeaderElection runs `tether run --cluster` against a
// real kube-apiserver through a kubeconfig: it becomes ready, wins the
// leader Lease in the -n namespace, and stops cleanly on SIGTERM.
func TestRunOnClusterWithLeaderElection(t *testing.T) {
	env := testenv.Start(t)
	probe := freeAddr(t)
	cmd := exec.Command(tetherBin, "run", "--cluster", "--kubeconfig", env.Kubeconfig,
		"-n", "default", "--leader-elect", "--health-probe-bind-address", probe)
	output := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lease := &coordinationv1.Lease{}
	for {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: cli.LeaderElectionID}, lease)
		if err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("tether run --cluster never took the leader Lease (last error %v):\n%s", err, output.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/readyz", probe))
	if err != nil {
		t.Fatalf("readyz: %v\n%s", err, output.String())
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz answered %d", resp.StatusCode)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("tether run --cluster exited with %v after SIGTERM:\n%s", err, output.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("tether run --cluster did not stop within 30s of SIGTERM:\n%s", output.String())
	}
}

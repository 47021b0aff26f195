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

package testenv

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestStart(t *testing.T) {
	env := Start(t)
	var hooks agentsv1alpha1.HookList
	if err := env.Client.List(context.Background(), &hooks); err != nil {
		t.Fatalf("the Hook CRD is not served: %v", err)
	}
	var namespaces corev1.NamespaceList
	if err := env.Client.List(context.Background(), &namespaces); err != nil {
		t.Fatal(err)
	}
	if len(namespaces.Items) == 0 {
		t.Fatal("no namespaces on the API server")
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed; the kubeconfig is checked by the CLI's cluster tests")
	}
	out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "get", "hooks", "-A").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No resources found") {
		t.Fatalf("kubectl with the kubeconfig: %v\n%s", err, out)
	}
}

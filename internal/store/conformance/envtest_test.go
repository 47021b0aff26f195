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

package conformance_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tether-dev/tether/internal/store/conformance"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// TestConformanceOnKubeAPIServer runs the suite against a real
// kube-apiserver. The file store runs the same suite in its own package.
func TestConformanceOnKubeAPIServer(t *testing.T) {
	c := testenv.Start(t).Client
	n := 0
	conformance.Run(t, conformance.Backend{
		Client: c,
		NewNamespace: func(t *testing.T) string {
			n++
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("conformance-%d", n)}}
			if err := c.Create(context.Background(), ns); err != nil {
				t.Fatal(err)
			}
			return ns.Name
		},
	})
}

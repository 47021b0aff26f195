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

package eventsink

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const testNamespace = "team-a"

// newScheme returns a scheme with the client-go types (core/v1,
// events.k8s.io/v1, ...), as the store's scheme would have.
func newScheme(t *testing.T) *k8sruntime.Scheme {
	t.Helper()
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatalf("building scheme: %v", err)
	}
	return s
}

// newStore returns a fake client standing in for tether's file store,
// optionally with interceptors.
func newStore(t *testing.T, scheme *k8sruntime.Scheme, funcs ...interceptor.Funcs) client.WithWatch {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, f := range funcs {
		b = b.WithInterceptorFuncs(f)
	}
	return b.Build()
}

// subject returns the object the tests record events about.
func subject() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:      "app-config",
		Namespace: testNamespace,
		UID:       "0b5d8c9e-1111-4222-8333-944445555666",
	}}
}

// listEvents returns the core/v1 Events stored in testNamespace, sorted by
// message.
func listEvents(t *testing.T, c client.Client) []corev1.Event {
	t.Helper()
	list := &corev1.EventList{}
	if err := c.List(context.Background(), list, client.InNamespace(testNamespace)); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Message < list.Items[j].Message })
	return list.Items
}

// waitForEvents polls the store until cond holds for its events (or fails
// the test after 10s) and returns them.
func waitForEvents(t *testing.T, c client.Client, what string, cond func([]corev1.Event) bool) []corev1.Event {
	t.Helper()
	var got []corev1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			got = listEvents(t, c)
			return cond(got), nil
		})
	if err != nil {
		t.Fatalf("waiting for %s: %v; stored events: %s", what, err, describe(got))
	}
	return got
}

// describe renders events compactly for failure messages.
func describe(evs []corev1.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "\n  %s %s %s %q count=%d", e.Name, e.Type, e.Reason, e.Message, e.Count)
		if e.Series != nil {
			fmt.Fprintf(&b, " series=%d", e.Series.Count)
		}
	}
	return b.String()
}

// brokerGoroutines returns the stacks of goroutines run by client-go's event
// machinery, other than the caller's.
func brokerGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := strings.Split(string(buf), "\n\n")
	var out []string
	for _, s := range stacks[1:] { // the first one is the caller's
		for _, pkg := range []string{
			"k8s.io/client-go/tools/record.",
			"k8s.io/client-go/tools/events.",
			"k8s.io/apimachinery/pkg/watch.",
			"k8s.io/apimachinery/pkg/util/wait.",
		} {
			if strings.Contains(s, pkg) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// waitNoBrokerGoroutines fails the test if client-go's event goroutines are
// still running after a bounded wait.
func waitNoBrokerGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := brokerGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d event goroutines still running:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

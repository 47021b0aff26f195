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

package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
)

// podlessCache is a cache that has not seen any Pod yet.
type podlessCache struct{ client.Client }

func (c podlessCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Pod); ok {
		return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// A Worker's Pod that the cache has not seen yet, as right after this
// reconciler created it, is not gone: counting it as a crash started a
// second Pod beside it (TestWorkerPodStuckPending failed so under load).
// A Pod the API server has not either is.
func TestPodNotInTheCacheYetIsNotGone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		podExists  bool
		wantPod    string
		wantCrashs int
	}{
		{name: "created, not cached yet", podExists: true, wantPod: "agent-0", wantCrashs: 0},
		{name: "deleted", podExists: false, wantPod: "agent-1", wantCrashs: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			w := podWorkerForUnit("agent")
			w.Status.Phase = v1.WorkerPending
			w.Status.PodName = "agent-0"
			objs := []client.Object{w}
			if tc.podExists {
				objs = append(objs, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: "agent-0", Namespace: "default", CreationTimestamp: metav1.Now()},
					Spec:       w.Spec.Template.Spec,
					Status:     corev1.PodStatus{Phase: corev1.PodPending},
				})
			}
			store := fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&v1.Worker{}).WithObjects(objs...).Build()
			r, err := newWorkerReconciler(podlessCache{store}, store, events.NewFakeRecorder(16), WorkerOptions{LogDir: t.TempDir(), PodPendingTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.procs.close)
			r.pods = true // as on a backend that serves Pods
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)}); err != nil {
				t.Fatal(err)
			}
			got := &v1.Worker{}
			if err := store.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.PodName != tc.wantPod || len(got.Status.Crashes) != tc.wantCrashs {
				t.Errorf("pod %q, %d crashes; want %q, %d", got.Status.PodName, len(got.Status.Crashes), tc.wantPod, tc.wantCrashs)
			}
			pods := &corev1.PodList{}
			if err := store.List(context.Background(), pods); err != nil {
				t.Fatal(err)
			}
			if tc.podExists && len(pods.Items) != 1 {
				t.Errorf("%d pods after the reconcile, want the one it had", len(pods.Items))
			}
		})
	}
}

func podWorkerForUnit(name string) *v1.Worker {
	grace := int64(5)
	return &v1.Worker{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Finalizers: []string{WorkerFinalizer}},
		Spec: v1.WorkerSpec{
			Restart: v1.RestartPolicy{Auto: true, MaxCrashes: 3, Window: &metav1.Duration{Duration: 10 * time.Minute}},
			Template: &corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []corev1.Container{{Name: "agent", Image: "example.invalid/agent:1"}},
				},
			},
		},
	}
}

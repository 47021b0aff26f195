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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// TestWorkerPodRightsPolicy installs the ValidatingAdmissionPolicy of
// config/default on kube-apiserver: bob, who may create and update Workers
// but not Pods, can give no Worker a Pod template (on create or by an
// update), while a Worker without one and an update that keeps the
// template are his to make; alice, who may also create Pods, can.
func TestWorkerPodRightsPolicy(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	var policies int
	for _, u := range renderDefault(t) {
		if strings.HasPrefix(u.GetKind(), "ValidatingAdmissionPolicy") {
			if err := c.Create(ctx, u); err != nil {
				t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
			}
			policies++
		}
	}
	if policies != 2 {
		t.Fatalf("config/default renders %d ValidatingAdmissionPolicy objects, want the policy and its binding", policies)
	}
	workers := rbacv1.PolicyRule{APIGroups: []string{v1.GroupVersion.Group}, Resources: []string{"workers"}, Verbs: []string{"create", "get", "update"}}
	pods := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}
	as := map[string]client.Client{}
	for user, rules := range map[string][]rbacv1.PolicyRule{"bob": {workers}, "alice": {workers, pods}} {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: user}, Rules: rules}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		for _, o := range []client.Object{role, binding} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		cl, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		as[user] = cl
	}
	worker := func(name string, template bool) *v1.Worker {
		w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		if template {
			w.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "example.invalid/agent:1"}}}}
		}
		return w
	}
	wantRefused := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.template: bob may not create Pods in namespace default") {
			t.Errorf("%s: %v, want Forbidden by the policy naming spec.template", what, err)
		}
	}

	// The API server enforces a new policy once it has loaded it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := as["bob"].Create(ctx, worker("bob-pods", true), client.DryRunAll)
		if err != nil {
			wantRefused("bob's Worker with a template", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy never refused bob's Worker with a Pod template")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := as["bob"].Create(ctx, worker("bob-remote", false)); err != nil {
		t.Fatalf("bob's Worker without a template: %v", err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &v1.Worker{}
		if err := as["bob"].Get(ctx, client.ObjectKey{Namespace: "default", Name: "bob-remote"}, w); err != nil {
			return err
		}
		w.Spec.Template = worker("", true).Spec.Template
		return as["bob"].Update(ctx, w)
	})
	wantRefused("bob's update giving a Worker a template", err)

	if err := as["alice"].Create(ctx, worker("alice-pods", true)); err != nil {
		t.Fatalf("alice, who may create Pods, gave a Worker a template: %v", err)
	}
	// An update that keeps the template (a label, as the operator's
	// finalizer keeps it) needs no right to create Pods.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &v1.Worker{}
		if err := as["bob"].Get(ctx, client.ObjectKey{Namespace: "default", Name: "alice-pods"}, w); err != nil {
			return err
		}
		w.Labels = map[string]string{"team": "a"}
		return as["bob"].Update(ctx, w)
	})
	if err != nil {
		t.Errorf("bob's update that keeps alice's template: %v", err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &v1.Worker{}
		if err := as["bob"].Get(ctx, client.ObjectKey{Namespace: "default", Name: "alice-pods"}, w); err != nil {
			return err
		}
		w.Spec.Template.Spec.Containers[0].Image = "example.invalid/other:1"
		return as["bob"].Update(ctx, w)
	})
	wantRefused("bob's update changing alice's template", err)
}

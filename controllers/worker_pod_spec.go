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
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// EventInvalidTemplate is the Warning recorded when the API server's
// dry-run create refuses the Pod built from a Worker's spec.template.
const EventInvalidTemplate = "InvalidTemplate"

// invalidTemplateError is a dry-run create refused as invalid: the
// fields it names are the Worker's (spec.template...), not the Pod's.
type invalidTemplateError struct {
	fields []string
	err    error
}

func (e *invalidTemplateError) Error() string {
	return "spec.template is invalid: " + strings.Join(e.fields, "; ")
}

func (e *invalidTemplateError) Unwrap() error { return e.err }

// templateInvalid turns a dry-run create's Invalid StatusError into the
// Worker's fields: a Pod field path is the template's under spec.template,
// except the agent container's first injected env entries, which tether
// prepended: the TETHER_* variables, then the specEnv entries of spec.env.
func templateInvalid(err error, injected, specEnv int) *invalidTemplateError {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return nil
	}
	const env = "spec.containers[0].env["
	out := &invalidTemplateError{err: err}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			f := c.Field
			rest, isEnv := strings.CutPrefix(f, env)
			var i int
			if _, scanErr := fmt.Sscanf(rest, "%d]", &i); isEnv && scanErr == nil {
				tail := rest[strings.Index(rest, "]")+1:]
				switch tetherEnv := injected - specEnv; {
				case i < tetherEnv:
					f = "the TETHER_* environment" + tail
				case i < injected:
					f = fmt.Sprintf("spec.env[%d]%s", i-tetherEnv, tail)
				default:
					f = fmt.Sprintf("spec.template.%s%d]%s", env, i-injected, tail)
				}
			} else if f != "" {
				f = "spec.template." + f
			}
			out.fields = append(out.fields, strings.TrimSpace(f+": "+c.Message))
		}
	}
	if len(out.fields) == 0 {
		out.fields = []string{status.Status().Message}
	}
	return out
}

// podName is the name of the Worker's Pod started after restarts
// restarts; a retried start gets the same name, so it never runs two.
func podName(w *v1.Worker, restarts int32) string {
	return workerfsm.PodName(w, restarts)
}

// podFor builds the Worker's next Pod from its template.
func (r *WorkerReconciler) podFor(ctx context.Context, w *v1.Worker, scheme *runtime.Scheme) (*corev1.Pod, error) {
	t := w.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: t.ObjectMeta, Spec: t.Spec}
	pod.Name = podName(w, w.Status.Restarts)
	pod.GenerateName = ""
	pod.Namespace = w.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[WorkerLabel] = w.Name
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	if len(pod.Spec.Containers) == 0 {
		return nil, &invalidTemplateError{fields: []string{"spec.template.spec.containers: Required value: the first container is the agent's"}}
	}
	// The operator creates the Pod, so the Worker's creator needs no right
	// to create Pods: it never creates one that asks for more than the
	// baseline Pod Security Standard allows, unless an administrator said so.
	if !r.allowsPrivileged(w.Namespace) {
		if fields := privilegedFields(&t.Spec); len(fields) > 0 {
			return nil, &privilegedTemplateError{namespace: w.Namespace, fields: fields}
		}
	}
	restrictedDefaults(&pod.Spec)
	env := []corev1.EnvVar{
		{Name: config.WorkerEnv, Value: w.Name},
		{Name: config.NamespaceEnv, Value: w.Namespace},
		{Name: config.ActorEnv, Value: "worker/" + w.Name},
		{Name: config.ClusterEnv, Value: "true"},
	}
	if hook := r.assignedHook(ctx, w); hook != "" {
		env = append(env, corev1.EnvVar{Name: config.HookEnv, Value: hook})
	}
	for _, e := range w.Spec.Env {
		env = append(env, corev1.EnvVar{Name: e.Name, Value: e.Value})
	}
	agent := &pod.Spec.Containers[0]
	agent.Env = append(env, agent.Env...)
	if err := controllerutil.SetControllerReference(w, pod, scheme); err != nil {
		return nil, err
	}
	return pod, nil
}

// createPod creates the Worker's next Pod. A server-side dry-run create
// goes first: the CRD keeps spec.template schemaless, so the API server's
// Pod validation and admission are the template's validator, and a refusal
// as Invalid is an invalidTemplateError naming the Worker's fields, with
// no Pod created.
func (r *WorkerReconciler) createPod(ctx context.Context, w *v1.Worker) (string, error) {
	pod, err := r.podFor(ctx, w, r.client.Scheme())
	if err != nil {
		return "", err
	}
	injected := len(pod.Spec.Containers[0].Env) - len(w.Spec.Template.Spec.Containers[0].Env)
	if err := r.client.Create(ctx, pod.DeepCopy(), client.DryRunAll); err != nil && !apierrors.IsAlreadyExists(err) {
		if invalid := templateInvalid(err, injected, len(w.Spec.Env)); invalid != nil {
			return "", invalid
		}
		return "", err
	}
	err = r.client.Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		existing := &corev1.Pod{}
		if getErr := r.reader.Get(ctx, client.ObjectKeyFromObject(pod), existing); getErr != nil {
			return "", getErr
		}
		if !metav1.IsControlledBy(existing, w) {
			return "", apierrors.NewForbidden(corev1.Resource("pods"), pod.Name,
				fmt.Errorf("a Pod named %s exists and is not this Worker's", pod.Name))
		}
		return pod.Name, nil
	}
	if err != nil {
		return "", err
	}
	return pod.Name, nil
}

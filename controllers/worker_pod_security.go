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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// ReasonPrivilegedTemplate is the Ready reason, and the Warning Event's,
// of a Worker whose spec.template asks for what the operator does not
// grant a Worker's creator (privileged containers, host namespaces,
// hostPath volumes, host ports, added capabilities beyond the baseline
// Pod Security Standard, privilege escalation) in a namespace where no
// administrator allowed it.
const ReasonPrivilegedTemplate = "PrivilegedTemplate"

// AllNamespaces in WorkerOptions.PrivilegedNamespaces allows privileged
// Worker templates in every namespace.
const AllNamespaces = "*"

// baselineCapabilities are the capabilities the baseline Pod Security
// Standard lets a container add.
var baselineCapabilities = []corev1.Capability{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// privilegedFields lists what spec of a Worker's template asks for beyond
// what any Worker creator may have: each as the Worker's field path and
// the value that makes it privileged, in the order of the spec.
func privilegedFields(spec *corev1.PodSpec) []string {
	const base = "spec.template.spec."
	var out []string
	add := func(path, format string, args ...any) {
		out = append(out, base+path+": "+fmt.Sprintf(format, args...))
	}
	if spec.HostNetwork {
		add("hostNetwork", "true")
	}
	if spec.HostPID {
		add("hostPID", "true")
	}
	if spec.HostIPC {
		add("hostIPC", "true")
	}
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
		add("securityContext.seccompProfile.type", "Unconfined")
	}
	for i, v := range spec.Volumes {
		if v.HostPath != nil {
			add(fmt.Sprintf("volumes[%d].hostPath", i), "path %q", v.HostPath.Path)
		}
	}
	containers := func(field string, cs []corev1.Container) {
		for i := range cs {
			c := &cs[i]
			at := fmt.Sprintf("%s[%d]", field, i)
			for j, p := range c.Ports {
				if p.HostPort != 0 {
					add(fmt.Sprintf("%s.ports[%d].hostPort", at, j), "%d", p.HostPort)
				}
			}
			sc := c.SecurityContext
			if sc == nil {
				continue
			}
			if ptr.Deref(sc.Privileged, false) {
				add(at+".securityContext.privileged", "true")
			}
			if ptr.Deref(sc.AllowPrivilegeEscalation, false) {
				add(at+".securityContext.allowPrivilegeEscalation", "true")
			}
			if sc.Capabilities != nil {
				for j, c := range sc.Capabilities.Add {
					if !slices.Contains(baselineCapabilities, corev1.Capability(strings.TrimPrefix(string(c), "CAP_"))) {
						add(fmt.Sprintf("%s.securityContext.capabilities.add[%d]", at, j), "%s", c)
					}
				}
			}
			if sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
				add(at+".securityContext.seccompProfile.type", "Unconfined")
			}
		}
	}
	containers("initContainers", spec.InitContainers)
	containers("containers", spec.Containers)
	return out
}

// privilegedTemplateError is a Worker template refused for asking for what
// the operator does not grant a Worker's creator.
type privilegedTemplateError struct {
	namespace string
	fields    []string
}

func (e *privilegedTemplateError) Error() string {
	return fmt.Sprintf("spec.template asks for privileges a Worker does not grant in namespace %s: %s; no Pod was created: "+
		"remove them, or have an administrator allow privileged Workers there (tether run --allow-privileged-workers=%s)",
		e.namespace, strings.Join(e.fields, "; "), e.namespace)
}

// allowsPrivileged tells whether an administrator allowed privileged
// Worker templates in namespace.
func (r *WorkerReconciler) allowsPrivileged(namespace string) bool {
	return slices.Contains(r.privilegedNamespaces, namespace) || slices.Contains(r.privilegedNamespaces, AllNamespaces)
}

// restrictedDefaults sets, where the template leaves them unset, what the
// restricted Pod Security Standard requires of a Pod: runAsNonRoot, the
// RuntimeDefault seccomp profile, and in every container no privilege
// escalation and all capabilities dropped. A field the template sets is
// kept, so a namespace's Pod Security Admission judges what was asked.
func restrictedDefaults(spec *corev1.PodSpec) {
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	psc := spec.SecurityContext
	if psc.RunAsNonRoot == nil {
		psc.RunAsNonRoot = ptr.To(true)
	}
	if psc.SeccompProfile == nil {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if c.SecurityContext == nil {
				c.SecurityContext = &corev1.SecurityContext{}
			}
			sc := c.SecurityContext
			if sc.Capabilities == nil {
				sc.Capabilities = &corev1.Capabilities{}
			}
			if len(sc.Capabilities.Drop) == 0 {
				sc.Capabilities.Drop = []corev1.Capability{"ALL"}
			}
			// The API server refuses allowPrivilegeEscalation false beside
			// privileged or CAP_SYS_ADMIN.
			sysAdmin := slices.ContainsFunc(sc.Capabilities.Add, func(c corev1.Capability) bool {
				return strings.TrimPrefix(string(c), "CAP_") == "SYS_ADMIN"
			})
			if sc.AllowPrivilegeEscalation == nil && !ptr.Deref(sc.Privileged, false) && !sysAdmin {
				sc.AllowPrivilegeEscalation = ptr.To(false)
			}
		}
	}
}

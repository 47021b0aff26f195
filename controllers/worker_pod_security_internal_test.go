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
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestRestrictedDefaults: unset fields get restricted's values, set ones
// are kept, and allowPrivilegeEscalation stays unset where false would
// make the Pod invalid (privileged, CAP_SYS_ADMIN).
func TestRestrictedDefaults(t *testing.T) {
	tests := []struct {
		name       string
		sc         *corev1.SecurityContext
		nonRoot    *bool
		wantAPE    *bool
		wantDrop   []corev1.Capability
		wantNoRoot bool
	}{
		{"unset", nil, nil, ptr.To(false), []corev1.Capability{"ALL"}, true},
		{"root asked for", nil, ptr.To(false), ptr.To(false), []corev1.Capability{"ALL"}, false},
		{"own drop", &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}}, nil, ptr.To(false), []corev1.Capability{"NET_RAW"}, true},
		{"privileged", &corev1.SecurityContext{Privileged: ptr.To(true)}, nil, nil, []corev1.Capability{"ALL"}, true},
		{"sys admin", &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CAP_SYS_ADMIN"}}}, nil, nil, []corev1.Capability{"ALL"}, true},
		{"escalation asked for", &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}, nil, ptr.To(true), []corev1.Capability{"ALL"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", SecurityContext: tt.sc}}}
			if tt.nonRoot != nil {
				spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: tt.nonRoot}
			}
			restrictedDefaults(spec)
			sc := spec.Containers[0].SecurityContext
			if got := spec.SecurityContext.RunAsNonRoot; *got != tt.wantNoRoot {
				t.Errorf("runAsNonRoot %v, want %v", *got, tt.wantNoRoot)
			}
			if spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("seccomp %v", spec.SecurityContext.SeccompProfile)
			}
			if (sc.AllowPrivilegeEscalation == nil) != (tt.wantAPE == nil) || (tt.wantAPE != nil && *sc.AllowPrivilegeEscalation != *tt.wantAPE) {
				t.Errorf("allowPrivilegeEscalation %v, want %v", sc.AllowPrivilegeEscalation, tt.wantAPE)
			}
			if !slices.Equal(sc.Capabilities.Drop, tt.wantDrop) {
				t.Errorf("drop %v, want %v", sc.Capabilities.Drop, tt.wantDrop)
			}
		})
	}
}

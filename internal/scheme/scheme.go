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

// Package scheme assembles the runtime.Scheme of every kind tether reads or
// writes: the agents.tether.dev API and the Kubernetes built-in types.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// New returns a scheme with the built-in Kubernetes types and the tether API.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := agentsv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

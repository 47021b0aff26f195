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

package cli

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/doctor"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// doctorInspect is the file store's read-only inspection for tether
// doctor: filestore.InspectAll with tether's scheme and CRDs, which takes
// no lock and writes nothing.
func doctorInspect() (doctor.Inspect, error) {
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	crds, err := crd.Load()
	if err != nil {
		return nil, err
	}
	opts := filestore.Options{Scheme: s, CRDs: crds, Log: logr.Discard()}
	return func(ctx context.Context, dir string) ([]doctor.Problem, []*unstructured.Unstructured, error) {
		in, err := filestore.InspectAll(ctx, dir, opts)
		if err != nil {
			return nil, nil, err
		}
		problems := make([]doctor.Problem, len(in.Problems))
		for i, p := range in.Problems {
			problems[i] = doctor.Problem{Path: p.Path, Reason: p.Reason, Fix: p.Fix}
		}
		return problems, in.Objects, nil
	}, nil
}

// isNoStore tells whether err says there is no store where one was named.
func isNoStore(err error) bool {
	return errors.Is(err, filestore.ErrNoStore) || errors.Is(err, doctor.ErrNotAStore)
}

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

// Package cachestore reads the objects a controller-runtime informer
// holds from its store, without the deep copy of each that a List through
// the cache makes (50,000 Checkpoints or 100,000 Hooks are tens to
// hundreds of MB and seconds of CPU a list). What it returns is the
// cache's own objects: read them, never change them.
package cachestore

import (
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Of returns the store of inf, or false when inf offers none.
func Of(inf cache.Informer) (toolscache.Store, bool) {
	st, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, false
	}
	return st.GetStore(), true
}

// Objects returns the objects of type T that inf holds, read only. It
// fails when inf offers no store to read.
func Objects[T client.Object](inf cache.Informer) ([]T, error) {
	store, ok := Of(inf)
	if !ok {
		return nil, fmt.Errorf("the informer (%T) offers no store to read", inf)
	}
	objs := store.List()
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

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

// Package startupgc relaxes the garbage collector while the process starts.
//
// The package initializers of the Kubernetes libraries allocate several MB
// that stays live (schemes, metrics, flag sets); with the default GOGC the
// collector runs during start-up and again in the first milliseconds of
// every verb, on a heap that is almost all live. This package's init runs
// before those of the k8s.io and sigs.k8s.io packages (Go initializes
// packages in import path order once their imports are initialized) and
// sets StartupGCPercent; the root command calls End once the verb is known.
// A GOGC set in the environment is always left alone.
package startupgc

import (
	"os"
	"runtime/debug"
)

// StartupGCPercent is the GOGC of the start-up. It bounds the heap (its
// minimum goal is 4 MB × 4) instead of turning the collector off.
const StartupGCPercent = 400

// defaultGCPercent is the runtime's GOGC when the environment sets none.
const defaultGCPercent = 100

var userSet bool

func init() {
	_, userSet = os.LookupEnv("GOGC")
	if !userSet {
		debug.SetGCPercent(StartupGCPercent)
	}
}

// End restores the default GOGC unless the user set GOGC.
func End() {
	if !userSet {
		debug.SetGCPercent(defaultGCPercent)
	}
}

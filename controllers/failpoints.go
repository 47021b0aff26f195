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

// FailpointTag is the build tag that compiles the reconcilers' test
// failpoints in. The shipped build (make build) leaves it out, so no
// environment can make a shipped reconcile block.
const FailpointTag = "tetherfailpoints"

// FailpointRestartedEnv names a file. When it is set in the environment of
// a `tether run` built with FailpointTag, the Worker reconciler writes the
// PID of a process it has just started after a crash to that file and then
// never records the crash: the reconcile blocks until the process is
// killed. The end-to-end test that kills tether run between a restart and
// its record uses it.
const FailpointRestartedEnv = "TETHER_FAILPOINT_RESTARTED"

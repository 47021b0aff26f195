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

package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tether-dev/tether/internal/fieldpath"
)

// NotifyReason is what a notifier can ask to hear about.
type NotifyReason string

// The notify reasons. Each stands for the Events that report it; the
// notify reconciler holds the mapping.
const (
	// NotifyWorkerCrashed is a Worker's process dying other than by a clean
	// exit or a stop tether asked for.
	NotifyWorkerCrashed NotifyReason = "WorkerCrashed"
	// NotifyRestartsExhausted is a Worker entering CrashLoop.
	NotifyRestartsExhausted NotifyReason = "RestartsExhausted"
	// NotifyHookStale is a working Hook moved to recovering because its
	// heartbeat expired.
	NotifyHookStale NotifyReason = "HookStale"
	// NotifyAwaitingHuman is a Hook waiting for a person (`tether await`).
	NotifyAwaitingHuman NotifyReason = "AwaitingHuman"
	// NotifyCompleted is a Hook whose last step passed.
	NotifyCompleted NotifyReason = "Completed"
)

// NotifyReasons are every notify reason, in the order the docs list them.
var NotifyReasons = []NotifyReason{
	NotifyWorkerCrashed, NotifyRestartsExhausted, NotifyHookStale, NotifyAwaitingHuman, NotifyCompleted,
}

// Notifier defaults.
const (
	// DefaultNotifyTimeout is how long a notifier command may run.
	DefaultNotifyTimeout = 10 * time.Second
	// DefaultNotifyMinInterval is the least time between two runs of a
	// notifier for the same object and reason.
	DefaultNotifyMinInterval = time.Minute
)

// Notifier is one command `tether run` runs, without a shell, when
// something it asks for happens; the command reads one JSON document on
// stdin that describes it.
type Notifier struct {
	// Name identifies the notifier in logs and in the record of what was
	// notified (an annotation on each Event); default the base name of
	// command[0]. Names are unique.
	Name string `json:"name,omitempty"`
	// Command is the argv run: command[0] is looked up in $PATH.
	Command []string `json:"command"`
	// Reasons are the notify reasons it runs for; empty means all.
	Reasons []NotifyReason `json:"reasons,omitempty"`
	// Timeout is how long the command may run before it is killed
	// (default DefaultNotifyTimeout).
	Timeout metav1.Duration `json:"timeout,omitempty"`
	// MinInterval is the least time between two runs for the same object
	// and reason; a later occurrence inside it is not notified. Default
	// DefaultNotifyMinInterval; 0s notifies every occurrence.
	MinInterval *metav1.Duration `json:"minInterval,omitempty"`
}

// Wants tells whether n runs for reason r.
func (n *Notifier) Wants(r NotifyReason) bool {
	return len(n.Reasons) == 0 || slices.Contains(n.Reasons, r)
}

// Interval is n's effective minimum interval.
func (n *Notifier) Interval() time.Duration {
	if n.MinInterval == nil {
		return DefaultNotifyMinInterval
	}
	return n.MinInterval.Duration
}

// settleNotifiers checks the notifiers of a configuration file, whose
// document is root, and fills in their defaults.
func settleNotifiers(root *yamlv3.Node, ns []Notifier) error {
	names := map[string]int{}
	for i := range ns {
		n := &ns[i]
		at := fmt.Sprintf("notify[%d]", i)
		if len(n.Command) == 0 || n.Command[0] == "" {
			return fieldError(root, at+".command", "give the command to run as a list, such as [notify-send, tether]")
		}
		if n.Timeout.Duration < 0 {
			return fieldError(root, at+".timeout", "%s is negative", n.Timeout.Duration)
		}
		if n.MinInterval != nil && n.MinInterval.Duration < 0 {
			return fieldError(root, at+".minInterval", "%s is negative", n.MinInterval.Duration)
		}
		for j, r := range n.Reasons {
			if !slices.Contains(NotifyReasons, r) {
				return fieldError(root, fmt.Sprintf("%s.reasons[%d]", at, j), "%q is not a notify reason; use %s", r, reasonList())
			}
		}
		field := at + ".name"
		if n.Name == "" {
			n.Name, field = filepath.Base(n.Command[0]), at+".command"
		}
		if errs := validation.IsDNS1123Label(n.Name); len(errs) > 0 {
			return fieldError(root, field, "notifier name %q: %s; set notify[%d].name", n.Name, strings.Join(errs, "; "), i)
		}
		if j, dup := names[n.Name]; dup {
			return fieldError(root, field, "notifier name %q is also notify[%d]'s; give each notifier its own name", n.Name, j)
		}
		names[n.Name] = i
		if n.Timeout.Duration == 0 {
			n.Timeout.Duration = DefaultNotifyTimeout
		}
	}
	return nil
}

func reasonList() string {
	s := make([]string, len(NotifyReasons))
	for i, r := range NotifyReasons {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

// fieldError is a configuration error about field, located at its line in
// root, the file's document.
func fieldError(root *yamlv3.Node, field, format string, args ...any) error {
	return &fieldpath.Error{Line: fieldpath.Line(root, field), Field: field, Err: fmt.Errorf(format, args...)}
}

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

package agentsession

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
)

// How a Hook was found.
const (
	// ViaEnv is config.HookEnv in the agent's environment.
	ViaEnv = "env"
	// ViaBinding is the checkout's binding file.
	ViaBinding = "binding"
	// ViaWorkspace is the one non-terminal Hook whose spec.workspace
	// contains the agent's working directory.
	ViaWorkspace = "workspace"
)

// Target is the Hook an event is about.
type Target struct {
	// Key names the Hook.
	Key client.ObjectKey
	// Via tells how it was found: ViaEnv, ViaBinding or ViaWorkspace.
	Via string
	// Source names the variable or file it came from, for messages.
	Source string
}

// ErrNoHook means no Hook is bound to the working directory.
var ErrNoHook = errors.New("no tether Hook for this workspace")

// AmbiguousError means several non-terminal Hooks claim the working
// directory; tether never guesses.
type AmbiguousError struct {
	// Dir is the working directory.
	Dir string
	// Namespace is where the Hooks were looked for.
	Namespace string
	// Candidates are their names, sorted.
	Candidates []string
}

// Error names the candidates and how to choose one.
func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%d non-terminal Hooks in namespace %q have a spec.workspace containing %s (%s): bind this checkout to one with `tether agent bind HOOK`, or set %s",
		len(e.Candidates), e.Namespace, e.Dir, strings.Join(e.Candidates, ", "), config.HookEnv)
}

// Resolve finds the Hook the agent in cwd works on: config.HookEnv (in
// namespace config.NamespaceEnv when set, else namespace), else the
// checkout's binding file, else the one non-terminal Hook in namespace
// whose spec.workspace contains cwd. Only the last lists Hooks. A binding
// file it cannot use is reported through warn and skipped.
func Resolve(ctx context.Context, c client.Reader, namespace, cwd string, getenv func(string) string, warn func(string)) (Target, error) {
	if name := strings.TrimSpace(getenv(config.HookEnv)); name != "" {
		ns := namespace
		if n := strings.TrimSpace(getenv(config.NamespaceEnv)); n != "" {
			ns = n
		}
		b := Binding{Namespace: ns, Hook: name}
		if err := b.Validate(); err != nil {
			return Target{}, fmt.Errorf("$%s/$%s: %w", config.HookEnv, config.NamespaceEnv, err)
		}
		return Target{Key: client.ObjectKey{Namespace: ns, Name: name}, Via: ViaEnv, Source: "$" + config.HookEnv}, nil
	}
	if cwd != "" {
		b, path, err := ReadBinding(cwd)
		switch {
		case err != nil:
			warn(err.Error())
		case b != nil:
			return Target{Key: client.ObjectKey{Namespace: b.Namespace, Name: b.Hook}, Via: ViaBinding, Source: path}, nil
		}
	}
	if cwd == "" {
		return Target{}, ErrNoHook
	}
	name, err := ForWorkspace(ctx, c, namespace, cwd)
	if err != nil {
		return Target{}, err
	}
	return Target{Key: client.ObjectKey{Namespace: namespace, Name: name}, Via: ViaWorkspace, Source: "spec.workspace"}, nil
}

// ForWorkspace finds the one non-terminal Hook in namespace whose
// spec.workspace contains dir: ErrNoHook when there is none, an
// *AmbiguousError when there are several.
func ForWorkspace(ctx context.Context, c client.Reader, namespace, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	list := &v1.HookList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return "", err
	}
	var matches []string
	for i := range list.Items {
		h := &list.Items[i]
		if h.Status.State.IsTerminal() || h.Spec.Workspace == "" || !filepath.IsAbs(h.Spec.Workspace) {
			continue
		}
		ws := filepath.Clean(h.Spec.Workspace)
		if within(ws, abs) || within(ws, real) {
			matches = append(matches, h.Name)
			continue
		}
		if rws, err := filepath.EvalSymlinks(ws); err == nil && rws != ws && within(rws, real) {
			matches = append(matches, h.Name)
		}
	}
	switch len(matches) {
	case 0:
		return "", ErrNoHook
	case 1:
		return matches[0], nil
	}
	return "", &AmbiguousError{Dir: abs, Namespace: namespace, Candidates: matches}
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

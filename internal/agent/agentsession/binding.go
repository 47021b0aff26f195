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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// BindingDir is the directory, inside a checkout's git directory (or, outside
// git, a directory's .tether), that holds the binding file.
const BindingDir = "tether"

// BindingFile is the binding file's name.
const BindingFile = "binding"

// maxBindingSize bounds what is read of a binding file.
const maxBindingSize = 4096

// maxGitFileSize bounds what is read of a ".git" file (a worktree's pointer).
const maxGitFileSize = 4096

// Binding is what `tether agent bind` records: the Hook the agent in a
// checkout works on.
type Binding struct {
	// Namespace is the Hook's namespace.
	Namespace string `json:"namespace"`
	// Hook is the Hook's name.
	Hook string `json:"hook"`
}

// Validate checks the names; a binding file is untrusted input.
func (b Binding) Validate() error {
	if errs := validation.IsDNS1123Subdomain(b.Hook); len(errs) > 0 {
		return fmt.Errorf("hook: %q: %s", b.Hook, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(b.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace: %q: %s", b.Namespace, strings.Join(errs, "; "))
	}
	return nil
}

// BindingPath is the binding file for the checkout containing dir: inside
// its git directory ($(git rev-parse --git-dir)/tether/binding, so it is
// per checkout, per worktree, and never committed) when dir is in a git
// work tree; else dir/.tether/binding. It runs no git: it finds the .git
// directory, or the ".git" file of a worktree or submodule, upward from dir.
func BindingPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	gitDir, err := findGitDir(abs)
	if err != nil {
		return "", err
	}
	if gitDir != "" {
		return filepath.Join(gitDir, BindingDir, BindingFile), nil
	}
	return filepath.Join(abs, ".tether", BindingFile), nil
}

// lookupPath is the binding file that applies to dir: the git directory's
// when dir is in a work tree; else the nearest dir/.tether/binding upward.
func lookupPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	gitDir, err := findGitDir(abs)
	if err != nil {
		return "", err
	}
	if gitDir != "" {
		return filepath.Join(gitDir, BindingDir, BindingFile), nil
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".tether", BindingFile)
		if _, err := os.Lstat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// findGitDir returns the git directory of the work tree containing dir, or
// "" when there is none.
func findGitDir(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return p, nil
		case err == nil && fi.Mode().IsRegular():
			data, err := atomicfs.ReadRegular(p, maxGitFileSize)
			if err != nil {
				return "", fmt.Errorf("%s: %w", p, err)
			}
			line, _, _ := strings.Cut(string(data), "\n")
			target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
			target = strings.TrimSpace(target)
			if !ok || target == "" {
				return "", fmt.Errorf("%s: not a \"gitdir: PATH\" file", p)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return filepath.Clean(target), nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// ReadBinding reads the binding that applies to dir. It returns the file's
// path, and a nil Binding when there is none. A file that is a symbolic
// link, not a regular file, too large, truncated or not a valid binding is
// an error naming the file; it never panics.
func ReadBinding(dir string) (*Binding, string, error) {
	path, err := lookupPath(dir)
	if err != nil || path == "" {
		return nil, "", err
	}
	if err := checkBindingDir(filepath.Dir(path)); err != nil {
		return nil, path, fmt.Errorf("binding file %s: %w", path, err)
	}
	data, err := atomicfs.ReadRegular(path, maxBindingSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("binding file %s: %w", path, err)
	}
	var b Binding
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, path, fmt.Errorf("binding file %s: not a binding (%w); run tether agent bind HOOK again", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, path, fmt.Errorf("binding file %s: not a binding (more after the object, at byte %d); run tether agent bind HOOK again", path, dec.InputOffset())
	}
	if b.Namespace == "" {
		b.Namespace = "default"
	}
	if err := b.Validate(); err != nil {
		return nil, path, fmt.Errorf("binding file %s: %w; run tether agent bind HOOK again", path, err)
	}
	return &b, path, nil
}

// WriteBinding records b for the checkout containing dir, atomically. It
// refuses to write through a symbolic link: a linked binding directory is
// an error, and a linked binding file is replaced, not followed.
func WriteBinding(dir string, b Binding) (string, error) {
	if err := b.Validate(); err != nil {
		return "", err
	}
	path, err := BindingPath(dir)
	if err != nil {
		return "", err
	}
	if err := checkBindingDir(filepath.Dir(path)); err != nil {
		return path, err
	}
	data, err := json.Marshal(b)
	if err != nil {
		return path, err
	}
	if err := atomicfs.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return path, fmt.Errorf("binding file %s: %w", path, err)
	}
	return path, nil
}

// RemoveBinding removes the binding of the checkout containing dir. It
// reports whether there was one.
func RemoveBinding(dir string) (string, bool, error) {
	path, err := BindingPath(dir)
	if err != nil {
		return "", false, err
	}
	if err := checkBindingDir(filepath.Dir(path)); err != nil {
		return path, false, err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if err := atomicfs.RemoveDurable(path); err != nil {
		return path, false, fmt.Errorf("binding file %s: %w", path, err)
	}
	return path, true, nil
}

// checkBindingDir refuses a binding directory that is a symbolic link or
// not a directory: a binding is neither read nor written through a link.
func checkBindingDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("binding directory %s is a symbolic link; refusing to write through it", dir)
	case !fi.IsDir():
		return fmt.Errorf("binding directory %s is not a directory", dir)
	}
	return nil
}

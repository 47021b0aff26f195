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

// Package gitchanges lists the files changed in a git working tree, for
// `tether step begin` to record the files a step touches.
package gitchanges

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// Changed returns the workspace-relative paths that `git status` reports in
// the working tree dir: modified, staged, deleted, renamed (both names) and
// untracked files, sorted and without duplicates. Ignored files are left out.
func Changed(ctx context.Context, dir string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "git", "status", "--porcelain=v1", "-z", "--untracked-files=all")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return nil, fmt.Errorf("git status in %s: %s", dir, strings.TrimSpace(stderr.String()))
		}
		return nil, fmt.Errorf("git status in %s: %w", dir, err)
	}
	return Parse(out)
}

// Parse reads `git status --porcelain=v1 -z` output. Each entry is
// "XY PATH\0"; a rename or copy is followed by "ORIG_PATH\0".
func Parse(out []byte) ([]string, error) {
	var paths []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("git status: malformed entry %q", f)
		}
		paths = append(paths, f[3:])
		if x := f[0]; x == 'R' || x == 'C' {
			i++
			if i >= len(fields) || fields[i] == "" {
				return nil, fmt.Errorf("git status: rename %q lacks its original path", f)
			}
			paths = append(paths, fields[i])
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

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

package snapshot

import (
	"context"
	"fmt"
	"strings"
)

// statusEntry is one path of `git status --porcelain=v2 -z`.
type statusEntry struct {
	// path is relative to the top of the working tree.
	path string
	// worktree tells whether the working tree differs from the index at
	// path; false for a change staged in the index only.
	worktree bool
}

// status runs the one `git status` of the package in top, on index (empty:
// the repository's own), and parses it: every changed, deleted, unmerged
// and untracked path, ignored files left out.
func status(ctx context.Context, top, index string) ([]statusEntry, error) {
	out, err := gitCmd{dir: top, index: index, args: []string{
		"-c", "core.quotepath=false", "-c", "status.relativePaths=false",
		"status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignored=no",
	}}.run(ctx)
	if err != nil {
		return nil, err
	}
	return parseStatus(out)
}

// parseStatus reads `git status --porcelain=v2 -z` output.
func parseStatus(out []byte) ([]statusEntry, error) {
	var entries []statusEntry
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		switch f[0] {
		case '1':
			parts := strings.SplitN(f, " ", 9)
			if len(parts) != 9 || len(parts[1]) != 2 {
				return nil, fmt.Errorf("git status: malformed entry %q", f)
			}
			entries = append(entries, statusEntry{path: parts[8], worktree: parts[1][1] != '.'})
		case '2':
			parts := strings.SplitN(f, " ", 10)
			if len(parts) != 10 || i+1 >= len(fields) {
				return nil, fmt.Errorf("git status: malformed entry %q", f)
			}
			i++
			entries = append(entries, statusEntry{path: parts[9], worktree: true}, statusEntry{path: fields[i], worktree: true})
		case 'u':
			parts := strings.SplitN(f, " ", 11)
			if len(parts) != 11 {
				return nil, fmt.Errorf("git status: malformed entry %q", f)
			}
			entries = append(entries, statusEntry{path: parts[10], worktree: true})
		case '?':
			entries = append(entries, statusEntry{path: strings.TrimPrefix(f, "? "), worktree: true})
		case '!', '#':
		default:
			return nil, fmt.Errorf("git status: unknown entry %q", f)
		}
	}
	return entries, nil
}

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

package gitchanges

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Since returns the workspace-relative paths whose content in the working
// tree dir differs from commit's tree: changed, added (untracked included,
// ignored files left out) and deleted files, sorted. commit is typically a
// checkpoint's snapshot commit, which holds untracked files too, or the
// HEAD it was taken on.
func Since(ctx context.Context, dir, commit string) ([]string, error) {
	diff, err := run(ctx, dir, nil, "diff", "--name-only", "--no-renames", "-z", commit, "--")
	if err != nil {
		return nil, err
	}
	untracked, err := run(ctx, dir, nil, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	candidates := append(split(diff), split(untracked)...)
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	if len(candidates) == 0 {
		return nil, nil
	}
	// git diff compares through the index, so a file that commit holds
	// but the index does not is reported although it may be unchanged:
	// compare each candidate's content with commit's blob.
	args := []string{"ls-tree", "-r", "-z", "--full-tree", commit, "--"}
	if len(candidates) <= 500 {
		args = append(args, candidates...)
	}
	tree, err := run(ctx, dir, nil, args...)
	if err != nil {
		return nil, err
	}
	blobs := map[string]string{}
	for _, entry := range split(tree) {
		meta, path, ok := strings.Cut(entry, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			blobs[path] = f[2]
		}
	}
	var present []string
	for _, p := range candidates {
		if fi, err := os.Lstat(filepath.Join(dir, p)); err == nil && fi.Mode().IsRegular() && !strings.Contains(p, "\n") {
			present = append(present, p)
		}
	}
	hashes := map[string]string{}
	if len(present) > 0 {
		out, err := run(ctx, dir, []byte(strings.Join(present, "\n")+"\n"), "hash-object", "--stdin-paths")
		if err != nil {
			return nil, err
		}
		lines := strings.Fields(string(out))
		if len(lines) != len(present) {
			return nil, fmt.Errorf("git hash-object: %d hashes for %d files", len(lines), len(present))
		}
		for i, p := range present {
			hashes[p] = lines[i]
		}
	}
	var changed []string
	for _, p := range candidates {
		blob, inTree := blobs[p]
		hash, isFile := hashes[p]
		switch {
		case inTree && isFile && blob == hash:
		case !inTree && !isFile && !exists(filepath.Join(dir, p)):
		default:
			changed = append(changed, p)
		}
	}
	return changed, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func run(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_LITERAL_PATHSPECS=1")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %w: %s", args[0], dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func split(out []byte) []string {
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

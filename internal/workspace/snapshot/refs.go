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
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
)

// Refs is one look at the checkpoint refs of a workspace's repository:
// every ref under RefPrefix with the commit it points at, and whether each
// such commit's tree is in the repository. It answers Verify for any number
// of Checkpoints of that workspace from three git runs, where Verify runs
// three for each.
type Refs struct {
	// commits maps a ref's full name to the object it points at.
	commits map[string]string
	// trees holds the commits whose tree the repository has.
	trees map[string]bool
}

// ReadRefs looks at the checkpoint refs of workspace's repository once.
// Its errors are openRepo's: the workspace is missing, not a repository,
// or git fails.
func ReadRefs(ctx context.Context, workspace string) (*Refs, error) {
	r, err := openRepo(ctx, workspace)
	if err != nil {
		return nil, err
	}
	out, err := git(ctx, r.top, "for-each-ref", "--format=%(objectname) %(refname)", RefPrefix)
	if err != nil {
		return nil, err
	}
	rs := &Refs{commits: map[string]string{}, trees: map[string]bool{}}
	var query bytes.Buffer
	var asked []string
	for line := range strings.SplitSeq(trimNL(out), "\n") {
		commit, ref, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if _, seen := rs.trees[commit]; !seen {
			rs.trees[commit] = false
			asked = append(asked, commit)
			fmt.Fprintf(&query, "%s^{tree}\n", commit)
		}
		rs.commits[ref] = commit
	}
	if len(asked) == 0 {
		return rs, nil
	}
	// One cat-file for every commit: a line per query, in order, either
	// "<tree> tree <size>" or "<query> missing".
	out, err = gitCmd{dir: r.top, args: []string{"cat-file", "--batch-check"}, stdin: &query}.run(ctx)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan() && i < len(asked); i++ {
		if fields := strings.Fields(sc.Text()); len(fields) == 3 && fields[1] == "tree" {
			rs.trees[asked[i]] = true
		}
	}
	return rs, nil
}

// Verify is the package's Verify answered from this look: nil when ref
// points at commit and commit's tree is present, else ErrRefMissing,
// ErrRefMoved or ErrCommitMissing, with the same messages.
func (rs *Refs) Verify(ref, commit string) error {
	got, ok := rs.commits[ref]
	switch {
	case !ok:
		return fmt.Errorf("%w: %s", ErrRefMissing, ref)
	case got != commit:
		return fmt.Errorf("%w: %s is %s, not %s", ErrRefMoved, ref, short(got), short(commit))
	case !rs.trees[commit]:
		return fmt.Errorf("%w: %s", ErrCommitMissing, commit)
	}
	return nil
}

// Covers tells whether ref is one a look holds: a ref under RefPrefix.
// Verify answers for any other ref.
func (rs *Refs) Covers(ref string) bool { return strings.HasPrefix(ref, RefPrefix) }

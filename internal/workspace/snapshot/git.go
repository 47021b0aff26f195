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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Identity is the author and committer of every snapshot commit, so that a
// capture works without any user git configuration.
const (
	IdentityName  = "tether"
	IdentityEmail = "tether@localhost"
)

// gitCmd describes one git invocation.
type gitCmd struct {
	dir   string
	args  []string
	index string    // GIT_INDEX_FILE; empty leaves git's default
	stdin io.Reader // nil for none
	env   []string  // extra variables
}

// GitError is a git command that failed: its arguments, exit status and
// standard error.
type GitError struct {
	// Args are git's arguments.
	Args []string
	// ExitCode is git's exit status, -1 when it did not start or was killed.
	ExitCode int
	// Stderr is git's standard error, trimmed.
	Stderr string
	// Err is the underlying error.
	Err error
}

// Error implements error.
func (e *GitError) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// Unwrap returns the underlying error.
func (e *GitError) Unwrap() error { return e.Err }

// baseEnv is the environment of every git command: the process
// environment without any GIT_* variable (a git hook that calls tether
// exports GIT_DIR and GIT_INDEX_FILE, which must not leak into the
// snapshot), without the system configuration, with a fixed identity, and
// with core.fsmonitor off: the workspace's configuration is untrusted
// input, and a capture must not run a command it names (git runs the
// fsmonitor hook on every scan of the working tree).
func baseEnv() []string {
	env := make([]string, 0, len(os.Environ())+8)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME="+IdentityName, "GIT_AUTHOR_EMAIL="+IdentityEmail,
		"GIT_COMMITTER_NAME="+IdentityName, "GIT_COMMITTER_EMAIL="+IdentityEmail,
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false",
	)
}

var envCache = baseEnv()

// run runs git and returns its standard output.
func (g gitCmd) run(ctx context.Context) ([]byte, error) {
	var stdout bytes.Buffer
	err := g.runTo(ctx, &stdout)
	return stdout.Bytes(), err
}

// runTo runs git with its standard output going to w.
func (g gitCmd) runTo(ctx context.Context, w io.Writer) error {
	cmd := exec.CommandContext(ctx, "git", g.args...)
	cmd.Dir = g.dir
	var env []string
	if g.index != "" || len(g.env) > 0 {
		env = append(append([]string(nil), envCache...), g.env...)
		if g.index != "" {
			env = append(env, "GIT_INDEX_FILE="+g.index)
		} else {
			env = append(env, "GIT_OPTIONAL_LOCKS=0")
		}
	} else {
		// Commands on the user's index must never rewrite it, not even
		// to refresh its stat cache.
		env = append(append([]string(nil), envCache...), "GIT_OPTIONAL_LOCKS=0")
	}
	cmd.Env = env
	cmd.Stdin = g.stdin
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		}
		return &GitError{Args: g.args, ExitCode: code, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return nil
}

// git is a shorthand for a git command without a temporary index.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitCmd{dir: dir, args: args}.run(ctx)
}

// trimNL trims one trailing newline.
func trimNL(b []byte) string {
	return strings.TrimSuffix(string(b), "\n")
}

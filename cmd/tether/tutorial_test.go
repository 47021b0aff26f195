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

package main_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tutorialStep is one ```sh block of a walkthrough and the ```text block
// that follows it, if any: the output it must show.
type tutorialStep struct {
	line   int // of the ```sh fence, for messages
	end    int // index of the line after its closing fence
	script string
	expect []string
}

// tutorialSteps extracts the shell blocks of a Markdown document, each with
// the output block right after it (nothing but blank lines between them).
func tutorialSteps(doc string) []tutorialStep {
	var steps []tutorialStep
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok || (lang != "sh" && lang != "text") {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		switch {
		case lang == "sh":
			steps = append(steps, tutorialStep{line: start + 1, end: i + 1, script: strings.Join(body, "\n")})
		case len(steps) > 0 && strings.TrimSpace(strings.Join(lines[steps[len(steps)-1].end:start], "")) == "":
			steps[len(steps)-1].expect = body
		}
	}
	return steps
}

var spaces = regexp.MustCompile(`\s+`)

// matchLine tells whether an output line shows an expected one: the
// pieces of want between "..." appear in line in order, with runs of
// white space compared as one space.
func matchLine(want, line string) bool {
	line = spaces.ReplaceAllString(line, " ")
	for _, piece := range strings.Split(want, "...") {
		piece = strings.TrimSpace(spaces.ReplaceAllString(piece, " "))
		i := strings.Index(line, piece)
		if i < 0 {
			return false
		}
		line = line[i+len(piece):]
	}
	return true
}

// TestTutorial runs docs/tutorial.md: its shell blocks in order in one
// shell, with the built binary first in $PATH, each block's output checked
// against the output block after it.
func TestTutorial(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := tutorialSteps(string(data))
	checked := 0
	for _, s := range steps {
		if len(s.expect) > 0 {
			checked++
		}
	}
	if len(steps) < 8 || checked < 7 {
		t.Fatalf("docs/tutorial.md has %d shell blocks, %d with their output; the walkthrough is missing", len(steps), checked)
	}
	tmp := t.TempDir()
	sh := exec.Command("bash", "--noprofile", "--norc")
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(tetherBin)+":"+os.Getenv("PATH"), "TMPDIR="+tmp, "LC_ALL=C.UTF-8")
	sh.Dir = tmp
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	sh.Stdout, sh.Stderr = pw, pw
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The shell's process group holds tether run if a step failed
		// before the tutorial stopped it.
		_ = syscall.Kill(-sh.Process.Pid, syscall.SIGTERM)
		_ = stdin.Close()
		_ = sh.Wait()
		_ = pw.Close()
		// Workers run in sessions of their own; the tutorial's agent exits by itself.
	})
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for n, step := range steps {
		marker := fmt.Sprintf("__tutorial_step_%d__", n)
		if _, err := fmt.Fprintf(stdin, "%s\nprintf '\\n%s %%d\\n' $?\n", step.script, marker); err != nil {
			t.Fatalf("docs/tutorial.md:%d: writing to the shell: %v", step.line, err)
		}
		var out []string
		status := -1
		timeout := time.After(90 * time.Second)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("docs/tutorial.md:%d: the shell ended; output:\n%s", step.line, strings.Join(out, "\n"))
				}
				if rest, ok := strings.CutPrefix(l, marker+" "); ok {
					_, _ = fmt.Sscanf(rest, "%d", &status)
					break read
				}
				out = append(out, l)
			case <-timeout:
				t.Fatalf("docs/tutorial.md:%d: no end after 90s:\n%s\noutput so far:\n%s", step.line, step.script, strings.Join(out, "\n"))
			}
		}
		if status != 0 {
			t.Fatalf("docs/tutorial.md:%d: exit %d:\n%s\noutput:\n%s", step.line, status, step.script, strings.Join(out, "\n"))
		}
		for _, want := range step.expect {
			if strings.TrimSpace(want) == "..." || strings.TrimSpace(want) == "" {
				continue
			}
			found := false
			for _, l := range out {
				if matchLine(want, l) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("docs/tutorial.md:%d: no output line shows %q; output:\n%s", step.line, want, strings.Join(out, "\n"))
			}
		}
	}
}

func TestMatchLine(t *testing.T) {
	cases := []struct {
		want, line string
		ok         bool
	}{
		{"a ... b", "xa  y   bz", true},
		{"NAME ... STATE", "NAME    STATE   AGE", true},
		{"b ... a", "a b", false},
		{"hook.agents.tether.dev/greet created", "hook.agents.tether.dev/greet created", true},
		{"code 3", "code  3", true},
		{"code 3", "code 4", false},
	}
	for _, c := range cases {
		if got := matchLine(c.want, c.line); got != c.ok {
			t.Errorf("matchLine(%q, %q) = %v", c.want, c.line, got)
		}
	}
}

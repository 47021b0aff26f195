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

package agentevent

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Trigger is a checkpoint trigger detected in a shell command. The values are
// the Checkpoint spec.trigger values.
type Trigger string

// Triggers a shell command can set off.
const (
	TriggerGitCommit Trigger = "git_commit"
	TriggerGitPush   Trigger = "git_push"
	TriggerPRCreated Trigger = "pr_created"
)

// maxShellRecursion bounds "bash -c 'bash -c ...'" nesting.
const maxShellRecursion = 4

// Detection is what a finished shell tool call says about git activity.
type Detection struct {
	// Triggers lists the triggers in the order their commands appear, each
	// at most once.
	Triggers []Trigger
	// PRURL is the pull request's URL from the command's output, when a
	// pull request was created and its URL printed.
	PRURL string
}

// Detect inspects a shell command the agent ran, and its output, for git
// commits, pushes and pull requests. A command that failed after its
// commit (git commit -m x && make test) still committed, so the caller
// passes failed calls too.
func Detect(command, stdout string) Detection {
	d := Detection{Triggers: DetectShell(command)}
	for _, t := range d.Triggers {
		if t == TriggerPRCreated {
			d.PRURL = PRURL(stdout)
		}
	}
	return d
}

var prURL = regexp.MustCompile(`https?://[^\s"'<>()]+/pull/[0-9]+`)

// PRURL returns the last pull request URL (".../pull/N") in text, or "".
func PRURL(text string) string {
	all := prURL.FindAllString(text, -1)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

// DetectShell returns the checkpoint triggers of a shell command line: a
// simple command that runs "git commit" (not --dry-run), "git push" (not
// --dry-run or -n), or "gh pr create" (not --dry-run). It reads lists joined
// by && || ; | & and newlines, subshells, env assignments and wrappers (env,
// command, exec, time, nohup, sudo), git's global options (-C DIR, -c K=V,
// --git-dir, ...), and "sh|bash -c STRING". Heredoc bodies and comments are
// skipped. Each trigger appears once, in order of first appearance.
func DetectShell(command string) []Trigger {
	var out []Trigger
	seen := map[Trigger]bool{}
	detectShell(command, 0, func(t Trigger) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

func detectShell(command string, depth int, emit func(Trigger)) {
	for _, argv := range splitCommands(command) {
		argv = stripPrefix(argv)
		if len(argv) == 0 {
			continue
		}
		switch filepath.Base(argv[0]) {
		case "git":
			if t, ok := gitTrigger(argv[1:]); ok {
				emit(t)
			}
		case "gh":
			if ghPRCreate(argv[1:]) {
				emit(TriggerPRCreated)
			}
		case "sh", "bash", "zsh", "dash":
			if depth < maxShellRecursion {
				for i := 1; i+1 < len(argv); i++ {
					if argv[i] == "-c" || (strings.HasPrefix(argv[i], "-") && !strings.HasPrefix(argv[i], "--") && strings.HasSuffix(argv[i], "c")) {
						detectShell(argv[i+1], depth+1, emit)
						break
					}
				}
			}
		}
	}
}

// stripPrefix drops leading variable assignments and wrapper commands.
func stripPrefix(argv []string) []string {
	for len(argv) > 0 {
		a := argv[0]
		switch {
		case isAssignment(a):
			argv = argv[1:]
		case a == "env" || a == "sudo" || a == "command" || a == "exec" || a == "time" || a == "nohup" || a == "builtin":
			argv = argv[1:]
			for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
				argv = argv[1:]
			}
		default:
			return argv
		}
	}
	return argv
}

func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j, c := range s[:i] {
		name := c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > 0 && c >= '0' && c <= '9'
		if !name {
			return false
		}
	}
	return true
}

// gitOptsWithValue are git's global options that take the next word.
var gitOptsWithValue = map[string]bool{
	"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--super-prefix": true, "--config-env": true, "--exec-path": false,
}

func gitTrigger(args []string) (Trigger, bool) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if gitOptsWithValue[args[i]] {
			i++
		}
		i++
	}
	if i >= len(args) {
		return "", false
	}
	sub, rest := args[i], args[i+1:]
	switch sub {
	case "commit":
		if hasFlag(rest, "--dry-run") || hasFlag(rest, "-h") || hasFlag(rest, "--help") {
			return "", false
		}
		return TriggerGitCommit, true
	case "push":
		if hasFlag(rest, "--dry-run") || hasFlag(rest, "-n") || hasFlag(rest, "-h") || hasFlag(rest, "--help") {
			return "", false
		}
		return TriggerGitPush, true
	}
	return "", false
}

func ghPRCreate(args []string) bool {
	var words []string
	for i := 0; i < len(args) && len(words) < 2; i++ {
		switch {
		case args[i] == "-R" || args[i] == "--repo":
			i++
		case strings.HasPrefix(args[i], "-"):
		default:
			words = append(words, args[i])
		}
	}
	if len(words) < 2 || words[0] != "pr" || (words[1] != "create" && words[1] != "new") {
		return false
	}
	return !hasFlag(args, "--dry-run") && !hasFlag(args, "--help") && !hasFlag(args, "-h")
}

// hasFlag reports whether flag appears in args before a "--".
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// splitCommands splits a shell command line into the argv of its simple
// commands. It is a reader, not a shell: quotes and backslashes are removed,
// "$(...)" and backquotes stay inside their word, and expansions are not
// performed.
func splitCommands(s string) [][]string { //nolint:gocyclo // one lexer over a command line, a case per token kind; split, its word and command state would be threaded through every piece
	var (
		cmds     [][]string
		argv     []string
		word     strings.Builder
		inWord   bool
		heredocs []heredoc
	)
	endWord := func() {
		if inWord {
			argv = append(argv, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(argv) > 0 {
			cmds = append(cmds, argv)
		}
		argv = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					word.WriteByte(s[i+1])
					inWord = true
				}
				i++
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				} else if s[i] == '$' && i+1 < len(s) && s[i+1] == '(' {
					end := matchParen(s, i+1)
					word.WriteString(s[i:end])
					i = end
					continue
				}
				word.WriteByte(s[i])
				i++
			}
			inWord = true
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			end := matchParen(s, i+1)
			word.WriteString(s[i:end])
			inWord = true
			i = end - 1
		case c == '`':
			end := len(s)
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				end = i + j + 2
			}
			word.WriteString(s[i:end])
			inWord = true
			i = end - 1
		case c == '#' && !inWord:
			for i+1 < len(s) && s[i+1] != '\n' {
				i++
			}
		case c == '\n':
			endCmd()
			i = skipHeredocs(s, i+1, heredocs) - 1
			heredocs = nil
		case c == ';' || c == '|' || c == '(' || c == ')' || c == '{' && !inWord || c == '}' && !inWord:
			endCmd()
		case c == '&':
			if inWord && (strings.HasSuffix(word.String(), ">") || strings.HasSuffix(word.String(), "<")) || i+1 < len(s) && s[i+1] == '>' {
				word.WriteByte(c)
				inWord = true
				continue
			}
			endCmd()
		case c == '<' && i+1 < len(s) && s[i+1] == '<' && (i+2 >= len(s) || s[i+2] != '<'):
			endWord()
			i += 2
			strip := i < len(s) && s[i] == '-'
			if strip {
				i++
			}
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			j := i
			for j < len(s) && strings.IndexByte(" \t\n;&|<>()", s[j]) < 0 {
				j++
			}
			delim := strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(s[i:j])
			if delim != "" {
				heredocs = append(heredocs, heredoc{delim: delim, strip: strip})
			}
			i = j - 1
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

type heredoc struct {
	delim string
	strip bool
}

// skipHeredocs returns the index after the bodies of docs, which start at i.
func skipHeredocs(s string, i int, docs []heredoc) int {
	for _, d := range docs {
		for i < len(s) {
			end := strings.IndexByte(s[i:], '\n')
			line := s[i:]
			next := len(s)
			if end >= 0 {
				line, next = s[i:i+end], i+end+1
			}
			i = next
			if d.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == d.delim {
				break
			}
		}
	}
	return i
}

// matchParen returns the index after the ')' that closes the '(' at open;
// len(s) when it is not closed. It counts parentheses only: quotes inside a
// command substitution (a heredoc's "don't") would mislead it more often than
// a parenthesis in quoted text.
func matchParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

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

// Package prompt renders `tether agent prompt`: the instructions that let a
// coding agent without hooks (any CLI agent) report its progress on a Hook
// with the agent verbs. The text depends only on the Hook's name and
// namespace, so it can go into a system prompt or an AGENTS.md once.
package prompt

import (
	"strings"
	"text/template"
)

var tmpl = template.Must(template.New("prompt").Parse(`# tether: task {{.Name}}

Your work on this task is tracked by tether in the Hook {{.Name}} (namespace
{{.Namespace}}), so that it survives crashes, restarts and context compaction.
Run these commands from the task's workspace. Each prints the task's state and
a "next:" line: do what that line says.

1. At the start, and after any crash, restart or compaction, read the
   recovery file and follow its "What to do now" section. Never redo a step
   it lists under DO NOT REPEAT.

       {{.Cmd}} recover {{.Name}}{{.NS}}

2. Before you work on a step:

       {{.Cmd}} step begin {{.Name}}{{.NS}} --working-on "what you are doing"

3. While you work, at least every few minutes (a task without heartbeats is
   declared stale and handed to recovery):

       {{.Cmd}} heartbeat {{.Name}}{{.NS}}

4. At a safe point (before a risky change, after a milestone), snapshot the
   workspace:

       {{.Cmd}} checkpoint {{.Name}}{{.NS}} -m "what is done"

5. When the step is done, run its validations:

       {{.Cmd}} step done {{.Name}}{{.NS}}

   Exit 0: the step passed; begin the next one. Exit 1: the validations
   failed (their output is on stderr): fix the cause, then step begin again
   as the "next:" line says. Never edit the Hook or its status yourself.

6. When you need a person (a decision, access, a review):

       {{.Cmd}} await {{.Name}}{{.NS}} --reason "what you need"

   Then stop and wait; {{.Cmd}} resume {{.Name}}{{.NS}} continues afterwards.

7. If the recovery file says the task is PAUSED, or a verb reports it
   completed, failed or abandoned: stop and start nothing new.

If a step cannot be done at all: {{.Cmd}} fail {{.Name}}{{.NS}} --reason "why".
`))

// Render returns the instructions for the Hook name in namespace. A
// namespace other than "default" is passed to every command with -n.
func Render(name, namespace string) []byte {
	ns := ""
	if namespace == "" {
		namespace = "default"
	}
	if namespace != "default" {
		ns = " -n " + namespace
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, struct{ Cmd, Name, Namespace, NS string }{"tether", name, namespace, ns}); err != nil {
		// The template is fixed and its data are strings: it cannot fail.
		panic(err)
	}
	return []byte(b.String())
}

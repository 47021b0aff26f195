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

package githooks

import (
	"strings"
	"text/template"
)

// scriptTemplate is the POSIX sh script tether installs as a git hook.
//
// It runs the chained hook (the one that was there before) in the
// foreground with git's arguments, stdin and environment, and exits with its
// status. tether's checkpoint runs at the same time in the background with
// its output in a log file under the git directory, so it never holds git's
// stdout or stderr open; the hook waits for it at most $TETHER_HOOK_WAIT
// seconds to report a failure on stderr, then leaves it running. `timeout`,
// where it exists, bounds the checkpoint to $TETHER_HOOK_TIMEOUT seconds.
//
// A chained sh or bash script is run with $0 set to this hook's own path,
// so hook managers that dispatch on their file name (husky 9) keep working.
var scriptTemplate = template.Must(template.New("hook").Parse(`#!/bin/sh
{{.Header}}
# Installed by ` + "`tether hooks install git`" + `; ` + "`tether hooks uninstall git`" + ` removes it and
# puts back the hook it chains ({{.Name}}{{.ChainedSuffix}}), if there is one.
# The chained hook runs as before, with the same arguments, stdin and exit
# status. tether's checkpoint (trigger {{.Trigger}}) runs in the background and
# never changes this hook's outcome: on failure it warns on stderr.
# Environment: TETHER_GIT_HOOKS=0 skips the checkpoint; TETHER_HOOK_WAIT (seconds,
# default {{.Wait}}) is how long to wait for it before leaving it in the
# background; TETHER_HOOK_TIMEOUT (seconds, default {{.Timeout}}) bounds it where
# ` + "`timeout`" + ` exists.

tether_bin={{.Tether}}
tether_chained="$0{{.ChainedSuffix}}"
{{- if .Stdin}}
# git writes one line per ref on stdin; both tether and the chained hook get it.
tether_input=$(cat; echo x)
tether_input=${tether_input%x}
{{- end}}

tether_checkpoint() {
	unset GIT_INDEX_FILE
	TETHER_IN_GIT_HOOK=1
	export TETHER_IN_GIT_HOOK
	tether_ws=$(git rev-parse --show-toplevel 2>/dev/null) || tether_ws=$(pwd)
{{- if .Stdin}}
	tether_remote=$(printf '%s' "$1" | sed 's#://[^/@]*@#://#')
	tether_url=$(printf '%s' "$2" | sed 's#://[^/@]*@#://#')
	tether_refs=$(printf '%s' "$tether_input" | awk '{ printf "%s%s", sep, $3; sep = " " }')
	if [ "$tether_remote" = "$tether_url" ]; then
		tether_desc="push to $tether_url: $tether_refs"
	else
		tether_desc="push to $tether_remote ($tether_url): $tether_refs"
	fi
{{- else}}
	tether_desc=$(git log -1 --format=%s "$tether_commit" 2>/dev/null)
{{- end}}
	tether_desc=$(printf '%.1000s' "$tether_desc")
	tether_limit=
	if command -v timeout >/dev/null 2>&1; then
		tether_limit="timeout $tether_timeout"
	fi
{{- if .Stdin}}
	printf '%s' "$tether_input" |
{{- end}}
	$tether_limit "$tether_bin"{{range .Flags}} {{.}}{{end}} checkpoint --workspace "$tether_ws" --trigger {{.Trigger}}{{if not .Stdin}} --commit "$tether_commit"{{end}} -m "$tether_desc"
}

tether_run_chained() {
	tether_first=
	IFS= read -r tether_first <"$tether_chained" || :
	case $tether_first in
	'#!/bin/sh' | '#!/usr/bin/env sh' | '#!/bin/dash' | '#!/usr/bin/env dash')
		sh -c 'tether_c=$1; shift; . "$tether_c"' "$0" "$tether_chained" "$@" ;;
	'#!/bin/bash' | '#!/usr/bin/bash' | '#!/usr/bin/env bash')
		bash -c 'tether_c=$1; shift; . "$tether_c"' "$0" "$tether_chained" "$@" ;;
	*)
		"$tether_chained" "$@" ;;
	esac
}

tether_wait=${TETHER_HOOK_WAIT:-{{.Wait}}}
case $tether_wait in '' | *[!0-9]*) tether_wait={{.Wait}} ;; esac
tether_timeout=${TETHER_HOOK_TIMEOUT:-{{.Timeout}}}
case $tether_timeout in '' | *[!0-9]* | 0) tether_timeout={{.Timeout}} ;; esac

tether_pid=
if [ "${TETHER_GIT_HOOKS:-1}" != 0 ] && [ -z "${TETHER_IN_GIT_HOOK:-}" ]; then
	if [ ! -x "$tether_bin" ]; then
		tether_bin=$(command -v tether 2>/dev/null) || tether_bin=
	fi
	if [ -z "$tether_bin" ]; then
		echo "tether: warning: tether not found (installed as "{{.Tether}}"); no {{.Trigger}} checkpoint taken" >&2
	else
		tether_log=$(git rev-parse --git-path tether-{{.Name}}.log 2>/dev/null) || tether_log=/dev/null
{{- if not .Stdin}}
		# The commit this hook runs for, read now: the checkpoint runs in
		# the background, and HEAD may have moved on by then.
		tether_commit=$(git rev-parse --verify -q HEAD 2>/dev/null) || tether_commit=HEAD
{{- end}}
		tether_checkpoint "$@" </dev/null >"$tether_log" 2>&1 &
		tether_pid=$!
	fi
fi

tether_status=0
if [ -x "$tether_chained" ]; then
{{- if .Stdin}}
	printf '%s' "$tether_input" | tether_run_chained "$@"
{{- else}}
	tether_run_chained "$@"
{{- end}}
	tether_status=$?
fi

if [ -n "$tether_pid" ]; then
	tether_ticks=$((tether_wait * 20))
	while [ "$tether_ticks" -gt 0 ] && kill -0 "$tether_pid" 2>/dev/null; do
		sleep 0.05 2>/dev/null || sleep 1
		tether_ticks=$((tether_ticks - 1))
	done
	if kill -0 "$tether_pid" 2>/dev/null; then
		echo "tether: the {{.Trigger}} checkpoint goes on in the background (output: $tether_log)" >&2
	else
		wait "$tether_pid"
		tether_rc=$?
		if [ "$tether_rc" -ne 0 ]; then
			echo "tether: warning: no {{.Trigger}} checkpoint (tether exited $tether_rc); git goes on:" >&2
			sed 's/^/tether:   /' "$tether_log" >&2
		fi
	fi
fi
exit $tether_status
`))

// scriptData fills scriptTemplate.
type scriptData struct {
	Header        string
	Name          string
	Trigger       string
	ChainedSuffix string
	// Tether is the shell-quoted path of the tether binary.
	Tether string
	// Flags are the shell-quoted global flags recorded at install time.
	Flags []string
	// Stdin tells whether git passes the hook data on stdin (pre-push).
	Stdin   bool
	Wait    int
	Timeout int
}

// shellQuote quotes s as one word for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

#!/bin/sh
# fakehook.sh EXIT STDOUT [STDERR [SLEEP]]: a hook command for claudesim's
# tests. It appends the event JSON read from stdin, its working directory and
# CLAUDE_PROJECT_DIR (tab-separated) to $FAKEHOOK_LOG, optionally sleeps, then
# prints STDOUT and STDERR and exits with EXIT.
input=$(cat)
printf '%s\t%s\t%s\n' "$input" "$PWD" "$CLAUDE_PROJECT_DIR" >>"${FAKEHOOK_LOG:-fakehook.log}"
if [ -n "$4" ]; then sleep "$4"; fi
printf '%s' "$2"
printf '%s' "$3" >&2
exit "$1"

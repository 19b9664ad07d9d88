#!/usr/bin/env bash
# A scheduled acceptance run (cron, scrontab, a systemd timer, CI): runs
# scripts/acceptance.sh with the arguments given, keeps its whole output in a log,
# prints what a mail needs and exits with acceptance.sh's own status.
#
#   scripts/scheduled.sh [ACCEPTANCE.SH ARGS...]
#   e.g. scripts/scheduled.sh -m acceptance -s SYSTEM:PART -- --distribute=all -t nodes
#
# Prints every FAIL, HUNG, NODE and NODES line (all of them: a partition of many nodes
# has a NODES line per odd node) and the line saying an unfinished run was set aside,
# then a line with acceptance.sh's exit status and the
# log's path, then the ACCEPTANCE line. Where acceptance.sh ended without an ACCEPTANCE
# line (bad usage, another run holding the results folder), the log's last 20 lines
# come before the status line instead. Why not `acceptance.sh | tail`: a pipeline's
# status is its last command's, and a fixed number of lines drops NODES lines.
#
# Log: $PLACEMENT_RESULTS/runs/scheduled-<UTC stamp>-<random>.log (default results/).
# Exit status: acceptance.sh's (0 pass, 1 fail, 2 usage, 3 unfinished, 4 incomplete);
#   2 when the log cannot be written (one line, nothing run).
# Signals: SIGTERM, SIGHUP or SIGINT sent to the whole run (systemctl stop, scancel, a
#   timeout wrapper, Ctrl-C) stop acceptance.sh, which ends the run UNFINISHED (exit 3);
#   this script waits for it and still prints its lines. Sent to this script alone, the
#   run goes on to its end.
set -u
for a in "$@"; do
  case $a in
    --) break ;;
    # help anywhere in a schedule's line prints the help and runs nothing: never a line
    # reading "exit status 0" for a run that did not happen
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  esac
done
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# a relative PLACEMENT_RESULTS is the caller's folder, as acceptance.sh reads it: the log
# goes where the run's results do
. "$ROOT/scripts/caller_paths.sh"
absolute_from_caller "$PWD"
problem=$(folder_vars_problem)
if [ -n "$problem" ]; then
  echo "scheduled.sh: $problem; nothing run, no log written" >&2
  exit 2
fi
cd "$ROOT"
runs=${PLACEMENT_RESULTS:-$ROOT/results}/runs
stamp=$(date -u +%Y%m%dT%H%M%SZ)
if ! { mkdir -p -- "$runs" && log=$(mktemp "$runs/scheduled-$stamp-XXXXXX.log"); } 2>/dev/null; then
  echo "scheduled.sh: cannot write a log in $runs: give a writable PLACEMENT_RESULTS" >&2
  exit 2
fi
chmod 644 "$log"
# a stop signal reaches acceptance.sh too (it is in this script's process group): trapped
# here, it waits until acceptance.sh has ended the run and written its lines (a trap runs
# once the foreground command ends), so the mail still gets them
stopped=''
trap 'stopped=TERM' TERM
trap 'stopped=HUP' HUP
trap 'stopped=INT' INT
"$ROOT/scripts/acceptance.sh" "$@" </dev/null >"$log" 2>&1
status=$?
grep -E '^(FAIL|HUNG|NODE|NODES) |^== an unfinished .* is set aside' "$log"
grep -q '^ACCEPTANCE ' "$log" || tail -n 20 "$log"
echo "acceptance.sh exit status $status${stopped:+ (stopped by SIG$stopped)}; its whole output: $log"
grep '^ACCEPTANCE ' "$log"
exit "$status"

#!/usr/bin/env bash
# A/A sessions for benchmarks/regression_detection.py: N separate ReFrame sessions of
# the quick set on this machine, nothing changed between them, each case launched
# LAUNCHES times inside its job (the kernels' -S launches, NPB's -S repeats), then
# stripped to what the verdict reads.
#
#   benchmarks/aa_sessions.sh [-n SESSIONS] [-l LAUNCHES] [-m MODE] [-w SECONDS] [-q LOAD] [-H HOGS] [-s SYSTEM] [-k NODE] [-o DIR] [-d TEXT] [-- REFRAME ARGS]
#
#   -m  quick (default) or acceptance: the checks of that mode (their tag); acceptance
#       brings NPB's classes A and B and the whole thread sweep (hours on a small node:
#       narrow it with ReFrame's -x after --, and say so in -d)
#   -n  sessions to run (default 12; the benchmark needs 3, the README's figures 10 or more)
#   -l  launches per case in each job (default 10)
#   -w  seconds to wait between sessions (default 0): sessions spread over hours see the
#       spread between times of day that back-to-back sessions understate
#   -q  before each session, wait until the 1-minute load average is below LOAD (e.g. 0.3):
#       sessions of a quiet node that other work shares at times, each started when it is
#       quiet; the load each one started at is printed
#   -H  run HOGS busy loops beside each session (a loaded node: the sessions go to DIR/hog/)
#   -s  ReFrame --system (default: the system matching this host)
#   -k  the node while the sessions ran (with -d): quiet (default: nothing else ran beside
#       them) or shared (other work ran beside them: the benchmark shows its figures, and
#       judges its goals on quiet sets only)
#   -d  write DIR/set.yaml describing the set as a validation set (TEXT: what it is, the
#       whole set: a later -d on the same DIR, such as the hog run's, replaces it; the
#       host, CPUs, commit (marked where the working tree differed from it), times, each
#       session's load (after those of sessions already in DIR) and the rules' fixing time
#       are added):
#       recorded after the verdict's rules were fixed, it judges them and never chooses them
#       (benchmarks/rules_provenance.yaml, tests/fixtures/validation/)
#   -o  where the stripped run reports go (default benchmarks/results/aa-<host>-<UTC stamp>;
#       tests/fixtures/aa-launches/ holds this machine's)
#
# The set: the quick kernels (ping-pong and the loaded variants left out) and, where
# NPB is found (the Spack view or NPB_DIR), NPB's quick cases of class S. Then:
#   python benchmarks/regression_detection.py DIR/*.json
# Exit status: 0 all sessions ran (a failed case does not stop the series); 1 a session
# wrote no run report, or the reports could not be stripped (no set.yaml; the sessions'
# reports are kept where the line says);
# 2 usage, or another series or acceptance run holds the results folder
# ($PLACEMENT_RESULTS, default results/).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/caller_paths.sh"
absolute_from_caller "$PWD"    # a relative results folder is the caller's, as acceptance.sh's
cd "$ROOT"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
bad() { echo "aa_sessions.sh: $* (see -h)" >&2; exit 2; }
count() { [[ "$2" =~ ^[0-9]{1,4}$ ]] && (( 10#$2 >= 1 && 10#$2 <= 1000 )) \
            || bad "$1 needs a whole number from 1 to 1000, got '$2'"; }

sessions=12 launches=10 mode=quick wait=0 quiet="" system="" out="" hogs=0 describe="" node=quiet
while (( $# )); do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        -n) [[ $# -ge 2 ]] || bad "-n needs a value"; count -n "$2"; sessions=$((10#$2)); shift 2 ;;
        -l) [[ $# -ge 2 ]] || bad "-l needs a value"; count -l "$2"; launches=$((10#$2)); shift 2 ;;
        -m) [[ $# -ge 2 && ( "$2" == quick || "$2" == acceptance ) ]] \
                || bad "-m needs quick or acceptance, got '${2:-}'"
            mode=$2; shift 2 ;;
        -w) [[ $# -ge 2 ]] || bad "-w needs a value"
            [[ "$2" =~ ^[0-9]{1,5}$ ]] && (( 10#$2 <= 86400 )) || bad "-w needs whole seconds from 0 to 86400, got '$2'"
            wait=$((10#$2)); shift 2 ;;
        -q) [[ $# -ge 2 ]] || bad "-q needs a value"
            [[ "$2" =~ ^[0-9]{1,4}(\.[0-9]{1,4})?$ ]] || bad "-q needs a load average such as 0.3, got '$2'"
            quiet=$2; shift 2 ;;
        -s) [[ $# -ge 2 && -n "$2" ]] || bad "-s needs a system name"; system=$2; shift 2 ;;
        -H) [[ $# -ge 2 ]] || bad "-H needs a value"; count -H "$2"; hogs=$((10#$2)); shift 2 ;;
        -d) [[ $# -ge 2 && -n "$2" ]] || bad "-d needs a text"; describe=$2; shift 2 ;;
        -k) [[ $# -ge 2 && ( "$2" == quiet || "$2" == shared ) ]] || bad "-k needs quiet or shared"
            node=$2; shift 2 ;;
        -o) [[ $# -ge 2 && -n "$2" ]] || bad "-o needs a folder"; out=$2; shift 2 ;;
        --) shift; break ;;
        *) bad "unknown option '$1'" ;;
    esac
done
if [[ -n "${REFRAME:-}" ]]; then      # the one given, or none: never another in its stead
    [[ -f "$REFRAME" && -x "$REFRAME" ]] || bad "REFRAME '$REFRAME' is no executable file"
else
    REFRAME=.venv/bin/reframe
    [[ -x "$REFRAME" ]] || REFRAME=$(command -v reframe) || bad "no reframe: run make venv first"
fi
# the Python of that ReFrame (its numpy and yaml strip the reports), else the venv's
PYTHON=$(head -c 200 "$REFRAME" | head -n 1 | tr -d '\0' | sed -n 's/^#! *//p')
[[ -n "$PYTHON" && -x "$PYTHON" ]] || PYTHON=.venv/bin/python
[[ -x "$PYTHON" ]] || PYTHON=$(command -v python3) || bad "no python3: run make venv first"
# a folder variable that is set is a usable path (caller_paths.sh), as acceptance.sh's
problem=$(folder_vars_problem)
[[ -z "$problem" ]] || bad "$problem"
# One series or acceptance run at a time per results folder: they share stage/ and output/,
# and ReFrame removes the stage folders of a run still in progress; a series with its own
# PLACEMENT_RESULTS stages there (scripts/run_lock.sh, as scripts/acceptance.sh)
export PLACEMENT_RESULTS=${PLACEMENT_RESULTS:-$ROOT/results}
mkdir -p "$PLACEMENT_RESULTS" || bad "cannot make the results folder '$PLACEMENT_RESULTS'"
. "$ROOT/scripts/run_lock.sh"
take_run_lock aa_sessions.sh "$PLACEMENT_RESULTS" "give this series its own PLACEMENT_RESULTS"
own_prefix=()
[[ "$PLACEMENT_RESULTS" != "$ROOT/results" ]] && own_prefix=(--prefix "$PLACEMENT_RESULTS")
stamp=$(date -u +%Y%m%dT%H%M%S)
out=${out:-benchmarks/results/aa-$(hostname -s)-$stamp}
raw=$(mktemp -d "${TMPDIR:-/tmp}/aa-sessions.XXXXXX")
hog_pids=()
stop_hogs() { [[ ${#hog_pids[@]} -gt 0 ]] && kill "${hog_pids[@]}" 2>/dev/null; wait "${hog_pids[@]}" 2>/dev/null; hog_pids=(); }
trap 'stop_hogs; rm -rf "$raw"' EXIT
start_hogs() {   # busy loops that also end by themselves after an hour
    local j
    for ((j = 0; j < hogs; j++)); do
        ( end=$((SECONDS + 3600)); while ((SECONDS < end)); do :; done ) {RUN_LOCK_FD}>&- &
        hog_pids+=($!)
    done
}
loads=()
quiet_now() { awk -v q="$quiet" '{exit !($1 < q)}' /proc/loadavg; }   # load below -q's

args=(-C config/settings.py "${own_prefix[@]}" -c reframe_tests/kernels.py -c reframe_tests/npb.py -t "$mode"
      -x PingPongCheck -x load=1 -p gnu -S "launches=$launches")
if [[ $mode == quick ]]; then
    args+=(-x npb_class=W -S "NpbQuickCheck.repeats=$launches")
else
    args+=(-S "NpbAcceptanceCheck.repeats=$launches")
fi
[[ -n "$system" ]] && args+=(--system "$system")
for ((i = 1; i <= sessions; i++)); do
    if [[ -n "$quiet" ]] && ! quiet_now; then
        # said once, so that a series waiting on the load is not taken for none running
        echo "session $i of $sessions: waiting for the 1-minute load average to fall below $quiet (now $(cut -d' ' -f1 /proc/loadavg))" >&2
        # the waits close the lock's descriptor: a series stopped while it waits frees
        # the results folder at once, not when its sleep ends
        until quiet_now; do sleep 10 {RUN_LOCK_FD}>&-; done
    fi
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    echo "session $i of $sessions $(date -u +%H:%M:%S) load ${loads[-1]}" >&2
    (( hogs > 0 )) && start_hogs
    "$REFRAME" "${args[@]}" "$@" --report-file="$raw/run-$i.json" -r > "$raw/run-$i.out" 2>&1
    stop_hogs
    # ReFrame's summary line; a failed session prints its failures after it
    grep -E '(PASSED|FAILED).*Ran [0-9]' "$raw/run-$i.out" | tail -1 >&2
    (( i < sessions && wait > 0 )) && sleep "$wait" {RUN_LOCK_FD}>&-
done
dest=$out; (( hogs > 0 )) && dest=$out/hog
# a session without a run report ran nothing the benchmark can read: the series did not
# run, and no set.yaml describes it
missing=()
for ((i = 1; i <= sessions; i++)); do [[ -s "$raw/run-$i.json" ]] || missing+=("$i"); done
if (( ${#missing[@]} )); then
    trap stop_hogs EXIT      # the other sessions' reports are kept where they are
    echo "aa_sessions.sh: session(s) ${missing[*]} of $sessions wrote no run report (ReFrame's output: $(tail -n 1 "$raw/run-${missing[0]}.out" 2>/dev/null)); the sessions' reports and output are kept in $raw, nothing in $dest" >&2
    exit 1
fi
if ! "$PYTHON" benchmarks/regression_detection.py --strip "$raw"/run-*.json --out "$dest"; then
    trap stop_hogs EXIT
    echo "aa_sessions.sh: the run reports could not be stripped into $dest (kept in $raw); no set.yaml was written" >&2
    exit 1
fi
if [[ -n "$describe" ]]; then
    PYTHONPATH=src:benchmarks "$PYTHON" - "$out/set.yaml" "$describe" "$hogs" "$node" "$mode" "${loads[@]}" <<'PY'
import os, subprocess, sys, yaml
from datetime import datetime, timezone
from provenance import RULES_FIXED
path, what, hogs, node, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
loads = sys.argv[6:]
old = yaml.safe_load(open(path)) if os.path.exists(path) else {}
def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
commit = git("rev-parse", "--short", "HEAD") or "unknown"
if git("status", "--porcelain", "--untracked-files=no"):
    commit += " (the working tree had uncommitted changes to tracked files)"
key = "hog_loads" if hogs else "loads"
new = {"what": what, "node": old.get("node") or node,
       "mode": old.get("mode") or mode,
       "host": os.uname().nodename, "cpus": os.cpu_count(),
       "recorded_after_rules_fixed": RULES_FIXED, "commit": commit,
       "written": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       **{k: v for k, v in old.items() if k in ("loads", "hog_loads", "hogs")},
       # the stripped reports join those already in DIR: so do their loads
       key: [*old.get(key, []), *(float(x) for x in loads)], **({"hogs": hogs} if hogs else {})}
from placement.util import atomic   # an exclusive temp beside it, renamed over it
atomic.write_text(path, yaml.safe_dump(new, sort_keys=False))
print(path)
PY
fi

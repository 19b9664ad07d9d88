#!/usr/bin/env bash
# A/A sessions for benchmarks/regression_detection.py: N separate ReFrame sessions of
# the quick set on this machine, nothing changed between them, each case launched
# LAUNCHES times inside its job (the kernels' -S launches, NPB's -S repeats), then
# stripped to what the verdict reads.
#
#   benchmarks/aa_sessions.sh [-n SESSIONS] [-l LAUNCHES] [-w SECONDS] [-q LOAD] [-s SYSTEM] [-o DIR] [-- REFRAME ARGS]
#
#   -n  sessions to run (default 12; the benchmark needs 3, the README's figures 10 or more)
#   -l  launches per case in each job (default 10)
#   -w  seconds to wait between sessions (default 0): sessions spread over hours see the
#       spread between times of day that back-to-back sessions understate
#   -q  before each session, wait until the 1-minute load average is below LOAD (e.g. 0.3):
#       sessions of a quiet node that other work shares at times, each started when it is
#       quiet; the load each one started at is printed
#   -s  ReFrame --system (default: the system matching this host)
#   -o  where the stripped run reports go (default benchmarks/results/aa-<host>-<UTC stamp>;
#       tests/fixtures/aa-launches/ holds this machine's)
#
# The set: the quick kernels (ping-pong and the loaded variants left out) and, where
# NPB is found (the Spack view or NPB_DIR), NPB's quick cases of class S. Then:
#   python benchmarks/regression_detection.py DIR/*.json
# Exit status: 0 all sessions ran (a failed case does not stop the series); 2 usage.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
bad() { echo "aa_sessions.sh: $* (see -h)" >&2; exit 2; }
count() { [[ "$2" =~ ^[0-9]+$ ]] && (( 10#$2 >= 1 && 10#$2 <= 1000 )) \
            || bad "$1 needs a whole number from 1 to 1000, got '$2'"; }

sessions=12 launches=10 wait=0 quiet="" system="" out=""
while (( $# )); do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        -n) [[ $# -ge 2 ]] || bad "-n needs a value"; count -n "$2"; sessions=$((10#$2)); shift 2 ;;
        -l) [[ $# -ge 2 ]] || bad "-l needs a value"; count -l "$2"; launches=$((10#$2)); shift 2 ;;
        -w) [[ $# -ge 2 ]] || bad "-w needs a value"
            [[ "$2" =~ ^[0-9]+$ ]] && (( 10#$2 <= 86400 )) || bad "-w needs whole seconds from 0 to 86400, got '$2'"
            wait=$((10#$2)); shift 2 ;;
        -q) [[ $# -ge 2 ]] || bad "-q needs a value"
            [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "-q needs a load average such as 0.3, got '$2'"
            quiet=$2; shift 2 ;;
        -s) [[ $# -ge 2 && -n "$2" ]] || bad "-s needs a system name"; system=$2; shift 2 ;;
        -o) [[ $# -ge 2 && -n "$2" ]] || bad "-o needs a folder"; out=$2; shift 2 ;;
        --) shift; break ;;
        *) bad "unknown option '$1'" ;;
    esac
done
REFRAME=${REFRAME:-.venv/bin/reframe}
[[ -x "$REFRAME" ]] || REFRAME=$(command -v reframe) || bad "no reframe: run make venv first"
PYTHON=$(head -1 "$REFRAME" | sed 's/^#!//')
[[ -x "$PYTHON" ]] || PYTHON=python3
stamp=$(date -u +%Y%m%dT%H%M%S)
out=${out:-benchmarks/results/aa-$(hostname -s)-$stamp}
raw=$(mktemp -d "${TMPDIR:-/tmp}/aa-sessions.XXXXXX")
trap 'rm -rf "$raw"' EXIT

args=(-C config/settings.py -c reframe_tests/kernels.py -c reframe_tests/npb.py -t quick
      -x PingPongCheck -x load=1 -x npb_class=W -p gnu
      -S "launches=$launches" -S "NpbQuickCheck.repeats=$launches")
[[ -n "$system" ]] && args+=(--system "$system")
for ((i = 1; i <= sessions; i++)); do
    if [[ -n "$quiet" ]]; then
        until awk -v q="$quiet" '{exit !($1 < q)}' /proc/loadavg; do sleep 10; done
    fi
    echo "session $i of $sessions $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)" >&2
    "$REFRAME" "${args[@]}" "$@" --report-file="$raw/run-$i.json" -r > "$raw/run-$i.out" 2>&1
    tail -4 "$raw/run-$i.out" | grep -E 'Ran|PASSED|FAILED' >&2
    (( i < sessions && wait > 0 )) && sleep "$wait"
done
"$PYTHON" benchmarks/regression_detection.py --strip "$raw"/run-*.json --out "$out"

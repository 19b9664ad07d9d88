#!/usr/bin/env bash
# Scheduled site acceptance: run one mode, store the results, write the report,
# compare with the previous acceptance run of the same system and mode, and end
# with ONE summary line (for mail or CI) and a non-zero status on any failure.
#
#   scripts/acceptance.sh [-m quick|acceptance|full] [-s SYSTEM[:PART]] [--] [REFRAME ARGS...]
#
#   -m, --mode     ReFrame mode from config/common.py (default: acceptance)
#   -s, --system   ReFrame --system (default: the system matching this host)
#   REFRAME ARGS   passed to `reframe ... -r`, e.g. --distribute=idle, -n PATTERN, -J OPT
#
# Environment: PLACEMENT_RESULTS (default results/): results database, reports,
#   perflogs; ACCEPTANCE_MAX_SLOWDOWN (percent, default 10): a performance
#   variable worse than the previous run by more than this is a regression;
#   PLACEMENT_REPORTS (default reports/): where `placement report` writes;
#   REFRAME (default .venv/bin/reframe, else reframe on PATH).
#
# Output, under $PLACEMENT_RESULTS/runs/:
#   run-report-acceptance-<system>-<mode>-<UTC stamp>.json   ReFrame's run report
#   compare-acceptance-<system>-<mode>-<UTC stamp>.csv       vs. the previous run
# Exit status: 0 all passed and no regression; 1 failures or regressions; 2 usage.
# Re-run only what failed:  reframe -C config/settings.py --restore-session REPORT --failed -r
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
mode=acceptance system='' extra=()
while [ $# -gt 0 ]; do
  case $1 in
    -m|--mode) mode=${2:?}; shift 2 ;;
    --mode=*) mode=${1#*=}; shift ;;
    -s|--system) system=${2:?}; shift 2 ;;
    --system=*) system=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra+=("$@"); break ;;
    *) extra+=("$1"); shift ;;
  esac
done
case $mode in quick|acceptance|full) ;; *) echo "unknown mode: $mode" >&2; usage >&2; exit 2 ;; esac

REFRAME=${REFRAME:-$ROOT/.venv/bin/reframe}
[ -x "$REFRAME" ] || REFRAME=$(command -v reframe) || { echo "reframe not found (make venv)" >&2; exit 2; }
PY=$(dirname "$REFRAME")/python
[ -x "$PY" ] || PY=python3
PLACEMENT=$(dirname "$REFRAME")/placement
export PLACEMENT_RESULTS=${PLACEMENT_RESULTS:-$ROOT/results}
mkdir -p "$PLACEMENT_RESULTS/runs"
RFM=("$REFRAME" -C "$ROOT/config/settings.py")
sysopt=()
[ -n "$system" ] && sysopt=(--system "$system")

if [ -n "$system" ]; then sysname=${system%%:*}
else sysname=$("${RFM[@]}" --show-config=systems/0/name 2>/dev/null | tr -d '"[:space:]')
fi
sysname=${sysname:-unknown}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
tag="acceptance-$sysname-$mode"
report="$PLACEMENT_RESULTS/runs/run-report-$tag-$stamp.json"
compare="$PLACEMENT_RESULTS/runs/compare-$tag-$stamp.csv"
# the previous acceptance run of this system and mode (stamps sort by time)
previous=$(ls -1 "$PLACEMENT_RESULTS/runs/run-report-$tag-"*.json 2>/dev/null | sort | tail -n 1)

echo "== acceptance: system=$sysname mode=$mode results=$PLACEMENT_RESULTS"
"${RFM[@]}" -R "${sysopt[@]}" --mode "$mode" --report-file "$report" -r "${extra[@]}"
rc=$?
if [ ! -s "$report" ]; then
  echo "ACCEPTANCE $sysname $mode: FAIL reframe exited $rc without a report report=$report"
  exit 1
fi

notes=()
if "$PLACEMENT" report --help >/dev/null 2>&1; then
  echo "== placement report --run $report"
  "$PLACEMENT" report --run "$report" --system "$sysname" \
    --output "${PLACEMENT_REPORTS:-$ROOT/reports}" || notes+=("placement report failed")
else
  notes+=("no 'placement report' here")
fi

uuid_of() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["session_info"]["uuid"])' "$1"; }
: >"$compare"
if [ -n "$previous" ]; then
  # base (lhs) = this run, target (rhs) = the previous one: pdiff = 100*(now - prev)/prev
  spec="$(uuid_of "$report")/$(uuid_of "$previous")/mean:/+result"
  echo "== reframe --performance-compare=$spec   (previous: $previous)"
  "${RFM[@]}" --performance-compare="$spec" --table-format=csv >"$compare" 2>"$compare.err" \
    || notes+=("performance comparison failed: $(tail -n 1 "$compare.err")")
  grep -v WARNING "$compare.err" >&2; rm -f "$compare.err"
  cat "$compare"
else
  notes+=("first run of $sysname/$mode: nothing to compare with")
fi

"$PY" - "$report" "$compare" "$sysname" "$mode" "${ACCEPTANCE_MAX_SLOWDOWN:-10}" "${notes[@]}" <<'EOF'
"""Count the final result of every test case and the regressions; print the summary line."""
import csv, json, re, sys

report, compare, system, mode, slowdown, *notes = sys.argv[1:]
final = {}
for run in json.load(open(report))['runs']:          # retries: the last run decides
    for tc in run['testcases']:
        final[(tc['unique_name'], tc['system'], tc['environ'])] = tc
passed = sum(tc['result'] == 'pass' for tc in final.values())
failed = [tc for tc in final.values() if tc['result'] in ('fail', 'abort')]
skipped = sum(tc['result'] == 'skip' for tc in final.values())
perf_fail = [tc for tc in failed if tc.get('fail_phase') == 'performance']

HIGHER_IS_BETTER = re.compile(r'/s$|flop|ops|^%$|speedup|efficiency', re.I)
regressions = []
try:
    rows = list(csv.reader(open(compare)))
except OSError:
    rows = []
start = next((i for i, row in enumerate(rows) if row[:1] == ['name']), None)
pdiff = next((c for c in rows[start] if c.startswith('pdiff')), None) if start is not None else None
if pdiff:
    head = rows[start]
    for row in rows[start + 1:]:
        if len(row) != len(head):
            continue
        r = dict(zip(head, row))
        try:
            diff = float(r[pdiff])       # 100 * (now - previous) / previous
        except ValueError:
            continue
        worse = -diff if HIGHER_IS_BETTER.search(r.get('punit', '')) else diff
        if worse > float(slowdown):
            regressions.append(f"{r.get('name')} @{r.get('sysenv')} {r.get('pvar')} "
                               f"{diff:+.1f}% {r.get('punit', '')}")
for line in regressions:
    print(f'regression vs previous run: {line}')
for tc in failed:
    print(f"FAIL {tc['display_name']} @{tc['system']}+{tc['environ']} "
          f"[{tc.get('fail_phase')}] stage={tc.get('stagedir')}")
k = len(perf_fail) + len(regressions)
ok = not failed and not regressions
extra = f" skipped={skipped}" + (f" ({'; '.join(notes)})" if notes else '')
print(f"ACCEPTANCE {system} {mode}: {'PASS' if ok else 'FAIL'} {passed} passed, {len(failed)} failed "
      f"({k} perf regressions) report={report}{extra}")
sys.exit(0 if ok else 1)
EOF

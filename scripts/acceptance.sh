#!/usr/bin/env bash
# Scheduled site acceptance: run one mode, store the results, write the report,
# compare with the previous acceptance run of the same system and mode, and end
# with ONE summary line (for mail or CI) and a non-zero status on any failure.
#
#   scripts/acceptance.sh [-m quick|acceptance|full] [-s SYSTEM[:PART]] [-t SECONDS]
#                         [--resume] [--] [REFRAME ARGS...]
#
#   -m, --mode      ReFrame mode from config/common.py (default: acceptance)
#   -s, --system    ReFrame --system (default: the system matching this host)
#   -t, --time-box  stop after SECONDS (a maintenance window; ACCEPTANCE_TIME_BOX):
#                   ReFrame is interrupted, finished cases are kept, the run is UNFINISHED
#   --resume        go on with the unfinished run of this system and mode: only checks
#                   that have not finished run (give the same REFRAME ARGS); the summary,
#                   report and comparison then cover all its parts
#   REFRAME ARGS    passed to `reframe ... -r`, e.g. --distribute=idle, -n PATTERN, -J OPT
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
#   acceptance-<system>-<mode>-<UTC stamp>.run   the run reports of one whole run
#   unfinished-acceptance-<system>-<mode>.run    those of a run its time box cut short
# Exit status: 0 all passed and no regression; 1 failures or regressions; 2 usage;
#   3 unfinished (the time box was reached: continue with --resume).
# Re-run only what failed:  reframe -C config/settings.py --restore-session REPORT --failed -r
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

usage() { sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
mode=acceptance system='' extra=() time_box=${ACCEPTANCE_TIME_BOX:-} resume=''
while [ $# -gt 0 ]; do
  case $1 in
    -m|--mode) mode=${2:?}; shift 2 ;;
    --mode=*) mode=${1#*=}; shift ;;
    -s|--system) system=${2:?}; shift 2 ;;
    --system=*) system=${1#*=}; shift ;;
    -t|--time-box) time_box=${2:?}; shift 2 ;;
    --time-box=*) time_box=${1#*=}; shift ;;
    --resume) resume=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra+=("$@"); break ;;
    *) extra+=("$1"); shift ;;
  esac
done
case $mode in quick|acceptance|full) ;; *) echo "unknown mode: $mode" >&2; usage >&2; exit 2 ;; esac
if [ -n "$time_box" ] && ! [[ $time_box =~ ^[1-9][0-9]*$ ]]; then
  echo "bad time box '$time_box': a whole number of seconds, at least 1" >&2; exit 2
fi

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
RUNS=$PLACEMENT_RESULTS/runs
report="$RUNS/run-report-$tag-$stamp.json"
compare="$RUNS/compare-$tag-$stamp.csv"
unfinished="$RUNS/unfinished-$tag.run"
# the previous whole acceptance run of this system and mode (stamps sort by time)
previous=$(ls -1 "$RUNS/$tag-"*.run 2>/dev/null | sort | tail -n 1)

# One acceptance run is one or more ReFrame sessions: more when a time box cut it
# and --resume went on. Their run reports are listed in a .run file.
parts=()
skip_done=()
if [ -n "$resume" ]; then
  [ -s "$unfinished" ] || { echo "nothing to resume: no unfinished $mode run of $sysname ($unfinished)" >&2; exit 2; }
  mapfile -t parts <"$unfinished"
  # a check with finished cases is excluded by its hash; one with an aborted case runs again
  mapfile -t skip_done < <("$PY" - "${parts[@]}" <<'PY'
import json, sys
done, aborted = set(), set()
for path in sys.argv[1:]:
    for run in json.load(open(path))['runs']:
        for tc in run['testcases']:
            if not tc.get('fixture'):
                (aborted if tc['result'] == 'abort' else done).add(tc['hashcode'])
for h in sorted(done - aborted):
    print(f'-x\n/{h}')
PY
  )
  echo "== resuming: ${#parts[@]} earlier part(s), $(( ${#skip_done[@]} / 2 )) check(s) already finished"
fi

boxed=()
[ -n "$time_box" ] && boxed=(timeout -s INT -k 300 "$time_box")
echo "== acceptance: system=$sysname mode=$mode results=$PLACEMENT_RESULTS${time_box:+ time box=${time_box}s}"
"${boxed[@]}" "${RFM[@]}" -R "${sysopt[@]}" --mode "$mode" --report-file "$report" -r \
  "${skip_done[@]}" "${extra[@]}"
rc=$?
if [ ! -s "$report" ]; then
  echo "ACCEPTANCE $sysname $mode: FAIL reframe exited $rc without a report report=$report"
  exit 1
fi
parts+=("$report")
cut_short=''
[ -n "$time_box" ] && [ "$rc" = 124 ] && cut_short=1
write_list() {   # write_list FILE LINE...: a temporary file, then rename
  local f=$1; shift
  printf '%s\n' "$@" >"$f.tmp.$$" && mv -f "$f.tmp.$$" "$f"
}
if [ -n "$cut_short" ]; then
  write_list "$unfinished" "${parts[@]}"
else
  write_list "$RUNS/$tag-$stamp.run" "${parts[@]}"
  rm -f "$unfinished"
fi
run_args=()
for p in "${parts[@]}"; do run_args+=(--run "$p"); done

notes=()
if "$PLACEMENT" report --help >/dev/null 2>&1; then
  # the report compares its newest session with the one before; a run in parts or
  # cut short is compared below, over all its sessions
  own_compare=()
  { [ ${#parts[@]} -gt 1 ] || [ -n "$cut_short" ]; } && own_compare=(--no-compare)
  echo "== placement report ${run_args[*]}"
  "$PLACEMENT" report "${run_args[@]}" --system "$sysname" "${own_compare[@]}" \
    --output "${PLACEMENT_REPORTS:-$ROOT/reports}" || notes+=("placement report failed")
else
  notes+=("no 'placement report' here")
fi

# ReFrame's session filter selecting the sessions of one run: ?uuid in ('...',)
sessions_of() {
  "$PY" -c 'import json, sys; print("?uuid in (%s,)" % ",".join(
      repr(json.load(open(p))["session_info"]["uuid"]) for p in sys.argv[1:]))' "$@"
}
: >"$compare"
if [ -n "$cut_short" ]; then
  notes+=("time box of ${time_box}s reached: continue with --resume")
elif [ -n "$previous" ]; then
  mapfile -t previous_parts <"$previous"
  # base (lhs) = this run, target (rhs) = the previous one: pdiff = 100*(now - prev)/prev
  spec="$(sessions_of "${parts[@]}")/$(sessions_of "${previous_parts[@]}")/mean:/+result"
  echo "== reframe --performance-compare=$spec   (previous: $previous)"
  "${RFM[@]}" --performance-compare="$spec" --table-format=csv >"$compare" 2>"$compare.err" \
    || notes+=("performance comparison failed: $(tail -n 1 "$compare.err")")
  grep -v WARNING "$compare.err" >&2; rm -f "$compare.err"
  cat "$compare"
else
  notes+=("first run of $sysname/$mode: nothing to compare with")
fi

"$PY" - "$(printf '%s\n' "${parts[@]}")" "$compare" "$sysname" "$mode" \
  "${ACCEPTANCE_MAX_SLOWDOWN:-10}" "$cut_short" "${notes[@]}" <<'EOF'
"""Count the final result of every test case and the regressions; print the summary line."""
import csv, json, re, sys

reports, compare, system, mode, slowdown, cut_short, *notes = sys.argv[1:]
reports = reports.splitlines()
report = reports[-1]
final = {}
for path in reports:                  # earlier parts, then retries: the last one decides
    for run in json.load(open(path))['runs']:
        for tc in run['testcases']:
            final[(tc['unique_name'], tc['system'], tc['environ'])] = tc
passed = sum(tc['result'] == 'pass' for tc in final.values())
# a case the time box interrupted is not a failure: --resume runs it again
failed = [tc for tc in final.values()
          if tc['result'] == 'fail' or (tc['result'] == 'abort' and not cut_short)]
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
extra = (f" skipped={skipped}" + (f" parts={len(reports)}" if len(reports) > 1 else '') +
         (f" ({'; '.join(notes)})" if notes else ''))
verdict = 'UNFINISHED' if cut_short else 'PASS' if ok else 'FAIL'
print(f"ACCEPTANCE {system} {mode}: {verdict} {passed} passed, {len(failed)} failed "
      f"({k} perf regressions) report={report}{extra}")
sys.exit(3 if cut_short else 0 if ok else 1)
EOF

#!/usr/bin/env bash
# Scheduled site acceptance: run one mode, store the results, write the report,
# compare with the previous acceptance run of the same system and mode, and end
# with ONE summary line (for mail or CI) and a non-zero status on any failure.
#
#   scripts/acceptance.sh [-m quick|acceptance|full] [-s SYSTEM[:PART]] [-t SECONDS]
#                         [--resume | --resume-or-start] [--] [REFRAME ARGS...]
#
#   -m, --mode      ReFrame mode from config/common.py (default: acceptance)
#   -s, --system    ReFrame --system (default: the system matching this host)
#   -t, --time-box  stop after SECONDS (a maintenance window; ACCEPTANCE_TIME_BOX):
#                   ReFrame is interrupted, finished cases are kept, the run is UNFINISHED;
#                   default per mode: quick 3600, acceptance 14400, full 43200 (a run
#                   always ends), at most 604800 (a week); a case still running then with
#                   no time limit of its own gets a HUNG line and --resume skips it; one
#                   whose Slurm or Grid Engine job still waits on the scheduler (held, no
#                   free node, a reservation) gets a WAITING line: job id, state, reason
#   --resume        go on with the unfinished run of this system and mode: only checks
#                   that have not finished run (give the same REFRAME ARGS); the summary,
#                   report and comparison then cover all its parts
#   --resume-or-start  for a schedule: --resume where there is an unfinished run of this
#                   system and mode, else a new run (--resume alone then exits 2)
#   REFRAME ARGS    after --, passed to `reframe ... -r`, e.g. --distribute=idle, -n PATTERN
#
# Environment: PLACEMENT_RESULTS (default results/): results database, reports,
#   perflogs; ACCEPTANCE_MAX_SLOWDOWN (percent, default 10): a performance
#   variable worse than the previous run by more than this gets an INFO line;
#   PLACEMENT_REPORTS (default reports/): where `placement report` writes;
#   REFRAME (default .venv/bin/reframe, else reframe on PATH); ACCEPTANCE_CONFIRM
#   (1, the default, or 0: no confirmation session, every first-session failure stands).
#   PLACEMENT_BASELINES (default config/baselines/): the stored baselines. A relative
#   PLACEMENT_* folder is taken from the current folder; the defaults are the checkout's.
#   An empty ACCEPTANCE_* or REFRAME means its default, as unset does (a schedule's
#   `VAR=` line); an empty or blank PLACEMENT_* folder is refused (it would name the
#   current folder), as is one that is a file.
#
# Signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the run as its time box does: ReFrame
#   is interrupted (it cancels its jobs and writes its report, its last lines still shown
#   and kept), whatever else runs is ended, and the run ends UNFINISHED (exit 3), to go on
#   with --resume, which runs the cases it stopped again (a stop is no hang: HUNG is the
#   time box's alone); before ReFrame started, nothing is changed. A second signal ends
#   ReFrame outright. Started with SIGINT ignored (in the background of another script,
#   under nohup), the run cannot see Ctrl-C. Killed outright (SIGKILL), the script leaves
#   no line: ReFrame gets SIGTERM and ends as above, the run lock is free once it has, and
#   --resume continues the run (a run without --resume starts afresh, keeps the killed
#   one's list as set-aside-*.run and says so).
#
# Confirmation: the checks that missed a reference or regressed against the baseline
#   run once more as a session of their own; such a failure fails the run only if it
#   shows there too (an UNCONFIRMED line says what it dismissed); a node line is
#   confirmed by running every check again. A --distribute run's failed checks run again
#   on the nodes where they failed, and a NODES line (a node unlike its peers) by the
#   whole distribute set again (CONFIRMED/UNCONFIRMED NODES lines, per node). None runs
#   when the time box is spent.
#
# Output, under $PLACEMENT_RESULTS/runs/:
#   run-report-acceptance-<system>-<mode>-<UTC stamp>.json   ReFrame's run report
#   run-report-acceptance-<system>-<mode>-<UTC stamp>.out    its output (skip reasons)
#   run-report-acceptance-<system>-<mode>-<UTC stamp>.stopped  the signal that stopped
#                   its session before the time box closed: its cases are not hung
#   run-report-acceptance-<system>-<mode>-<UTC stamp>.queue  the scheduler's word on its
#                   jobs as the time box closed, asked just before ReFrame cancels them
#   compare-acceptance-<system>-<mode>-<UTC stamp>.csv       vs. the previous run
#   confirm-report-acceptance-<system>-<mode>-<UTC stamp>.json  the confirmation session
#   summary-acceptance-<system>-<mode>-<UTC stamp>.txt   the summary printed last
#   acceptance-<system>-<mode>-<UTC stamp>.run   the run reports of one whole run
#   unfinished-acceptance-<system>-<mode>.run    those of a run cut short or killed
#   (run lists name reports relative to runs/; one run at a time per results folder)
# Exit status: 0 all passed and no regression; 1 failures or regressions; 2 usage
#   (an unknown option, mode or system, a missing value, another run on the results
#   folder, a number out of its range); 3 unfinished (the time box was reached or a
#   signal stopped the run, before or after ReFrame wrote its report: continue with
#   --resume); 4
#   incomplete (all passed, but the comparison with the previous run could not be
#   made, the baseline is another system's, or the summary could not judge the run:
#   its cause named once in the line). The counting is `placement acceptance`'s.
# Re-run only what failed:  reframe -C config/settings.py --restore-session REPORT --failed -r
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# this script runs in the checkout: a relative folder variable is the caller's
. "$ROOT/scripts/caller_paths.sh"
absolute_from_caller "$PWD"
cd "$ROOT"

usage() { sed -n '2,/^[^#]/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
bad_usage() {   # one line: a value with a line break in it is printed with \n
  local m="$*"; m=${m//$'\n'/\\n}; m=${m//$'\r'/\\r}
  echo "acceptance.sh: $m (see --help)" >&2; exit 2
}
value_of() {   # value_of OPTION "$@": the option's value, or a usage error
  [ $# -ge 2 ] && [ -n "$2" ] && [ "${2:0:1}" != - ] || bad_usage "option $1 needs a value"
  printf '%s' "$2"
}
mode=acceptance system='' extra=() time_box=${ACCEPTANCE_TIME_BOX:-} resume=''
while [ $# -gt 0 ]; do
  case $1 in
    -m|--mode) mode=$(value_of "$@") || exit 2; shift 2 ;;
    --mode=*) mode=${1#*=}; [ -n "$mode" ] || bad_usage "option --mode needs a value"; shift ;;
    -s|--system) system=$(value_of "$@") || exit 2; shift 2 ;;
    --system=*) system=${1#*=}; [ -n "$system" ] || bad_usage "option --system needs a value"; shift ;;
    -t|--time-box) time_box=$(value_of "$@") || exit 2; shift 2 ;;
    --time-box=*) time_box=${1#*=}; [ -n "$time_box" ] || bad_usage "option --time-box needs a value"; shift ;;
    --resume) resume=1; shift ;;
    --resume-or-start) resume=auto; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra+=("$@")
        # what this script sets itself: a second value after -- would win in ReFrame, and
        # the run would be of another mode or system than its line and lists say
        for a in "$@"; do
          case $a in
            # ReFrame takes an option by a unique prefix (--syst) and -C with its value attached
            --mode|--mode=*|--sys*|--report-f*|-C*|--conf*)
              bad_usage "'${a%%=*}' after --: acceptance.sh sets it (give -m, -s before --; the report and the configuration are its own)" ;;
          esac
        done
        break ;;
    -*) bad_usage "unknown option '$1' (ReFrame options go after --)" ;;
    *) bad_usage "unexpected argument '$1' (ReFrame arguments go after --)" ;;
  esac
done
case $mode in quick|acceptance|full) ;; *) bad_usage "unknown mode '$mode': quick, acceptance or full" ;; esac
# every mode has a time box: a case that hangs never keeps a scheduled run from its line
declare -A default_box=([quick]=3600 [acceptance]=14400 [full]=43200)
time_box=${time_box:-${default_box[$mode]}}
# numbers are checked by their digits before any arithmetic: bash wraps past 2^63 silently
max_box=604800
if ! [[ $time_box =~ ^[1-9][0-9]{0,5}$ ]] || [ "$time_box" -gt "$max_box" ]; then
  bad_usage "bad time box '${time_box:0:40}': a whole number of seconds from 1 to $max_box (a week)"
fi
slowdown=${ACCEPTANCE_MAX_SLOWDOWN:-10}
if ! [[ $slowdown =~ ^[0-9]{1,4}([.][0-9]{1,6})?$ ]] || [ "${slowdown%.*}" -gt 1000 ]; then
  bad_usage "bad ACCEPTANCE_MAX_SLOWDOWN '${slowdown:0:40}': a percentage from 0 to 1000"
fi
confirm_on=${ACCEPTANCE_CONFIRM:-1}
case $confirm_on in 0|1) ;; *)
  bad_usage "bad ACCEPTANCE_CONFIRM '${confirm_on:0:40}': 1 (confirm failures, the default) or 0" ;;
esac
case $PWD in *[[:space:]]*)
  bad_usage "the checkout path '$PWD' contains a blank, which ReFrame's job scripts cannot take: move or link the checkout to a path without blanks" ;;
esac

# a REFRAME given is used or refused, never swapped for another ReFrame on PATH
if [ -n "${REFRAME:-}" ]; then
  [ -f "$REFRAME" ] && [ -x "$REFRAME" ] ||
    bad_usage "REFRAME '${REFRAME:0:200}' is no executable file: give the path of reframe, or leave it unset for .venv/bin/reframe"
else
  REFRAME=$ROOT/.venv/bin/reframe
  [ -x "$REFRAME" ] || REFRAME=$(command -v reframe) || { echo "reframe not found (make venv)" >&2; exit 2; }
fi
"$REFRAME" --version >/dev/null 2>&1 ||
  { echo "acceptance.sh: $REFRAME does not start (a venv made before the checkout moved?): run make setup" >&2; exit 2; }
PLACEMENT=$(dirname "$REFRAME")/placement
[ -x "$PLACEMENT" ] || PLACEMENT=$(command -v placement) || { echo "placement not found (make venv)" >&2; exit 2; }
# a folder variable that is set is a usable path (caller_paths.sh): one line, exit 2
problem=$(folder_vars_problem)
[ -z "$problem" ] || bad_usage "$problem"
export PLACEMENT_RESULTS=${PLACEMENT_RESULTS:-$ROOT/results}
mkdir -p "$PLACEMENT_RESULTS/runs"
# One run at a time per results folder (an A/A series of benchmarks/aa_sessions.sh too)
. "$ROOT/scripts/run_lock.sh"
take_run_lock acceptance.sh "$PLACEMENT_RESULTS" "give this one its own PLACEMENT_RESULTS"
# ReFrame and every other child die with this script, even when it is killed outright
# (SIGTERM lets ReFrame write its report): nothing outlives the run holding its lock
deathsig=()
command -v setpriv >/dev/null && setpriv --help 2>/dev/null | grep -q pdeathsig &&
  deathsig=(setpriv --pdeathsig TERM)
. "$ROOT/scripts/acceptance_signals.sh"
RFM=("$REFRAME" -C "$ROOT/config/settings.py")
# a run with its own PLACEMENT_RESULTS gets its own stage/ and output/ there too (unless
# --prefix is given): runs on two results folders then share nothing
own_prefix=()
if [ "$PLACEMENT_RESULTS" != "$ROOT/results" ] && [[ " ${extra[*]} " != *" --prefix"* ]]; then
  own_prefix=(--prefix "$PLACEMENT_RESULTS")
fi
sysopt=()
[ -n "$system" ] && sysopt=(--system "$system")

not_loaded() {   # not_loaded SAID: the configuration did not load (a system file with an
  # error): its file, line and last line, in one usage line
  local last at
  last=$(printf '%s\n' "$1" | grep -v '^[[:space:]]*$' | tail -n 1)
  at=$(printf '%s\n' "$1" | sed -n 's/^ *File "\([^"]*\)", line \([0-9]*\).*/\1 line \2/p' | tail -n 1)
  bad_usage "the configuration does not load (${at:+${at:0:300}: }${last:0:300}): fix that file (config/systems/ or PLACEMENT_SYSTEMS)"
}
if [ -n "$system" ]; then
  sysname=${system%%:*}
  if ! said=$(RFM_COLORIZE=n "${RFM[@]}" "${sysopt[@]}" --show-config=systems/0/name 2>&1); then
    [ -z "$stop_signal" ] || exit_stopped_or 3    # Ctrl-C ended it: no unknown system
    case $said in
      *"could not find a configuration entry for the requested system"*)
        bad_usage "unknown system '$system': not in config/settings.py (config/systems/*.py)" ;;
      *) not_loaded "$said" ;;
    esac
  fi
# the system this host matches: a configuration that does not load is said here, not
# after a ReFrame run named "unknown" that could not start
elif ! sysname=$(RFM_COLORIZE=n "${RFM[@]}" --show-config=systems/0/name 2>"$scratch/config.err"); then
  [ -z "$stop_signal" ] || exit_stopped_or 3
  not_loaded "$(<"$scratch/config.err")"
else sysname=$(printf '%s' "$sysname" | tr -d '"[:space:]')
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
# Run lists name their reports relative to the runs folder; an absolute path of an older
# list that no longer exists (a moved checkout) is looked for there by its name
read_list() {   # read_list FILE: the run reports it lists, one a line
  local l
  while read -r l; do
    [ -n "$l" ] || continue
    if [[ $l != /* ]]; then l=$RUNS/$l
    elif [ ! -e "$l" ] && [ -e "$RUNS/${l##*/}" ]; then l=$RUNS/${l##*/}
    fi
    printf '%s\n' "$l"
  done <"$1"
}
new_temp() {     # new_temp FILE: a new empty file beside FILE, made exclusively (never a
  # planted name or link), readable as the file it becomes
  local t
  t=$(mktemp "$(dirname -- "$1")/.$(basename -- "$1").XXXXXX") && chmod 644 "$t" && printf '%s' "$t"
}
write_list() {   # write_list FILE REPORT...: names relative to the runs folder, temp then rename
  local f=$1; shift
  local tmp
  tmp=$(new_temp "$f") && printf '%s\n' "${@#"$RUNS"/}" >"$tmp" && mv -f "$tmp" "$f"
}
mark_stopped() {   # mark_stopped REPORT: REPORT.stopped names the signal that stopped its session
  local m=${1%.json}.stopped tmp
  if ! { tmp=$(new_temp "$m") && printf '%s\n' "$stop_signal" >"$tmp" && mv -f "$tmp" "$m"; }; then
    [ -n "${tmp:-}" ] && rm -f "$tmp"
    echo "acceptance.sh: cannot write $m: its cases still running at $stop_signal read as hung" >&2
  fi
}

# One acceptance run is one or more ReFrame sessions: more when a time box cut it
# and --resume went on. Their run reports are listed in a .run file.
parts=()
skip_done=()
if { [ -e "$unfinished" ] || [ -L "$unfinished" ]; } && [ ! -f "$unfinished" ]; then
  bad_usage "'$unfinished' is not a file: the run list goes there; move it away"
fi
if [ "$resume" = auto ]; then     # --resume-or-start
  if [ -e "$unfinished" ]; then resume=1
  else resume=''; echo "== no unfinished $mode run of $sysname to resume: this run starts afresh"
  fi
fi
if [ -n "$resume" ]; then
  [ -e "$unfinished" ] || { echo "nothing to resume: no unfinished $mode run of $sysname ($unfinished)" >&2; exit 2; }
  # readable earlier parts (a corrupt one is dropped, with one line) and the finished checks
  plan=$scratch/plan hung=()
  # a list of no part (a run stopped before ReFrame wrote anything) resumes from the start
  if grep -q . "$unfinished"; then
    child "$PLACEMENT" acceptance resume "$unfinished" >"$plan" || exit_stopped_or 2
  else : >"$plan"
  fi
  while read -r kind value; do
    case $kind in part) parts+=("$value") ;; skip) skip_done+=("$value") ;; hung) hung+=("$value") ;; esac
  done <"$plan"
  echo "== resuming: ${#parts[@]} earlier part(s), $(( ${#skip_done[@]} / 2 )) check(s) already finished${hung:+ or hung (skipped: ${hung[*]})}"
fi

# the killed run's parts stay readable (placement report --run, baseline record --from):
# its list is kept under another name, not overwritten by this run's
if [ -z "$resume" ] && grep -q . "$unfinished" 2>/dev/null; then
  aside="$RUNS/set-aside-$tag-$stamp.run"
  if mv -f "$unfinished" "$aside" 2>/dev/null; then kept="its parts listed in $aside"
  else kept="its list $unfinished could not be kept"
  fi
  echo "== an unfinished $mode run of $sysname is set aside: this run starts afresh ($kept; --resume or --resume-or-start would have continued it)"
fi
[ -z "$stop_signal" ] || exit_stopped_or 3     # stopped before ReFrame: nothing changed
boxed=("${deathsig[@]}")
# the box's timeout expires at the word of its watch (watch_box, after the scheduler was
# asked, 20 s at most); its own timer, this much later, is the backstop
queue_grace=30
[ -n "$time_box" ] && boxed+=(timeout -s INT -k 300 "$(( time_box + queue_grace ))")
# the run is unfinished until ReFrame is done: a part killed before its end is resumable
write_list "$unfinished" "${parts[@]}" "$report" ||
  { echo "ACCEPTANCE $sysname $mode: FAIL cannot write $unfinished in $RUNS (a full disk?)"; exit 1; }
# a full disk makes Python print a traceback per log record: one line for all of them
# (a log record's "--- Logging error ---" block, an exception at exit ending in Errno 28)
# mawk reads a pipe a block at a time: ReFrame's warnings would reach the log only at its
# end (or never, if the run is killed); its -W interactive reads a line at a time
awk_lines=(awk)
awk -W version 2>/dev/null | grep -q '^mawk' && awk_lines=(awk -W interactive)
squash_log_errors() {
  "${awk_lines[@]}" '/^--- Logging error ---$/ { n++; skip = 1; next }
       skip { if (/^Arguments: /) skip = 0; next }
       /^Exception ignored in/ { held = $0; next }
       held != "" { held = held "\n" $0
                    if (/^[A-Za-z.]*(Error|Exception): /) {
                      if (/Errno 28/) n++; else { print held; fflush() }
                      held = "" }
                    next }
       { print; fflush() }
       END { if (held != "") print held
             if (n) printf "reframe: %d log record(s) could not be written: no space left on device\n", n }' >&2
}
# run_reframe BOX REPORT ARGS...: one ReFrame session of this run's mode writing REPORT,
# wrapped in the command array named BOX (death signal, time box). Its output is kept
# beside its report: the run report has no skip reasons, the output has. The log filter
# is this script's child, not ReFrame's: ReFrame waits for its own children
# Every process ReFrame starts carries this run's tag in its environment (ReFrame's alone:
# not this script's, nor its filters'); what still carries it once ReFrame is gone (ReFrame
# killed outright cancels no job) is ended, detached processes too
run_tag=PLACEMENT_ACCEPTANCE_RUN=$$-$stamp
sweep_run() {
  local f pid
  for f in $(grep -lzx -- "$run_tag" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${f#/proc/}; pid=${pid%/environ}
    [ "$pid" != $$ ] && kill -KILL "$pid" 2>/dev/null && echo "acceptance.sh: ended process $pid that ReFrame left running" >&2
  done
  return 0
}
# The scheduler's word on the run's jobs as the time box closes, kept beside the part
# (REPORT.queue): ReFrame's interrupt cancels its jobs, and a cancelled job reads CANCELLED
# whether it ran or still waited (held, no free node, a reservation). The summary names the
# cases still waiting (placement.acceptance.waiting); only then is ReFrame interrupted.
PYTHON=$(sed -n '1s/^#![[:space:]]*//p' "$PLACEMENT" 2>/dev/null)
[ -x "$PYTHON" ] || PYTHON=''
watch_pid=''
watch_box() {   # watch_box PID SECONDS REPORT: at SECONDS, the snapshot, then PID (the box's
  # timeout) expires as if its own timer had run out: GNU timeout's timer is SIGALRM, which
  # it takes as its expiry (exit 124, SIGINT to ReFrame, SIGKILL after -k)
  local box_pid=$1 end=$(( SECONDS + $2 )) rep=$3
  (
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM HUP
    # in naps of at most 10 s: a script killed outright leaves no watch behind for long
    while [ "$SECONDS" -lt "$end" ] && kill -0 "$$" 2>/dev/null; do
      sleep "$(( end - SECONDS < 10 ? end - SECONDS : 10 ))" & nap=$!
      wait "$nap"
    done
    kill -0 "$$" 2>/dev/null || exit 0
    [ -n "$PYTHON" ] && timeout -k 5 "$(( queue_grace - 10 ))" "$PYTHON" -m placement.util.scheduler_queue \
      "$PLACEMENT_RESULTS/reframe.log" "${rep%.json}.queue" 2>/dev/null
    # still the box's timeout (this script's child), not a pid reused since it ended
    [ "$(ps -o ppid= -p "$box_pid" 2>/dev/null | tr -d ' ')" = "$$" ] && kill -ALRM "$box_pid"
  ) </dev/null >/dev/null 2>&1 {RUN_LOCK_FD}>&- &
  watch_pid=$!
}
end_watch() {
  [ -n "$watch_pid" ] && kill -TERM "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null
  watch_pid=''
  return 0
}
watch_at=''      # seconds from ReFrame's start to its time box's close: run_reframe watches
run_reframe() {
  local -n box_=$1
  local rep=$2 rc tee_pid
  shift 2
  # a signal that came before ReFrame started (the trap found none to interrupt) starts none
  [ -n "$stop_signal" ] && return 130
  # the filters outlive a Ctrl-C, a hangup or a SIGTERM sent to this script's whole process
  # group (systemctl stop, scancel, timeout): they end once ReFrame, interrupted, has
  # written its last lines
  exec 4> >(trap '' INT HUP TERM; squash_log_errors) 5> >(trap '' INT HUP TERM; exec tee "${rep%.json}.out")
  tee_pid=$!
  # a child this script waits for (not a foreground one): a signal's trap runs at once and
  # interrupts ReFrame through its time box (acceptance_signals.sh)
  "${box_[@]}" env "$run_tag" "${RFM[@]}" -R "${sysopt[@]}" "${own_prefix[@]}" --mode "$mode" \
    --report-file "$rep" -r "$@" >&5 2>&4 4>&- 5>&- &
  reframe_pid=$!
  exec 4>&- 5>&-
  [ -n "$watch_at" ] && watch_box "$reframe_pid" "$watch_at" "$rep"
  wait_for "$reframe_pid"
  rc=$?
  reframe_pid=''
  end_watch
  sweep_run
  wait "$tee_pid" 2>/dev/null
  return "$rc"
}
echo "== acceptance: system=$sysname mode=$mode results=$PLACEMENT_RESULTS${time_box:+ time box=${time_box}s}"
started=$SECONDS
watch_at=$time_box
run_reframe boxed "$report" "${skip_done[@]}" "${extra[@]}"
rc=$?
watch_at=''
# cut short: the time box spent (timeout's 124, or 137 when ReFrame had to be killed) or a
# signal; either way the run is resumable, whether ReFrame wrote its report or not
cut_short=''
note_stop() {   # a signal that came since the last look cuts the run short
  [ -n "$stop_signal" ] && [ -z "$cut_short" ] && cut_short="stopped by $stop_signal"
  return 0
}
note_stop
if [ -z "$cut_short" ] && { [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ $(( SECONDS - started )) -ge "$time_box" ]; }; }; then
  cut_short="time box of ${time_box}s reached"
fi
if [ -n "$resume" ] && [ "$rc" = 0 ] && [ -z "$cut_short" ] && [ ! -e "$report" ]; then
  # every check had finished or hung: ReFrame ran nothing and wrote no report
  echo "== nothing left to run: the earlier part(s) hold the whole run"
  rm -f "${report%.json}.out"
elif [ -n "$cut_short" ] && { [ ! -s "$report" ] || ! child "$PLACEMENT" acceptance sessions "$report" >/dev/null 2>&1; }; then
  echo "== $cut_short before ReFrame wrote its report: this part holds no case"
  rm -f "$report"
elif ! child "$PLACEMENT" acceptance sessions "$report" >/dev/null 2>&1; then
  # no readable report: a full disk is said as such, and leaves no empty or partial file
  why="reframe exited $rc without a report"
  if ! (head -c 65536 /dev/zero >"$RUNS/.space-probe.$$") 2>/dev/null; then
    why="no space left on device: reframe could not write its report $report in $RUNS (free space there, then run again with --resume)"
    rm -f "$report" "${report%.json}.out"
  elif [ -e "$report" ]; then
    why="reframe exited $rc leaving an unreadable report (kept: $report)"
  fi
  rm -f "$RUNS/.space-probe.$$"
  echo "ACCEPTANCE $sysname $mode: FAIL $why report=$report"
  exit 1
else
  parts+=("$report")
  # ReFrame records a case a signal stopped as the time box's (an abort by KeyboardInterrupt):
  # a signal that came before the box closed is kept beside the part, and its cases still
  # running then are interrupted, not hung; --resume runs them again (placement.acceptance.resume)
  if [ -n "$stop_signal" ] && [ $(( stop_at - started )) -lt "$time_box" ]; then
    mark_stopped "$report"
  fi
fi
# until its very end the run is resumable: the list of the whole run is written last
write_list "$unfinished" "${parts[@]}"
if [ ${#parts[@]} -eq 0 ]; then
  echo "ACCEPTANCE $sysname $mode: UNFINISHED 0 passed, 0 failed (no case finished: $cut_short before ReFrame wrote its report; continue with --resume)"
  exit 3
fi
run_args=()
for p in "${parts[@]}"; do run_args+=(--run "$p"); done

# The confirmation session: the checks that missed a reference or regressed (all of
# them, when the node line failed the run) run once more, as a ReFrame session of their
# own; a failure stands only if it shows there too (placement.acceptance.confirmation).
# ACCEPTANCE_CONFIRM=0 leaves it out.
confirm_opt=()
if [ -z "$cut_short" ] && [ "$confirm_on" = 1 ]; then
  confirm_hashes=() confirm_nodes=''
  child "$PLACEMENT" acceptance confirm "${parts[@]}" --system "$sysname" >"$scratch/confirm"
  # a hash a line; a --distribute run's confirmation also `nodes N1,N2`: the nodes where
  # its checks failed (none: every node, as the run's own --distribute gives them)
  while read -r h rest; do
    if [[ $h =~ ^[0-9a-f]+$ ]]; then confirm_hashes+=("$h")
    elif [ "$h" = nodes ] && [[ $rest =~ ^[A-Za-z0-9][A-Za-z0-9._+@:,-]*$ ]]; then confirm_nodes=$rest
    fi
  done <"$scratch/confirm"
  note_stop
  if [ -n "$cut_short" ]; then :
  elif [ ${#confirm_hashes[@]} -gt 0 ]; then
    left=$(( time_box - (SECONDS - started) ))
    if [ "$left" -lt 60 ]; then
      confirm_opt=(--not-confirmed "the time box of ${time_box}s is spent")
    else
      # the run's ReFrame arguments less its name filters: the hashes select
      confirm_args=() skip_next=''
      for a in "${extra[@]}"; do
        if [ -n "$skip_next" ]; then skip_next=''; continue; fi
        case $a in -n|--name) skip_next=1 ;; -n?*|--name=*) ;; *) confirm_args+=("$a") ;; esac
      done
      for h in "${confirm_hashes[@]}"; do confirm_args+=(-n "/$h"); done
      # ReFrame selects by hash before --distribute copies a check per node: the hashes
      # are the checks', and the run's --distribute is given the failing nodes alone
      # (ReFrame's Slurm backend keeps those of the partition, then drops the option)
      [ -n "$confirm_nodes" ] && confirm_args+=(-J "nodelist=$confirm_nodes")
      # marked in the results storage: a later report's previous run is never this session
      # (placement.judgement.runreport.CONFIRMATION_EXTRA)
      confirm_args+=(--session-extras acceptance=confirmation)
      confirm_report="$RUNS/confirm-report-$tag-$stamp.json"
      confirm_box=("${deathsig[@]}" timeout -s INT -k 120 "$left")
      echo "== confirmation session: ${#confirm_hashes[@]} check(s) run once more${confirm_nodes:+ on node(s) $confirm_nodes}"
      run_reframe confirm_box "$confirm_report"     "${confirm_args[@]}"
      note_stop
      if [ -n "$cut_short" ]; then :      # stopped: --resume confirms again
      elif child "$PLACEMENT" acceptance sessions "$confirm_report" >/dev/null 2>&1; then
        confirm_opt=(--confirm "$confirm_report")
      else
        confirm_opt=(--not-confirmed "the confirmation session left no readable report")
      fi
    fi
  fi
fi

compare_opt=() not_compared=()
compare_note=''
if [ -z "$cut_short" ] && [ -n "$previous" ]; then
  mapfile -t previous_parts < <(read_list "$previous")
  # base (lhs) = this run, target (rhs) = the previous one: pdiff = 100*(now - prev)/prev
  if ! child "$PLACEMENT" acceptance sessions "${previous_parts[@]}" >"$scratch/prev" 2>&1; then
    note_stop
    prev_sessions=$(<"$scratch/prev")
    [ -n "$cut_short" ] ||
      not_compared+=("not compared: the previous run's reports ($previous) cannot be read: ${prev_sessions##*error: }")
  else
    child "$PLACEMENT" acceptance sessions "${parts[@]}" >"$scratch/now"
    spec="$(<"$scratch/now")/$(<"$scratch/prev")/mean:/+result"
    echo "== reframe --performance-compare=$spec   (previous: $previous)"
    compare_opt=(--compare "$compare")
    for p in "${previous_parts[@]}"; do compare_opt+=(--previous "$p"); done
    # written to a new temporary file, then renamed: the CSV's name follows from the start
    # time, and a link planted there had the comparison written into its target
    compare_tmp=$(new_temp "$compare") || exit 2
    child "${RFM[@]}" --performance-compare="$spec" --table-format=csv >"$compare_tmp" 2>"$scratch/compare.err" ||
      grep -q 'failed to generate performance comparison' "$compare_tmp" ||
      not_compared+=("not compared: reframe --performance-compare failed: $(grep -v '^$' "$scratch/compare.err" | tail -n 1)")
    grep -v WARNING "$scratch/compare.err" >&2
    mv -f "$compare_tmp" "$compare"
    cat "$compare"
    note_stop
    [ -z "$cut_short" ] || { compare_opt=() not_compared=(); }
  fi
elif [ -z "$cut_short" ]; then
  compare_note="first run of $sysname/$mode: nothing to compare with"
fi
have_report=1
"$PLACEMENT" report --help >/dev/null 2>&1 || have_report=''

# The summary is the run's answer (its lines here, its verdict record beside the newest
# part); it is written before the report, which opens with the record
summary_file="$RUNS/summary-$tag-$stamp.txt"
report_failed=''
summarize() {   # the summary's lines into $summary_file (temp, then rename); its status
  local args=() n st notes=() bound=() summary_tmp
  if [ -n "$cut_short" ]; then notes+=("$cut_short: continue with --resume")
  elif [ -n "$compare_note" ]; then notes+=("$compare_note")
  fi
  [ -n "$have_report" ] || notes+=("no 'placement report' here")
  [ -n "$report_failed" ] && notes+=("placement report failed")
  for n in "${notes[@]}"; do args+=(--note "$n"); done
  for n in "${not_compared[@]}"; do args+=(--not-compared "$n"); done
  # a stopped run's summary is bounded: whoever stopped it is waiting
  [ -n "$stop_signal" ] && bound=(timeout -s TERM 120)
  summary_tmp=$(new_temp "$summary_file") || exit 2
  child "${bound[@]}" "$PLACEMENT" acceptance summary "${parts[@]}" "${compare_opt[@]}" "${confirm_opt[@]}" \
    --system "$sysname" --mode "$mode" --max-slowdown "$slowdown" ${cut_short:+--cut-short} \
    "${args[@]}" >"$summary_tmp"
  st=$?
  mv -f "$summary_tmp" "$summary_file"
  if [ -n "$cut_short" ] && ! grep -q '^ACCEPTANCE ' "$summary_file"; then
    echo "ACCEPTANCE $sysname $mode: UNFINISHED (cases not counted: the summary was stopped too; $cut_short: continue with --resume) report=${parts[-1]}" >>"$summary_file"
    st=3
  fi
  return "$st"
}
summarize
status=$?
if [ -n "$stop_signal" ] && [ "$status" != 3 ]; then    # stopped during the summary
  note_stop
  summarize
  status=$?
fi
if [ -n "$have_report" ] && [ -z "$stop_signal" ]; then
  # the report compares its newest session with the one before; a run in parts or
  # cut short is compared above, over all its sessions
  own_compare=()
  { [ ${#parts[@]} -gt 1 ] || [ -n "$cut_short" ]; } && own_compare=(--no-compare)
  echo "== placement report ${run_args[*]}"
  # the report opens with the run's verdict record, which the summary wrote beside the
  # newest part: the same outcome, never read back from the printed lines
  record_opt=()
  record_file="$(dirname "${parts[-1]}")/verdict-$(basename "${parts[-1]%.gz}")"
  [ -f "$record_file" ] && record_opt=(--record "$record_file")
  if ! child "$PLACEMENT" report "${run_args[@]}" --system "$sysname" "${own_compare[@]}" \
      "${record_opt[@]}" --output "${PLACEMENT_REPORTS:-$ROOT/reports}"; then
    note_stop
    [ -n "$stop_signal" ] || report_failed=1
    summarize
    status=$?
  fi
fi
if [ -z "$cut_short" ]; then
  write_list "$RUNS/$tag-$stamp.run" "${parts[@]}"
  rm -f "$unfinished"
fi
cat "$summary_file"
exit "$status"

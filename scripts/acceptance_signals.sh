# How scripts/acceptance.sh stops on a signal, sourced by it once it holds the run lock.
#
# Ctrl-C (SIGINT to the terminal's process group), SIGTERM and SIGHUP stop the run as its
# time box does: ReFrame runs in the process group of its `timeout`, which Ctrl-C does not
# reach, so the trap passes SIGINT to that `timeout`, which hands it to ReFrame (ReFrame
# then cancels its jobs and writes its report); any other child is ended with SIGTERM. The
# script goes on to its UNFINISHED line (exit 3). A second signal ends ReFrame outright.
# `timeout` sends what it hands on twice (to ReFrame, then to its process group): ReFrame
# stops on the first SIGINT and ignores the rest (src/placement/util/interrupt_once.py).
# The output filters of run_reframe ignore Ctrl-C: they end after ReFrame's last line.
#
# Bash runs a trap only once the foreground command has ended, and a command blocked for
# good (a read from a FIFO) never does: every child that may take long therefore runs
# through `child`, in the background, waited for with `wait`, which a trap interrupts.
#
#   child CMD...        run CMD (with the death signal in $deathsig), its status
#   wait_for PID        wait for a background PID, through any trap, its status
#   stop_signal         the signal that stopped the run (SIGINT...), empty while none did
#   stop_at             when it came, in the script's $SECONDS
#   exit_stopped_or N   exit 3 with an UNFINISHED line when a signal stopped the run, else N
#
# Needs: sysname, mode and deathsig set; sets scratch, a folder under the runs folder removed
# on exit.

stop_signal='' stop_at='' reframe_pid='' child_pid=''

on_signal() {   # on_signal NAME: the trap of INT, TERM and HUP
  if [ -n "$stop_signal" ]; then     # the second one: no more grace
    echo "acceptance.sh: $1 again: ending ReFrame and the run's processes outright" >&2
    [ -n "$reframe_pid" ] && kill -KILL -- "-$reframe_pid" "$reframe_pid" 2>/dev/null
    [ -n "$child_pid" ] && kill -KILL "$child_pid" 2>/dev/null
    return 0
  fi
  stop_signal=SIG$1 stop_at=$SECONDS
  echo "acceptance.sh: $stop_signal: stopping the run (finished cases are kept; continue with --resume)" >&2
  # the time box's timeout hands SIGINT on to ReFrame (and its group) as when it expires
  [ -n "$reframe_pid" ] && kill -INT "$reframe_pid" 2>/dev/null
  [ -n "$child_pid" ] && kill -TERM "$child_pid" 2>/dev/null
  return 0
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

wait_for() {   # wait_for PID: its exit status, however many traps interrupt the wait
  while kill -0 "$1" 2>/dev/null; do wait "$1"; done
  wait "$1"      # bash keeps an ended child's status until it is waited for
}

child() {   # child CMD...: CMD run in the background and waited for; its status
  "${deathsig[@]}" "$@" &
  child_pid=$!
  wait_for "$child_pid"
  local st=$?
  child_pid=''
  return "$st"
}

exit_stopped_or() {   # exit_stopped_or STATUS: before ReFrame ran, a stop leaves all as it was
  if [ -n "$stop_signal" ]; then
    echo "ACCEPTANCE $sysname $mode: UNFINISHED 0 passed, 0 failed (stopped by $stop_signal before ReFrame ran: nothing changed, run again)"
    exit 3
  fi
  exit "$1"
}

scratch=$(mktemp -d "$PLACEMENT_RESULTS/runs/.acceptance.XXXXXX") ||
  { echo "acceptance.sh: cannot make a scratch folder in $PLACEMENT_RESULTS/runs (a full disk?)" >&2; exit 2; }
trap 'rm -rf "$scratch"' EXIT

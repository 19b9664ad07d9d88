# The lock a ReFrame run of this checkout holds, sourced by scripts/acceptance.sh and
# benchmarks/aa_sessions.sh: two runs on one results folder share stage/, output/ and the
# results database, and ReFrame removes stage folders the other is still using, so the
# second run's cases fail for want of their folders.
#
#   take_run_lock NAME RESULTS ADVICE
#
# Holds RESULTS/.acceptance.lock on the descriptor bash picks, named $RUN_LOCK_FD, until
# the shell exits, with the holder in RESULTS/.acceptance.lock.pid; when another run holds
# it, or the lock path cannot be opened (a directory, no permission: never taken for a
# holder), says so as NAME with ADVICE and exits 2. A child that may outlive the run (a busy
# loop, a wait) closes it, `cmd {RUN_LOCK_FD}>&-`, so a stopped run frees the lock at once.
take_run_lock() {
  local name=$1 results=$2 advice=$3 lockfile=$2/.acceptance.lock holder
  if [ -d "$lockfile" ] || ! { exec {RUN_LOCK_FD}>>"$lockfile"; } 2>/dev/null; then
    echo "$name: cannot open the lock file $lockfile ($([ -d "$lockfile" ] && echo "a directory" || echo "not writable")): remove or fix it, or $advice" >&2
    exit 2
  fi
  if ! flock -n "$RUN_LOCK_FD"; then
    holder=$(cat "$lockfile.pid" 2>/dev/null)
    echo "$name: another acceptance run is using $results (${holder:-pid unknown}): wait for it, or $advice" >&2
    exit 2
  fi
  # made exclusively and renamed over: a link planted at the .pid name is replaced, never
  # written through
  holder=$(mktemp "$lockfile.pid.XXXXXX") && chmod 644 "$holder" &&
    echo "pid $$, started $(date -u +%Y-%m-%dT%H:%M:%SZ) by $name" >"$holder" &&
    mv -f "$holder" "$lockfile.pid"
}

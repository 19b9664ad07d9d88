# Sourced by the scripts that run in the checkout (acceptance.sh, scheduled.sh,
# benchmarks/aa_sessions.sh): a relative PLACEMENT_RESULTS, PLACEMENT_REPORTS or
# PLACEMENT_BASELINES is the caller's folder, as a site engineer means it, not the
# checkout's, and every one of these scripts reads it the same way.

# absolute_from_caller DIR: each of those variables set to a relative path becomes
# DIR/path (exported); an empty, blank or multi-line one is left as it is, for the
# script's own one-line refusal.
absolute_from_caller() {
  local dir=${1%/} var val
  for var in PLACEMENT_RESULTS PLACEMENT_REPORTS PLACEMENT_BASELINES; do
    [ -n "${!var+set}" ] || continue
    val=${!var}
    case $val in /*|*$'\n'*|*$'\r'*) continue ;; *[![:space:]]*) ;; *) continue ;; esac
    printf -v "$var" '%s/%s' "$dir" "$val"
    export "${var?}"
  done
}

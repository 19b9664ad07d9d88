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

# folder_vars_problem: one line on the first of those variables that is set but names no
# usable folder (empty, blank, or holding a line break, which would split a printed line
# in two; a file, where a run found no baseline and passed; a folder that cannot be made,
# under a file, or a results or reports folder that cannot be written, found only after
# the whole run had been spent; PLACEMENT_RESULTS with a blank, which ReFrame's job
# scripts cannot take);
# nothing when each is usable or unset. Every script refuses the same values, before it
# writes anything.
folder_vars_problem() {
  local var
  for var in PLACEMENT_RESULTS PLACEMENT_REPORTS PLACEMENT_BASELINES; do
    [ -n "${!var+set}" ] || continue
    case ${!var} in
      '') echo "$var is empty: give the path of a folder, or leave it unset for the default"; return ;;
      *$'\n'*|*$'\r'*) echo "$var holds a line break: give the path of a folder, or leave it unset for the default"; return ;;
      *[![:space:]]*) ;;
      *) echo "$var is blank: give the path of a folder, or leave it unset for the default"; return ;;
    esac
    if { [ -e "${!var}" ] || [ -L "${!var}" ]; } && [ ! -d "${!var}" ]; then
      echo "$var '${!var}' is not a folder: give the path of a folder, or leave it unset for the default"; return
    fi
    local up=${!var}
    while [ ! -e "$up" ] && [ ! -L "$up" ]; do up=$(dirname -- "$up"); done
    if [ ! -d "$up" ]; then
      echo "$var '${!var}' cannot be made: '$up' is not a folder: give the path of a folder, or leave it unset for the default"; return
    fi
    if [ "$var" != PLACEMENT_BASELINES ] && [ ! -w "$up" ]; then
      echo "$var '${!var}' cannot be written ('$up' is read-only here): give a folder this user can write, or leave it unset for the default"; return
    fi
  done
  case ${PLACEMENT_RESULTS-} in *[[:space:]]*)
    echo "PLACEMENT_RESULTS '$PLACEMENT_RESULTS' contains a blank, which ReFrame's job scripts cannot take: give a path without blanks" ;;
  esac
}

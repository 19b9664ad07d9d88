# Sourced by scripts/spack-check.sh and scripts/spack-npb.sh: a work directory, and in it a
# copy of the project's Spack environment with a local source mirror, nothing of the
# caller's own Spack configuration changed.

# spack_work_dir NAME [DIR]: the work directory, its absolute path printed: DIR made anew,
# or without DIR a new temporary folder placement-NAME.XXXXXX. Returns 1, making nothing,
# when DIR already exists (a work directory is never reused).
spack_work_dir() {
  local dir
  if [ $# -lt 2 ]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/placement-$1.XXXXXX") || return 1
  else
    [ -e "$2" ] && return 1
    dir=$2
    mkdir -p "$dir" || return 1
  fi
  (cd "$dir" && pwd)
}

# sp ARGS...: spack with the mirror's scope ($work/scope of the sourcing script) in front
sp() { spack -C "$work/scope" "$@"; }

# spack_env_copy ROOT WORK MIRROR NAME: the mirror MIRROR (named NAME) as a command-line
# configuration scope WORK/scope, and ROOT's spack.yaml copied to the environment WORK/env
# (Spack makes its relative repo and develop paths absolute), the site scope
# ROOT/config/spack-site/*.yaml with it. Returns 1 when `spack env create` fails, its
# output then printed (WORK/create.log).
spack_env_copy() {
  local root=$1 work=$2 mirror=$3 name=$4 f
  mkdir -p "$work/scope"
  printf 'mirrors:\n  %s:\n    url: file://%s\n    signed: false\n' "$name" "$mirror" \
    > "$work/scope/mirrors.yaml"
  spack -C "$work/scope" env create -d "$work/env" "$root/spack.yaml" >"$work/create.log" 2>&1 \
    || { cat "$work/create.log"; return 1; }
  mkdir -p "$work/env/config/spack-site"
  for f in "$root"/config/spack-site/*.yaml; do
    [ -f "$f" ] && cp "$f" "$work/env/config/spack-site/"
  done
  return 0
}

# Sourced by scripts/spack-check.sh, scripts/spack-npb.sh and scripts/spack-site.sh: a work directory, and in it a
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

# spack_install_env ROOT TARBALL WHAT: concretizes $work/env, fills $mirror with
# scripts/spack-mirror.py (NPB from TARBALL, SPACK_MIRROR_FILES="NAME=TARBALL ..." too) and
# installs the environment (--no-checksum: a tarball that is not NASA's own has another
# sha256), saying each step (WHAT names what is installed) through the sourcing script's
# `say`; the last lines of the failed step's log and a FAIL through its `fail`.
spack_install_env() {
  local root=$1 tarball=$2 what=$3 f rc files
  say "concretizing the full environment"
  sp -e "$work/env" concretize -f >"$work/concretize.log" 2>&1 \
    || { tail -15 "$work/concretize.log"; fail "spack concretize"; }
  say "filling the mirror (NPB from $tarball)"
  files=(--file "npb=$tarball")
  for f in ${SPACK_MIRROR_FILES:-}; do files+=(--file "$f"); done
  "$root/scripts/spack-mirror.py" "$mirror" --env "$work/env" "${files[@]}" 2>&1 \
    | tee "$work/mirror.log" | sed 's/^/  /'
  [ "${PIPESTATUS[0]}" -eq 0 ] \
    || say "the mirror lacks the sources named MISSING above: the install fetches them or fails"
  say "installing the full environment ($what)"
  sp -e "$work/env" install --no-checksum --fail-fast >"$work/install.log" 2>&1
  rc=$?
  grep -E '^(==> Error|\[\+\])' "$work/install.log" | sed 's/^/  /' | tail -20
  [ $rc -eq 0 ] || { tail -15 "$work/install.log"; fail "spack install exited $rc"; }
}

# spack_script_start NAME STEPS ARGS...: the start spack-npb.sh and spack-site.sh share: ARGS
# checked (MIRROR_DIR [WORK_DIR]), Spack on PATH and the NPB tarball ($tarball) there, then
# $mirror (made if absent) and a fresh $work set. Exits 2 saying why, with STEPS the steps it
# then skipped; the caller's say() prints.
spack_script_start() {
  local name=$1 steps=$2
  shift 2
  if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    say "usage: scripts/$name.sh MIRROR_DIR [WORK_DIR] (MIRROR_DIR: a Spack source mirror, made if absent)" >&2
    exit 2
  fi
  if ! command -v spack >/dev/null 2>&1; then
    say "skipped every step ($steps): spack is not on PATH (install Spack v1.1+ and put its bin/ on PATH)" >&2
    exit 2
  fi
  if [ ! -f "$tarball" ]; then
    say "skipped every step: no NPB tarball at $tarball (NPB_TARBALL names one)" >&2
    exit 2
  fi
  mirror=$1
  mkdir -p "$mirror" && mirror=$(cd "$mirror" && pwd)
  work=$(spack_work_dir "$name" "${@:2}") || {
    [ $# -eq 2 ] && say "skipped every step: work directory '$2' already exists (give a new path)" >&2
    exit 2; }
}

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

# unchecked_specs LOG: the names of the specs whose source scripts/spack-mirror.py's output LOG
# says is not the recipe's file (its lines `  NAME@VERSION: ... install with --no-checksum ...`),
# one a line, each once
unchecked_specs() {
  sed -nE 's/^  ([A-Za-z0-9_.-]+)@[^:]*: .*install with --no-checksum.*/\1/p' "$1" | sort -u
}

# spack_install_env ROOT TARBALL WHAT: concretizes $work/env, fills $mirror with
# scripts/spack-mirror.py (NPB from TARBALL unless it is empty: the mirror holds NPB already;
# SPACK_MIRROR_FILES="NAME=TARBALL ..." too) and installs the environment, saying each step
# (WHAT names what is installed) through the sourcing script's `say`; the last lines of the
# failed step's log and a FAIL through its `fail`. Spack checks every source's sha256 but
# those the mirror script said are not the recipe's file (an NPB tarball that is not NASA's
# own): those specs alone are installed first with --no-checksum, their dependencies
# before them with the check on, and the line says so.
spack_install_env() {
  local root=$1 tarball=$2 what=$3 f rc
  local files=() unchecked=()
  say "concretizing the full environment"
  sp -e "$work/env" concretize -f >"$work/concretize.log" 2>&1 \
    || { tail -15 "$work/concretize.log"; fail "spack concretize"; }
  if [ -n "$tarball" ]; then
    say "filling the mirror (NPB from $tarball)"
    files=(--file "npb=$tarball")
  else
    say "filling the mirror (NPB's source already in it)"
  fi
  for f in ${SPACK_MIRROR_FILES:-}; do files+=(--file "$f"); done
  "$root/scripts/spack-mirror.py" "$mirror" --env "$work/env" ${files[@]+"${files[@]}"} 2>&1 \
    | tee "$work/mirror.log" | sed 's/^/  /'
  [ "${PIPESTATUS[0]}" -eq 0 ] \
    || say "the mirror lacks the sources named MISSING above: the install fetches them or fails"
  read -r -a unchecked <<<"$(unchecked_specs "$work/mirror.log" | tr '\n' ' ')"
  if [ ${#unchecked[@]} -gt 0 ]; then
    say "the mirror holds sources that are not the recipe's file (named above): installing ${unchecked[*]} alone with --no-checksum"
    install_unchecked "${unchecked[@]}"
  fi
  say "installing the full environment ($what)"
  sp -e "$work/env" install --fail-fast >"$work/install.log" 2>&1
  rc=$?
  grep -E '^(==> Error|\[\+\])' "$work/install.log" | sed 's/^/  /' | tail -20
  [ $rc -eq 0 ] || { tail -15 "$work/install.log"; fail "spack install exited $rc"; }
}

# install_unchecked SPEC...: those specs of $work/env alone with --no-checksum, their
# dependencies first with the check on; the failed step's last lines and a FAIL through the
# sourcing script's `fail`
install_unchecked() {
  local rc
  { sp -e "$work/env" install --fail-fast --only dependencies "$@" \
      && sp -e "$work/env" install --fail-fast --only package --no-checksum "$@"; } \
    >"$work/install-unchecked.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { tail -15 "$work/install-unchecked.log"; fail "spack install --no-checksum $* exited $rc"; }
}

#: sha256 of NASA's NPB3.4.1.tar.gz, the npb recipe's checksum (builtin.npb, releases/v2025.11):
#: the name NPB's source has in a mirror however it came there
NPB_SHA256=f3a43467da6e84a829ea869156d3ea86c17932136bb413a4b6dab23018a28881

# npb_in_mirror DIR: whether the source mirror DIR already holds NPB's source
npb_in_mirror() { [ -f "$1/_source-cache/archive/${NPB_SHA256:0:2}/$NPB_SHA256.tar.gz" ]; }

# npb_not_nasas DIR: whether the mirror DIR holds an NPB tarball under the recipe's name that
# is another file than NASA's (another copy of NPB 3.4.1), which Spack's check would refuse
npb_not_nasas() {
  npb_in_mirror "$1" && [ "$(sha256sum <"$1/_source-cache/archive/${NPB_SHA256:0:2}/$NPB_SHA256.tar.gz" | cut -d' ' -f1)" != "$NPB_SHA256" ]
}

# spack_script_start NAME STEPS ARGS...: the start spack-npb.sh and spack-site.sh share: ARGS
# checked (MIRROR_DIR [WORK_DIR]; MIRROR_DIR a folder or absent), NPB's source at $tarball or
# already in the mirror ($tarball then emptied), Spack on PATH, then $mirror (made if absent)
# and a fresh $work set. Exits 2 saying why in one line, with STEPS the steps it then skipped;
# the caller's say() prints.
spack_script_start() {
  local name=$1 steps=$2
  shift 2
  if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    say "usage: scripts/$name.sh MIRROR_DIR [WORK_DIR] (MIRROR_DIR: a Spack source mirror, made if absent)" >&2
    exit 2
  fi
  if [ -e "$1" ] && [ ! -d "$1" ]; then
    say "skipped every step ($steps): mirror '$1' is not a folder (MIRROR_DIR: a Spack source mirror folder, made if absent)" >&2
    exit 2
  fi
  if [ ! -f "$tarball" ]; then
    if ! npb_in_mirror "$1"; then
      say "skipped every step ($steps): no NPB tarball at $tarball and no NPB source in '$1' (NPB_TARBALL names one)" >&2
      exit 2
    fi
    tarball=""
  fi
  if ! command -v spack >/dev/null 2>&1; then
    say "skipped every step ($steps): spack is not on PATH (install Spack v1.1+ and put its bin/ on PATH)" >&2
    exit 2
  fi
  if ! mkdir -p "$1" 2>/dev/null; then
    say "skipped every step ($steps): cannot make the mirror folder '$1'" >&2
    exit 2
  fi
  mirror=$(cd "$1" && pwd)
  work=$(spack_work_dir "$name" "${@:2}") || {
    [ $# -eq 2 ] && say "skipped every step: work directory '$2' already exists (give a new path)" >&2
    exit 2; }
}

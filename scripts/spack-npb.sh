#!/usr/bin/env bash
# The Spack path with NPB end to end (`make spack-npb`; too slow for `make test`).
#
#   scripts/spack-npb.sh MIRROR_DIR [WORK_DIR]
#
# 1. concretizes a copy of spack.yaml (the checkout's spack.yaml and spack.lock
#    untouched), then fills MIRROR_DIR with scripts/spack-mirror.py, which reads
#    what the concrete specs fetch and takes each from PyPI (the project's recipes
#    give py-clustershell, py-pybind11 and meson their PyPI sdists), and NPB from
#    NPB_TARBALL (default ../shared/npb/NPB3.4.1.tar.gz) put in with --file npb=, or
#    from the mirror when it holds NPB already; what it cannot fetch is named;
#    SPACK_MIRROR_FILES="NAME=TARBALL ..." puts other local sources in;
# 2. installs the full default environment (all eight benchmarks, classes
#    S,W,A,B,C) into that copy; Spack checks each source's sha256, except those
#    the mirror script said are not the recipe's file (an NPB tarball that is not
#    NASA's own): those specs alone are installed with --no-checksum, and it says so;
# 3. checks that the view holds every bt.S.x ... is.C.x of the environment;
# 4. runs the NPB quick family (classes S and W) from that view with the
#    checkout's ReFrame configuration.
#
# Exit: 0 every step passed; 1 a step failed (its log is named); 2 nothing
#       was checked (one line says why: a mirror path that is not a folder, no
#       spack, no NPB tarball and none in the mirror, bad arguments).
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "spack-npb: $*"; }
tarball=${NPB_TARBALL:-$root/../shared/npb/NPB3.4.1.tar.gz}

. "$root/scripts/spack-env-copy.sh"
spack_script_start spack-npb "mirror, install, view, NPB runs" "$@"
fail() { say "FAIL: $*"; say "logs in $work"; exit 1; }
say "$(spack --version | head -1), environment copy and logs in $work"
before=$(cd "$root" && sha256sum spack.yaml spack.lock)

spack_env_copy "$root" "$work" "$mirror" placement-npb || fail "spack env create"

spack_install_env "$root" "$tarball" "npb bt,cg,ep,ft,sp,lu,mg,is classes S,W,A,B,C and the rest"

view="$work/env/.spack-env/view"
missing=""
for b in bt cg ep ft sp lu mg is; do
  for c in S W A B C; do
    [ -x "$view/bin/$b.$c.x" ] || missing="$missing $b.$c.x"
  done
done
[ -z "$missing" ] || fail "the view lacks$missing"
say "view holds the 40 NPB binaries bt.S.x ... is.C.x"

say "running the NPB quick family (classes S and W) from the view"
NPB_DIR="$view/bin" PLACEMENT_RESULTS="$work/results" "$view/bin/reframe" \
  -C "$root/config/settings.py" -c "$root/reframe_tests/npb.py" --prefix "$work/rfm" \
  -n NpbQuickCheck --nocolor -r >"$work/quick.log" 2>&1
qrc=$?
grep -E '^\[  (PASSED|FAILED)|Ran [0-9]+/|skipped' "$work/quick.log" | tail -5 | sed 's/^/  /'
[ $qrc -eq 0 ] || fail "the NPB quick family exited $qrc (see $work/quick.log)"

after=$(cd "$root" && sha256sum spack.yaml spack.lock)
[ "$before" = "$after" ] || fail "the checkout's spack.yaml or spack.lock changed"
say "PASS"

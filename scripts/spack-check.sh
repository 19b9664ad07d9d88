#!/usr/bin/env bash
# Checks that the project's Spack environment installs for real on this machine.
#
#   scripts/spack-check.sh MIRROR_DIR [WORK_DIR]
#
# 1. concretizes the full environment (a copy of spack.yaml; the checkout's
#    spack.yaml and spack.lock are left as they are),
# 2. installs the reduced set (PLACEMENT_SPACK_SET=check: npb names=ep,cg
#    classes=S,W, placement-kernels, py-placement, reframe) from MIRROR_DIR, a local Spack
#    source mirror the caller provides (as scripts/spack-mirror.py fills it), with
#    whatever externals the caller's site/user scopes declare for the rest,
# 3. checks the environment's view holds bin/ep.S.x and bin/bindprobe, that
#    ep.S.x verifies, that reframe runs and that the view's python runs
#    `placement judge` (what NPB jobs ask after each run under adaptive
#    repeats) on a small reference file, importing placement and SciPy from
#    the view, not from the checkout, and that the view's bin/placement runs
#    `placement --help` and the same `placement judge`.
#
# Sources come from MIRROR_DIR only when the mirror holds them. Spack checks every
# source's sha256 but NPB's where the mirror's NPB tarball is not NASA's
# NPB3.4.1.tar.gz (another copy of NPB 3.4.1 has another sha256): NPB alone is then
# installed first with --no-checksum, and the line says so.
#
# Exit: 0 every step passed; 1 a step failed (its output says which);
#       2 not checked: spack is not on PATH, or bad arguments.
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "spack-check: $*"; }

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  say "usage: scripts/spack-check.sh MIRROR_DIR [WORK_DIR] (MIRROR_DIR: a local Spack source mirror)" >&2
  exit 2
fi
if ! command -v spack >/dev/null 2>&1; then
  say "not checked: spack is not on PATH (install Spack v1.1+ and put its bin/ on PATH)" >&2
  exit 2
fi
mirror=$1
if [ ! -d "$mirror" ]; then
  say "not checked: mirror directory '$mirror' does not exist (expected a Spack source mirror folder)" >&2
  exit 2
fi
mirror=$(cd "$mirror" && pwd)
. "$root/scripts/spack-env-copy.sh"
if ! work=$(spack_work_dir spack-check "${@:2}"); then
  [ $# -eq 2 ] && say "not checked: work directory '$2' already exists (give a new path)" >&2
  exit 2
fi

fail() { say "FAIL: $*"; say "logs in $work"; exit 1; }

say "$(spack --version | head -1), environment copy and logs in $work"
before=$(cd "$root" && sha256sum spack.yaml spack.lock)

# The mirror as a command-line configuration scope and a copy of the environment:
# nothing of the caller's configuration is changed.
spack_env_copy "$root" "$work" "$mirror" placement-check || fail "spack env create"

say "concretizing the full environment"
sp -e "$work/env" concretize -f >"$work/concretize-full.log" 2>&1 \
  || { tail -30 "$work/concretize-full.log"; fail "the full environment does not concretize"; }
roots=$(sed -n 's/^==> Concretized \([0-9]*\) specs.*/\1/p' "$work/concretize-full.log")
n=$(grep -cE '^( -|\[[e+^]\]) +[a-z0-9]{7} ' "$work/concretize-full.log" || true)
say "full environment concretized: ${roots:-?} root specs, $n specs in all"

say "concretizing and installing the reduced set (npb ep,cg S,W; placement-kernels; py-placement; reframe)"
export PLACEMENT_SPACK_SET=check
sp -e "$work/env" concretize -f >"$work/concretize-check.log" 2>&1 \
  || { tail -30 "$work/concretize-check.log"; fail "the reduced set does not concretize"; }
if npb_not_nasas "$mirror"; then
  say "the mirror's NPB tarball is not NASA's NPB3.4.1.tar.gz: installing npb alone with --no-checksum"
  install_unchecked npb
fi
sp -e "$work/env" install --fail-fast >"$work/install.log" 2>&1
rc=$?
grep -E '^(==> (Installing|Error|Warning)|\[\+\]|Error|[a-z0-9-]+: Successfully installed)' "$work/install.log" \
  | sed 's/^/  /' | tail -60
[ $rc -eq 0 ] || { tail -15 "$work/install.log"; fail "spack install exited $rc"; }

view="$work/env/.spack-env/view"
for prog in ep.S.x cg.W.x bindprobe reframe; do
  [ -x "$view/bin/$prog" ] || fail "the view has no bin/$prog"
done
say "view holds bin/ep.S.x, bin/cg.W.x, bin/bindprobe, bin/reframe"
OMP_NUM_THREADS=1 "$view/bin/ep.S.x" >"$work/ep.S.out" 2>&1 || fail "ep.S.x exited $?"
grep -q 'Verification *= *SUCCESSFUL' "$work/ep.S.out" || { cat "$work/ep.S.out"; fail "ep.S.x did not verify"; }
say "ep.S.x: $(grep -m1 'Verification' "$work/ep.S.out" | tr -s ' ' | sed 's/^ //')"
"$view/bin/bindprobe" >/dev/null 2>&1 || fail "bindprobe exited $?"
rfm=$("$view/bin/reframe" -V 2>&1) || { echo "$rfm" | tail -5; fail "reframe -V exited with an error"; }
say "reframe -V: $(echo "$rfm" | tail -1)"

# The judge NPB jobs run after each run (-S max_repeats): the view's python,
# outside the checkout and without PYTHONPATH, so placement and SciPy must
# come from the view.
vpy="$view/bin/python3"
[ -x "$vpy" ] || fail "the view has no bin/python3"
where=$(cd "$work" && env -u PYTHONPATH "$vpy" -c \
  'import placement, scipy; print(placement.__file__, "scipy", scipy.__version__)' 2>&1) \
  || { echo "$where" | tail -3; fail "the view's python cannot import placement and scipy"; }
say "view's python imports $where"
cat > "$work/judge-ref.yaml" <<'YAML'
T:
  $index: [k]
  a: {wall: [1.0, -0.1, 0.1, s]}
_samples:
  T:
    $index: [k]
    a: {wall: {higher_is_better: false, session: check,
               runs: [1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00, 1.01]}}
YAML
verdict=$(cd "$work" && env -u PYTHONPATH "$vpy" -m placement judge \
  --baseline "$work/judge-ref.yaml" --entry 'T[a].wall' 1.30 1.31 1.29 1.30 1.32 2>&1)
jrc=$?
case "$jrc:$verdict" in
  0:stop:*) say "placement judge (view's python), 5 runs 30% slower: $verdict" ;;
  *) echo "$verdict" | tail -3; fail "placement judge from the view exited $jrc" ;;
esac

# The view's own command, as a site runs it: bin/placement, its subcommands listed, and
# the same judge call through it.
vpl="$view/bin/placement"
[ -x "$vpl" ] || fail "the view has no bin/placement"
out=$(cd "$work" && env -u PYTHONPATH "$vpl" --help 2>&1) \
  || { echo "$out" | tail -3; fail "the view's placement --help failed"; }
say "placement --help (the view's bin/placement): $(echo "$out" | grep -m1 -o '{[a-z,]*}')"
verdict=$(cd "$work" && env -u PYTHONPATH "$vpl" judge \
  --baseline "$work/judge-ref.yaml" --entry 'T[a].wall' 1.30 1.31 1.29 1.30 1.32 2>&1)
jrc=$?
case "$jrc:$verdict" in
  0:stop:*) say "placement judge (the view's bin/placement): $verdict" ;;
  *) echo "$verdict" | tail -3; fail "the view's placement judge exited $jrc" ;;
esac

after=$(cd "$root" && sha256sum spack.yaml spack.lock)
[ "$before" = "$after" ] || fail "the checkout's spack.yaml or spack.lock changed"
say "the checkout's spack.yaml and spack.lock are unchanged"
say "PASS"

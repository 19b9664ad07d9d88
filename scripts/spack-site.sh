#!/usr/bin/env bash
# A site's whole workflow from the Spack view (`make spack-site`; too slow for `make test`).
#
#   scripts/spack-site.sh MIRROR_DIR [WORK_DIR]
#
# 1. installs a copy of the environment as scripts/spack-npb.sh does (the checkout's
#    spack.yaml and spack.lock untouched; MIRROR_DIR filled by scripts/spack-mirror.py,
#    NPB from NPB_TARBALL, default ../shared/npb/NPB3.4.1.tar.gz, or from the mirror
#    when it holds NPB already; SPACK_MIRROR_FILES for other local sources);
# 2. then, with the view's bin/ first on PATH and nothing of a .venv on it, and the
#    system file, baselines, results and reports in WORK_DIR (PLACEMENT_SYSTEMS,
#    PLACEMENT_BASELINES, PLACEMENT_RESULTS, PLACEMENT_REPORTS):
#      placement site new spacksite --scheduler local        NODE READY
#      scripts/acceptance.sh -m quick -s spacksite            ACCEPTANCE ... PASS (first run)
#      placement baseline record --system spacksite --from latest
#      scripts/acceptance.sh -m quick -s spacksite            ACCEPTANCE ... PASS, compared
#      placement report --latest --system spacksite           index.html and the history page
#    each line checked; the view's reframe has no polars (reframe~analytics), so the
#    comparison is the one of placement.util.storage_without_polars.
#
# Exit: 0 every step passed; 1 a step failed (its log is named); 2 nothing was
#       checked (one line says why: a mirror path that is not a folder, no spack,
#       no NPB tarball and none in the mirror, bad arguments).
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "spack-site: $*"; }
tarball=${NPB_TARBALL:-$root/../shared/npb/NPB3.4.1.tar.gz}
site=spacksite

. "$root/scripts/spack-env-copy.sh"
spack_script_start spack-site "install, site new, two acceptance runs, baseline, report" "$@"
fail() { say "FAIL: $*"; say "logs in $work"; exit 1; }
say "$(spack --version | head -1), environment copy and logs in $work"
before=$(cd "$root" && sha256sum spack.yaml spack.lock)

spack_env_copy "$root" "$work" "$mirror" placement-site || fail "spack env create"
spack_install_env "$root" "$tarball" "npb, placement-kernels, py-placement, reframe~analytics and the rest"
view="$work/env/.spack-env/view"
for exe in placement reframe python3; do
  [ -x "$view/bin/$exe" ] || fail "the view lacks bin/$exe"
done

# The view's situation: its bin/ first, no .venv (the checkout's or another) on PATH.
path=$view/bin
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  case $d in */.venv/*|*/.venv|"$view/bin") ;; *) path=$path:$d ;; esac
done
export PATH=$path REFRAME=$view/bin/reframe NPB_DIR=$view/bin \
  PLACEMENT_SYSTEMS=$work/systems PLACEMENT_BASELINES=$work/baselines \
  PLACEMENT_RESULTS=$work/results PLACEMENT_REPORTS=$work/reports
unset VIRTUAL_ENV PYTHONPATH
mkdir -p "$PLACEMENT_SYSTEMS" "$PLACEMENT_BASELINES"
[ "$(command -v placement)" = "$view/bin/placement" ] || fail "placement on PATH is $(command -v placement), not the view's"
say "placement $(placement --version | cut -d' ' -f2), $("$REFRAME" -V) from $view/bin; polars: $(
  "$view/bin/python3" -c 'import importlib.util as u; print("yes" if u.find_spec("polars") else "no")')"

# step LOG COMMAND...: runs COMMAND from the checkout, its output in $work/LOG.log
step() {
  local log=$work/$1.log; shift
  (cd "$root" && "$@") >"$log" 2>&1
}

say "placement site new $site --scheduler local"
step site-new placement site new "$site" --scheduler local
rc=$?
grep -E '^NODE ' "$work/site-new.log" | sed 's/^/  /'
[ $rc -eq 0 ] && grep -q "^NODE READY $site" "$work/site-new.log" || fail "placement site new exited $rc (see $work/site-new.log)"

# acceptance N: the quick mode; its ACCEPTANCE line printed and checked
acceptance() {
  say "scripts/acceptance.sh -m quick -s $site (run $1)"
  step "acceptance-$1" scripts/acceptance.sh -m quick -s "$site"
  local rc=$? line
  line=$(grep -E '^ACCEPTANCE ' "$work/acceptance-$1.log" | tail -1)
  echo "  $line"
  [ $rc -eq 0 ] && [[ $line == "ACCEPTANCE $site quick: PASS "* ]] \
    || fail "acceptance run $1 exited $rc (see $work/acceptance-$1.log)"
  [ "$1" = 1 ] || ! grep -q 'not compared' <<<"$line" || fail "acceptance run $1 was not compared with run 1"
}
acceptance 1

say "placement baseline record --system $site --from latest"
step baseline placement baseline record --system "$site" --from latest \
  || fail "placement baseline record exited $? (see $work/baseline.log)"
tail -1 "$work/baseline.log" | sed 's/^/  /'
[ -s "$PLACEMENT_BASELINES/$site.yaml" ] || fail "no baseline $PLACEMENT_BASELINES/$site.yaml"

acceptance 2
compare=$(ls -t "$PLACEMENT_RESULTS"/runs/compare-acceptance-"$site"-quick-*.csv 2>/dev/null | head -1)
[ -n "$compare" ] && [ "$(grep -c , "$compare")" -gt 1 ] || fail "run 2 left no comparison with run 1"
say "run 2 against run 1: $(($(grep -c , "$compare") - 1)) values in $(basename "$compare")"

say "placement report --latest --system $site"
# the report's folder is the last line of its stdout; the run's own line goes to its stderr
(cd "$root" && placement report --latest --system "$site" --output "$PLACEMENT_REPORTS") \
  >"$work/report.out" 2>"$work/report.log" \
  || fail "placement report exited $? (see $work/report.log)"
folder=$(tail -1 "$work/report.out")
[ -s "$folder/index.html" ] || fail "no $folder/index.html"
history=$(find "$PLACEMENT_REPORTS" -path "*history*" -name index.html | head -1)
[ -n "$history" ] || fail "no history page under $PLACEMENT_REPORTS"
grep -q 'Previous run: session' "$folder/index.html" || fail "the report does not compare with the previous run"
say "report $folder/index.html, history ${history#"$PLACEMENT_REPORTS"/}"

after=$(cd "$root" && sha256sum spack.yaml spack.lock)
[ "$before" = "$after" ] || fail "the checkout's spack.yaml or spack.lock changed"
say "PASS"

#!/usr/bin/env bash
# Regenerates the committed spack.lock: the reference concretization of a
# Debian 12 node (config/spack-site/debian.yaml.example as its site scope).
#
#   scripts/spack-lock.sh [SITE_TEMPLATE]
#
# The environment is concretized in a temporary copy, so the checkout's
# spack.yaml is never rewritten and no config/spack-site/*.yaml of this
# machine leaks in. Spack 1.1 records a develop spec's path as an absolute
# `dev_path` (the concretizer resolves `develop: path: src` against the
# environment's folder); the lock keeps the checkout-relative form instead
# (src, src/placement), which tests/test_spack_lock.py checks. A node runs
# `spack -e . concretize -f` before installing, which writes its own path.
# Exit: 0 written; 1 concretization failed; 2 no spack / bad arguments.
set -u -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
site=${1:-$root/config/spack-site/debian.yaml.example}
command -v spack >/dev/null 2>&1 || { echo "spack-lock: spack is not on PATH" >&2; exit 2; }
[ -f "$site" ] || { echo "spack-lock: no site template $site" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/placement-spack-lock.XXXXXX")
mkdir -p "$work/config/spack-site"
cp "$root/spack.yaml" "$work/"
cp -r "$root/config/spack-repo" "$work/config/"
cp "$site" "$work/config/spack-site/packages.yaml"
ln -s "$root/src" "$work/src"
env -u PLACEMENT_SPACK_SET -u PLACEMENT_WITH_PIN spack -e "$work" concretize -f >"$work/concretize.log" 2>&1 \
  || { tail -20 "$work/concretize.log"; echo "spack-lock: concretization failed (log: $work/concretize.log)"; exit 1; }
python3 - "$work" "$root/spack.lock" <<'PY' || { echo "spack-lock: spack.lock not written (the checkout's is kept as it was)" >&2; rm -rf "$work"; exit 1; }
import json, os, sys, tempfile
work, dest = sys.argv[1], sys.argv[2]
with open(os.path.join(work, "spack.lock")) as f:
    text = f.read()
# the dev_path values only: "<work>/src..." -> "src..."
text = text.replace('"dev_path":"' + work + "/", '"dev_path":"')
if work in text:
    sys.exit(f"spack-lock: {work} is still in the lock")
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=".spack.lock.")
with os.fdopen(fd, "w") as f:
    f.write(text)
# the committed file's mode, not the temporary file's 0600
os.chmod(tmp, os.stat(dest).st_mode & 0o7777 if os.path.exists(dest) else 0o644)
os.replace(tmp, dest)
PY
n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["roots"]), "roots,", len(d["concrete_specs"]), "specs")' "$root/spack.lock")
echo "spack-lock: wrote spack.lock ($n) from $(spack --version)"
rm -rf "$work"

"""Lists the sources a Spack environment's concrete specs fetch, as JSON lines.

Run by scripts/spack-mirror.py through Spack's own interpreter, because only
the package recipes know each version's URL and checksum (the lock does not
record them):

    spack -e ENV python scripts/spack_sources.py

One line per spec Spack would fetch (externals and develop specs fetch
nothing): name, version, url, sha256 and `path`, the file's place in a source
mirror as Spack 1.1 computes it (`_source-cache/archive/<sha[:2]>/<sha>.<ext>`).
"""

import json

import spack.environment as ev
import spack.fetch_strategy as fs
import spack.mirrors.layout as layout

env = ev.active_environment()
if env is None:
    raise SystemExit("spack_sources.py: run it as `spack -e ENV python scripts/spack_sources.py`")

seen = set()
for spec in env.all_specs():
    key = spec.dag_hash()
    if key in seen or spec.external or "dev_path" in spec.variants:
        continue
    seen.add(key)
    pkg = spec.package
    row = {"name": spec.name, "version": str(spec.version)}
    if not getattr(pkg, "has_code", True):
        continue  # a bundle package: nothing to fetch
    try:
        fetcher = fs.for_package_version(pkg)
    except Exception as err:  # no URL for this version: said, not fatal
        row.update(kind="none", why=str(err).splitlines()[0])
        print(json.dumps(row))
        continue
    if not isinstance(fetcher, fs.URLFetchStrategy):
        row.update(kind=type(fetcher).__name__, url=str(getattr(fetcher, "url", "")))
        print(json.dumps(row))
        continue
    ref = layout.default_mirror_layout(fetcher, f"{spec.name}/{spec.name}-{spec.version}", spec)
    row.update(kind="url", url=fetcher.url, sha256=fetcher.digest or "",
               path=ref.path, pypi=getattr(pkg, "pypi", None) or "")
    print(json.dumps(row))

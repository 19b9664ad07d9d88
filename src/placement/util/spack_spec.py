"""The Spack spec a program was installed with, read from Spack's own metadata.

Why: a result is only comparable with another built the same way; when NPB
comes from the Spack environment, the run report records its spec (name,
version, compilers, target, hash) with every case, as excalibur-tests'
SpackTest logs the spec with each result.

Spack keeps ``spec.json`` in ``<prefix>/.spack/`` of every install, and a view
keeps one per package in ``<view>/.spack/<package>/``. A program is found in a
view's ``bin/`` (symlinked or copied) or in an install prefix's ``bin/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Virtual packages a compiler provides in Spack 1.x specs.
_LANGUAGES = {"c", "cxx", "fortran"}


def spec_file(program: str | Path, package: str) -> Path | None:
    """``spec.json`` of the install that holds ``program``, or None outside Spack."""
    p = Path(program)
    candidates = [p.parent.parent / ".spack" / package / "spec.json",      # a view
                  p.resolve().parent.parent / ".spack" / "spec.json"]     # an install prefix
    return next((c for c in candidates if c.is_file()), None)


def describe(spec: dict[str, Any]) -> str:
    """``npb@3.4.2 %gcc@12.2.0 arch=linux-debian12-x86_64_v3 /abcdefg`` from a spec.json."""
    nodes = spec["spec"]["nodes"]
    root, by_hash = nodes[0], {n.get("hash"): n for n in nodes}
    compilers = set()
    for dep in root.get("dependencies", []):
        if _LANGUAGES & set(dep.get("parameters", {}).get("virtuals", [])):
            node = by_hash.get(dep.get("hash"), {})
            compilers.add(f"%{dep['name']}@{node.get('version', '?')}")
    if isinstance(root.get("compiler"), dict):          # older specs name it on the node
        c = root["compiler"]
        compilers.add(f"%{c.get('name')}@{c.get('version')}")
    arch = root.get("arch", {})
    target = arch.get("target")
    target = target.get("name") if isinstance(target, dict) else target
    parts = [f"{root['name']}@{root['version']}", *sorted(compilers)]
    if arch:
        parts.append(f"arch={arch.get('platform')}-{arch.get('platform_os')}-{target}")
    parts.append(f"/{root.get('hash', '')[:7]}")
    return " ".join(parts)


def of_program(program: str | Path, package: str) -> str:
    """The spec line for ``program``, or '' when it was not installed by Spack."""
    path = spec_file(program, package)
    if path is None:
        return ""
    try:
        return describe(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return ""          # unreadable metadata: no spec rather than a failed case

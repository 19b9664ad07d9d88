"""What a process pays before it does anything: SciPy is imported at its first use.

Every ReFrame run loads the check files, which import the judgement package, and an
acceptance run starts ``placement`` several times, mostly for commands that judge nothing;
``scipy.stats`` alone takes about a second to import (:mod:`placement.util.lazy_module`).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from placement.util.lazy_module import LazyModule


@pytest.mark.parametrize("module", ["placement.judgement", "placement.cli",
                                    "placement.acceptance", "placement.testlib.datamap_pages"])
def test_importing_the_package_leaves_scipy_unimported(module):
    code = (f"import sys, {module}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_a_lazy_module_imports_at_its_first_attribute():
    code = ("import sys; from placement.judgement.verdict import over_sessions as o; "
            "before = 'scipy.stats' in sys.modules; p = o.stats.t.sf(2.0, 10); "
            "print(before, 'scipy.stats' in sys.modules, round(float(p), 6))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["False", "True", "0.036694"], out.stdout + out.stderr


def test_a_missing_module_is_named_at_its_first_use():
    missing = LazyModule("placement_no_such_module")
    assert "not imported yet" in repr(missing)
    with pytest.raises(ModuleNotFoundError, match="placement_no_such_module"):
        missing.anything

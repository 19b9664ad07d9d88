"""Setup refuses a checkout whose path has a blank, naming it and saying what to do."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADVICE = "move or clone the checkout to a path without blanks"


def _copy(tmp_path: Path) -> Path:
    checkout = tmp_path / "my checkout"
    (checkout / "scripts").mkdir(parents=True)
    for name in ("Makefile", "scripts/ensure-system-tools.sh", "scripts/acceptance.sh"):
        shutil.copy2(ROOT / name, checkout / name)
    return checkout


def test_make_and_setup_script_refuse_a_blank_in_the_path(tmp_path):
    checkout = _copy(tmp_path)
    make = subprocess.run(["make", "-n", "setup"], cwd=checkout, capture_output=True, text=True)
    assert make.returncode == 2 and f"'{checkout}' contains a blank" in make.stderr
    assert ADVICE in make.stderr
    setup = subprocess.run([str(checkout / "scripts" / "ensure-system-tools.sh"), "run"],
                           capture_output=True, text=True)
    assert setup.returncode == 2 and f"'{checkout}' contains a blank" in setup.stderr
    assert ADVICE in setup.stderr and len(setup.stderr.splitlines()) == 1
    acc = subprocess.run([str(checkout / "scripts" / "acceptance.sh"), "-m", "quick"],
                         capture_output=True, text=True)
    assert acc.returncode == 2 and "contains a blank" in acc.stderr

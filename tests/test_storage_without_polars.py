"""ReFrame's results storage without polars: the same comparison rows, the same options.

:mod:`placement.util.storage_without_polars` replaces the one polars step of
``--performance-compare`` where polars is missing. Its rows are checked here against
ReFrame's own polars tables on fixed test cases (this venv has polars), and ReFrame's
option check both ways in a ReFrame whose ``import polars`` fails: with the workaround a
stored-sessions listing runs, with ``PLACEMENT_REFRAME_WORKAROUNDS=off`` ReFrame refuses it
("results storage requires polars"), which is what a Spack view's ReFrame does.
tests/test_recipe_venv.py runs two acceptance runs there, the second compared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from placement.util import storage_without_polars as swp

pytestmark = pytest.mark.reframe


#: run in a Python of its own, as tests/test_session_times.py does: loading the suite's
#: configuration initialises ReFrame's runtime (and installs the workarounds) for good
SCRIPT = r"""
import json, sys
from reframe.core import config, runtime
site = config.load_config(sys.argv[1])
site.select_subconfig("generic")
runtime.init_runtime(site)
from reframe.frontend import reporting
from reframe.frontend.reporting.utility import parse_cmp_spec
from placement.util import storage_without_polars as swp

def tc(name, values, result="pass"):
    return {"name": name, "system": "generic", "partition": "default", "environ": "builtin",
            "result": result, "job_nodelist": ["n1"],
            "perfvalues": {f"generic:default:{k}": (v, 0, None, None, "s", "pass")
                           for k, v in values.items()}}

base = [tc("A %x=1", {"t": 1.0, "u": 2.0}), tc("A %x=1", {"t": 3.0, "u": None}),
        tc("B", {"t": 5.0}, "fail"), tc("B", {"t": 6.0})]
target = [tc("A %x=1", {"t": 2.0, "u": 4.0}), tc("C", {"t": 1.0}), tc("B", {"t": 0.0})]
uuid = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
out = {}
for agg in ("mean:/+result", "median,min,max,p90,std:/+result+psamples"):
    for sides, (lhs, rhs) in {"both": (base, target), "no previous": (base, []),
                              "no current": ([], target)}.items():
        query = parse_cmp_spec(f"{uuid}/{uuid}/{agg}", "this", "previous", True)
        ours = swp.compare_testcase_data(lhs, rhs, query)
        theirs = reporting.compare_testcase_data(lhs, rhs, query)
        out[f"{agg} {sides}"] = None if ours == theirs else [repr(ours), repr(theirs)]
print(json.dumps(out))
"""


def test_rows_are_reframes(root):
    """Two aggregations, each with both sides, no previous values and no current ones."""
    pytest.importorskip("polars", reason="the reference tables are ReFrame's polars ones")
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(root / "config" / "settings.py")],
                       cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(results) == 6 and not any(results.values()), results


def test_nothing_changes_where_polars_imports():
    pytest.importorskip("polars")
    from reframe.frontend import cli, reporting
    stock = (cli.validate_storage_options, reporting.compare_testcase_data)
    swp.install()
    assert (cli.validate_storage_options, reporting.compare_testcase_data) == stock


@pytest.mark.parametrize("workarounds", ["on", "off"])
def test_stored_sessions_without_polars(root, reframe_bin, tmp_path, workarounds):
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['polars'] = None\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PLACEMENT_RESULTS": str(tmp_path / "results"),
           "PLACEMENT_REFRAME_WORKAROUNDS": workarounds}
    r = subprocess.run([reframe_bin, "-C", str(root / "config" / "settings.py"), "--nocolor",
                        "--list-stored-sessions"], cwd=root, env=env, capture_output=True,
                       text=True, timeout=120)
    refused = "results storage requires polars" in r.stdout + r.stderr
    if workarounds == "on":
        assert r.returncode == 0 and not refused and "UUID" in r.stdout, r.stdout + r.stderr
    else:
        assert r.returncode != 0 and refused, r.stdout + r.stderr

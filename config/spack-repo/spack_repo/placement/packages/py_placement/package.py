# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause

import os
import shutil

from spack_repo.builtin.build_systems.python import PythonPackage

from spack.package import *


class PyPlacement(PythonPackage):
    """The Python side of the placement project: the ``placement`` command
    (maps, baselines, reports, ``placement judge``) and the ReFrame test
    library the checks import.

    Like ``placement-kernels`` it is a *develop* spec of the project's
    spack.yaml (``develop: py-placement: {spec: py-placement@=main, path:
    src/placement}``): there is no tarball. The package's sources and the
    checkout's ``pyproject.toml`` and ``README.md`` (two levels above the
    develop path) are copied into Spack's stage and installed from there
    with pip, so nothing is built inside the checkout. Installed in the
    environment's view, the view's ``python`` imports ``placement`` and
    SciPy, which is what a ReFrame run from the view needs: the NPB checks'
    adaptive repeats run ``python -m placement judge`` inside the job.
    """

    license("BSD-3-Clause")

    # No version() on purpose: the only version is the develop spec's
    # (py-placement@=main), as for placement-kernels.

    variant(
        "reports",
        default=False,
        description="PNG figures in `placement report` (matplotlib); without it the "
        "report keeps its tables and CSV",
    )

    # pyproject.toml: requires-python >= 3.9; build backend setuptools >= 77, the
    # first to read `license` as an SPDX expression. Directives are not part of
    # Spack's package hash, so the lock (setuptools 80.9.0) stays as it is.
    depends_on("python@3.9:", type=("build", "run"))
    depends_on("py-setuptools@77:", type="build")

    # pyproject.toml dependencies (tests/test_spack_recipe.py fails when one is missing
    # here). scipy 1.11 is the first with stats.false_discovery_control (the run-wide
    # Benjamini-Hochberg step); markdown-it-py renders the HTML report and history page.
    with default_args(type=("build", "run")):
        depends_on("py-pyyaml@6:")
        depends_on("py-numpy@1.22:")
        depends_on("py-scipy@1.11:")
        depends_on("py-markdown-it-py@3:")
        # [project.optional-dependencies] reports
        depends_on("py-matplotlib@3.7:", when="+reports")

    # the judge that runs inside NPB jobs, and the report's verdicts
    import_modules = ["placement", "placement.judgement.verdict.over_sessions", "placement.judgement.repeats.judge",
                      "placement.report", "placement.testlib"]

    @property
    def build_directory(self):
        """A clean copy of the package (pyproject.toml, README.md, src/placement) in the stage."""
        return join_path(self.stage.path, "placement-py")

    @run_before("install")
    def copy_sources(self):
        checkout = os.path.dirname(os.path.dirname(os.path.abspath(self.stage.source_path)))
        meta = [join_path(checkout, name) for name in ("pyproject.toml", "README.md")]
        missing = [m for m in meta if not os.path.isfile(m)]
        if missing:
            raise InstallError(
                f"py-placement's develop path must be <checkout>/src/placement; "
                f"not found: {', '.join(missing)}"
            )
        if os.path.exists(self.build_directory):
            shutil.rmtree(self.build_directory)
        shutil.copytree(
            self.stage.source_path,
            join_path(self.build_directory, "src", "placement"),
            # build-<arch>-<hash>: the link Spack puts in a develop path to this very
            # stage; followed, the copy would recurse into itself
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "build-*"),
        )
        for m in meta:
            shutil.copy(m, self.build_directory)

    @run_after("install")
    def check_judge(self):
        """The installed command answers, so a job's `python -m placement judge` can run."""
        placement = which(join_path(self.prefix.bin, "placement"))
        if placement is None:
            raise InstallError("pip did not install bin/placement")

# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# Overrides builtin.reframe (which stops at 4.7.x, builds from the GitHub
# archive and pulls docs/test tooling) with a minimal recipe for the PyPI sdist
# of ReFrame 4.10. The placement repository comes first in the environment's
# repository list, so `reframe` in spack.yaml resolves to this recipe.

from spack_repo.builtin.build_systems.python import PythonPackage

from spack.package import *


class Reframe(PythonPackage):
    """ReFrame is a framework for writing regression tests for HPC systems.

    Built from the reframe-hpc sdist on PyPI. Only the runtime requirements of
    4.10 (pyproject.toml `dependencies`) are declared; polars, which 4.10 only
    imports for the optional results-storage analytics, is behind +analytics.
    """

    homepage = "https://reframe-hpc.readthedocs.io"
    pypi = "reframe-hpc/reframe_hpc-4.10.4.tar.gz"
    git = "https://github.com/reframe-hpc/reframe.git"

    maintainers("victorusu", "vkarak")

    license("BSD-3-Clause")

    version("4.10.4", sha256="0d3b0246664fa5b98dc50deed239282300fd74684c607f6b23b5484b924e988b")

    variant(
        "analytics",
        default=False,
        description="Results-storage analytics (reframe --performance-compare etc.), needs polars",
    )
    variant("gelf", default=False, description="Graylog log handler (pygelf)")

    # requires-python = ">=3.10"
    depends_on("python@3.10:", type=("build", "run"))

    # build-system: hatchling>=1.29 upstream; 1.27 (newest in spack-packages
    # v2025.11) builds the 4.10.4 sdist identically (checked with
    # pip wheel --no-build-isolation); the custom hook only builds docs when
    # _RFM_BUILD_DOCS is set.
    depends_on("py-hatchling@1.27:", type="build")

    # Runtime requirements of 4.10.4. Upstream pins compatible releases
    # (~=) one step newer than spack-packages v2025.11 has for some of them
    # (ClusterShell~=1.9, jsonschema~=4.26, requests~=2.33, tabulate~=0.10);
    # ReFrame 4.10.4 lists, runs and reports tests with the versions below,
    # and the import sites (ClusterShell.NodeSet, jsonschema.validate,
    # requests.post, tabulate.tabulate) use no newer API.
    with default_args(type=("build", "run")):
        depends_on("py-archspec@0.2.4:")
        depends_on("py-argcomplete@3.6:")
        depends_on("py-clustershell@1.8:")
        depends_on("py-fasteners@0.20:")
        depends_on("py-jinja2@3.1:")
        depends_on("py-jsonschema@4.17:")
        depends_on("py-lxml@6:")
        depends_on("py-pyyaml@6:")
        depends_on("py-requests@2.32:")
        depends_on("py-semver@3:")
        depends_on("py-tabulate@0.9:")
        depends_on("py-polars@1.29:", when="+analytics")
        depends_on("py-pygelf@0.4:", when="+gelf")

    # sanity check
    sanity_check_is_file = ["bin/reframe"]

    def test_version(self):
        """reframe -V prints the package version"""
        reframe = which(self.prefix.bin.reframe)
        out = reframe("-V", output=str.split, error=str.split)
        assert str(self.spec.version) in out

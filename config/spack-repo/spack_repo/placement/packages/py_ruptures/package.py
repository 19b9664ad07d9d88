# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# Not in spack-packages releases/v2025.11; a recipe for the PyPI sdist.

from spack_repo.builtin.build_systems.python import PythonPackage

from spack.package import *


class PyRuptures(PythonPackage):
    """ruptures: change point detection in Python (offline segmentation of
    signals: dynamic programming, PELT, binary segmentation, window, kernel).
    The placement reports use it to place a step change in a case's history."""

    homepage = "https://centre-borelli.github.io/ruptures-docs/"
    pypi = "ruptures/ruptures-1.1.10.tar.gz"
    git = "https://github.com/deepcharles/ruptures.git"

    license("BSD-2-Clause")

    version("1.1.10", sha256="76b998f10709045e91a5f44173dc574bf98a106fd3bf22ec3c63b298a02df031")

    # one C extension (the kernel change point detection), compiled through Cython
    depends_on("c", type="build")

    # setup.cfg: python_requires = >=3.9, <3.14
    depends_on("python@3.9:3.13", type=("build", "run"))

    # pyproject.toml [build-system] requires: setuptools>=42, wheel, Cython>=0.28.5,
    # setuptools_scm[toml]>=3.4 (the sdist's PKG-INFO carries the version),
    # oldest-supported-numpy (i.e. numpy's headers at build time) and scipy
    depends_on("py-setuptools@42:", type="build")
    depends_on("py-wheel", type="build")
    depends_on("py-cython@0.28.5:", type="build")
    depends_on("py-setuptools-scm@3.4:+toml", type="build")

    # install_requires: numpy, scipy
    with default_args(type=("build", "link", "run")):
        depends_on("py-numpy")
    depends_on("py-scipy", type=("build", "run"))

    import_modules = ["ruptures", "ruptures.detection"]

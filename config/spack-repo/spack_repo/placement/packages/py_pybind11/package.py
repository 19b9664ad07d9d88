# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# Extends builtin.py_pybind11 (spack-packages releases/v2025.11), whose versions
# are GitHub archives (github.com/pybind/pybind11/archive/refs/tags/...), a host
# a node that reaches only PyPI cannot fetch. The version py-scipy gets here is
# the PyPI sdist instead, under the sdist's own checksum: it holds the same
# CMakeLists.txt, include/, tools/ and pybind11/ the builtin CMake and pip
# steps use, so scripts/spack-mirror.py fetches it from PyPI and `spack install`
# checks it.

from spack_repo.builtin.packages.py_pybind11.package import PyPybind11 as BuiltinPyPybind11

# Spack looks a package's builder up in the package's own module: the builtin one.
from spack_repo.builtin.packages.py_pybind11.package import CMakeBuilder  # noqa: F401

from spack.package import *


class PyPybind11(BuiltinPyPybind11):
    """pybind11, built from its PyPI sdist."""

    version(
        "3.0.1",
        sha256="9c0f40056a016da59bab516efb523089139fcc6f2ba7e4930854c61efb932051",
        url="https://files.pythonhosted.org/packages/source/p/pybind11/pybind11-3.0.1.tar.gz",
        preferred=True,
    )

# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# Extends builtin.py_clustershell (spack-packages releases/v2025.11), whose
# versions are GitHub archives (github.com/cea-hpc/clustershell/archive/...), a
# host a node that reaches only PyPI cannot fetch. The version ReFrame 4.10 gets
# here is the PyPI sdist instead, under the sdist's own checksum, so
# scripts/spack-mirror.py fetches it from PyPI and `spack install` checks it.

from spack_repo.builtin.packages.py_clustershell.package import (
    PyClustershell as BuiltinPyClustershell,
)

from spack.package import *


class PyClustershell(BuiltinPyClustershell):
    """ClusterShell (node sets, parallel commands), built from its PyPI sdist."""

    version(
        "1.8.4",
        sha256="ff6fba688a06e5e577315d899f0dab3f4fe479cef99d444a4e651af577b7d081",
        url="https://files.pythonhosted.org/packages/source/C/ClusterShell/ClusterShell-1.8.4.tar.gz",
        preferred=True,
    )

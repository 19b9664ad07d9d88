# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# Extends builtin.meson (spack-packages releases/v2025.11), whose versions are
# GitHub archives (github.com/mesonbuild/meson/archive/...), a host a node that
# reaches only PyPI cannot fetch. SciPy 1.16 needs meson 1.5 or newer (Debian
# 12's is 1.0.1: "Meson version is 1.0.1 but project requires >= 1.5.0"). The
# version built here is 1.8.4 from its PyPI sdist, under the sdist's own
# checksum (PyPI has 1.8.5 only as a wheel); the builtin rpath patch for 0.64+
# applies to the sdist's mesonbuild/ as to the archive's. meson is pure Python:
# it builds in seconds, and no external meson (with the Python dependency Spack
# would attach to it) is needed.

from spack_repo.builtin.packages.meson.package import Meson as BuiltinMeson

from spack.package import *


class Meson(BuiltinMeson):
    """Meson, built from its PyPI sdist."""

    version(
        "1.8.4",
        sha256="5fabf143f58e6636c8ff41ae489bbd5d5d86f881f0a1ef1726cfaf703116e071",
        url="https://files.pythonhosted.org/packages/source/m/meson/meson-1.8.4.tar.gz",
        preferred=True,
    )

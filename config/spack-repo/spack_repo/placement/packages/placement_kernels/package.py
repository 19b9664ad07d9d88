# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause

from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


class PlacementKernels(MakefilePackage):
    """C programs of the placement project: the binding probe (bin/bindprobe)
    and the measurement kernels used by the ReFrame tests to study thread
    placement (affinity maps) and NUMA memory policy.

    The source lives in the project's own repository under src/. There is no
    tarball: the project's spack.yaml declares this package as a *develop*
    spec (``develop: placement-kernels: {spec: placement-kernels@=main,
    path: src}``), so Spack builds it from the checkout and rebuilds it when
    files under src/ change. Outside that environment use
    ``spack develop --path <checkout>/src placement-kernels@=main``.
    """

    license("BSD-3-Clause")

    # No version() on purpose: there is nothing to fetch. The only version is
    # the one of the develop spec (placement-kernels@=main), which Spack
    # accepts without a matching version() directive.

    depends_on("c", type="build")
    depends_on("gmake", type="build")

    depends_on("numactl")  # libnuma: numa.h, numaif.h, -lnuma
    depends_on("hwloc")
    depends_on("mpi")  # the MPI kernel (pingpong) is built with mpicc

    # The kernels use OpenMP and libnuma; both are Linux-only here.
    conflicts("platform=darwin", msg="libnuma is Linux-only")
    conflicts("platform=windows", msg="libnuma is Linux-only")

    def _make_args(self):
        return [
            f"CC={spack_cc}",
            f"MPICC={self.spec['mpi'].mpicc}",
            # No -march=native: Spack's compiler wrapper adds the flags of the
            # concretized target (packages:all:require:target=...), which keeps
            # binaries portable across the nodes of one cluster.
            "CFLAGS=-O3 -Wall -Wextra",
            f"OPENMP_FLAG={self.compiler.openmp_flag}",
        ]

    def build(self, spec, prefix):
        # The develop path is the checkout's src/, so this is `make -C src all`.
        make("all", *self._make_args())

    def install(self, spec, prefix):
        # ... and `make -C src install PREFIX=<prefix>`.
        make("install", f"PREFIX={prefix}", *self._make_args())

    @run_after("install")
    def check_probe(self):
        if not is_exe(join_path(self.prefix.bin, "bindprobe")):
            raise InstallError("src/Makefile did not install bin/bindprobe")

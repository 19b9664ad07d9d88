# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause

import os
import shutil

from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


def _sources_only(folder, names):
    """copytree filter: keep Makefiles, C sources and headers, and the folders of the C programs."""
    keep = ("Makefile",)
    skipped = []
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            if name not in ("probe", "kernels"):
                skipped.append(name)
        elif name not in keep and not name.endswith((".c", ".h")):
            skipped.append(name)
    return skipped


class PlacementKernels(MakefilePackage):
    """C programs of the placement project: the binding probe (bin/bindprobe)
    and the measurement kernels used by the ReFrame tests to study thread
    placement (affinity maps) and NUMA memory policy.

    The source lives in the project's own repository under src/. There is no
    tarball: the project's spack.yaml declares this package as a *develop*
    spec (``develop: placement-kernels: {spec: placement-kernels@=main,
    path: src}``). The build does not run in that folder: the Makefiles and
    C sources are copied into Spack's stage first, so objects or binaries
    left in the checkout by ``make -C src`` (built for the local CPU) never
    reach the install, and every file is compiled with the spec's flags.
    Outside that environment use
    ``spack develop --path <checkout>/src placement-kernels@=main``.
    """

    license("BSD-3-Clause")

    # No version() on purpose: there is nothing to fetch. The only version is
    # the one of the develop spec (placement-kernels@=main), which Spack
    # accepts without a matching version() directive.

    variant("mpi", default=True, description="Build the MPI ping-pong kernel (bin/pingpong)")

    depends_on("c", type="build")
    depends_on("gmake", type="build")

    depends_on("numactl")  # libnuma: numa.h, numaif.h, -lnuma (numacopy, datamap)
    depends_on("mpi", when="+mpi")  # pingpong is built with mpicc

    # The kernels use OpenMP and libnuma; both are Linux-only here.
    conflicts("platform=darwin", msg="libnuma is Linux-only")
    conflicts("platform=windows", msg="libnuma is Linux-only")

    @property
    def build_directory(self):
        """A clean copy of the develop path's C sources, inside Spack's stage."""
        return join_path(self.stage.path, "placement-src")

    def edit(self, spec, prefix):
        if os.path.exists(self.build_directory):
            shutil.rmtree(self.build_directory)
        shutil.copytree(self.stage.source_path, self.build_directory, ignore=_sources_only)

    def _make_args(self):
        args = [
            f"CC={spack_cc}",
            # The spec's cflags (and the target's -march/-mtune) come from
            # Spack's compiler wrapper; ARCH_FLAGS empty so the Makefile adds
            # no instruction-set flags of its own.
            "CFLAGS=-O3 -Wall -Wextra",
            "ARCH_FLAGS=",
            f"OPENMP_FLAG={self.compiler.openmp_flag}",
        ]
        if self.spec.satisfies("+mpi"):
            args += [f"MPICC={self.spec['mpi'].mpicc}", "HAVE_MPI=yes"]
        else:
            args += ["HAVE_MPI=no"]
        return args

    def build(self, spec, prefix):
        with working_dir(self.build_directory):
            make("all", *self._make_args())

    def install(self, spec, prefix):
        with working_dir(self.build_directory):
            make("install", f"PREFIX={prefix}", *self._make_args())

    @run_after("install")
    def check_programs(self):
        wanted = ["bindprobe", "pthread_ops", "memwrite", "numacopy", "matmul", "datamap"]
        if self.spec.satisfies("+mpi"):
            wanted.append("pingpong")
        missing = [p for p in wanted if not is_exe(join_path(self.prefix.bin, p))]
        if missing:
            raise InstallError(f"src/Makefile did not install bin/{', bin/'.join(missing)}")

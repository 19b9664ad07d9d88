# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# Extends builtin.npb (checked against spack-packages releases/v2025.11,
# commit 119680aeee8ea802c6111b7167583bddef97e82f). The builtin recipe runs
# NPB's `make suite`, which carries on after a benchmark fails to compile, and
# checks nothing: with gfortran 10 or newer randi8.f does not compile
# ("Hexadecimal constant ... uses nonstandard X instead of Z") and the install
# "succeeds" with an empty bin/. Nor does it name make's shell: BT's and SP's
# Makefiles use bash substitutions (`${ver:3}`), which dash, /bin/sh on Debian
# and Ubuntu, refuses ("Bad substitution"). This recipe adds the flag gfortran
# needs, runs `make suite` under bash, and fails the install unless every
# requested benchmark and class was built.

from spack_repo.builtin.packages.npb.package import Npb as BuiltinNpb

from spack.package import *


class Npb(BuiltinNpb):
    """NAS Parallel Benchmarks; the install fails unless every requested
    bin/<bench>.<CLASS>.x (MPI 3.3.1: bin/<bench>.<CLASS>.<nprocs>) exists."""

    def fortran_flags(self) -> list:
        """Flags the Fortran compiler in use needs for NPB's sources."""
        flags = []
        # gfortran 10 made X'...' BOZ constants (randi8.f) an error.
        if self.spec.satisfies("%fortran=gcc@10:"):
            flags.append("-fallow-invalid-boz")
        return flags

    def edit(self, spec, prefix):
        super().edit(spec, prefix)
        extra = " ".join(self.fortran_flags())
        if extra:
            make_def = join_path(self.build_directory, "config", "make.def")
            filter_file(r"^(FFLAGS = .*)$", r"\1 " + extra, make_def)

    #: make's arguments for the install: bash for NPB's Makefiles wherever /bin/sh is dash
    #: (a command-line variable reaches every sub-make, BT's and SP's included).
    suite_make_args = ("suite", "SHELL=/bin/bash")

    def install(self, spec, prefix):
        mkdirp(prefix.bin)
        with working_dir(self.build_directory):
            make(*self.suite_make_args)

    def expected_binaries(self) -> list:
        """bin/ names `make suite` must produce for the requested names and classes,
        with the same exclusions as the builtin suite.def writer."""
        spec = self.spec
        per_nprocs = spec.satisfies("implementation=mpi") and spec.satisfies("@3.3.1")
        names = []
        for name in spec.variants["names"].value:
            for cls in spec.variants["classes"].value:
                if name == "is" and (cls == "F" or (cls == "E" and spec.satisfies("@3.3.1"))):
                    continue
                if per_nprocs:
                    names.extend(f"{name}.{cls}.{n}" for n in spec.variants["nprocs"].value)
                else:
                    names.append(f"{name}.{cls}.x")
        return names

    @run_after("install")
    def check_binaries(self):
        missing = [b for b in self.expected_binaries() if not is_exe(join_path(self.prefix.bin, b))]
        if missing:
            raise InstallError(
                f"NPB's make suite did not build {len(missing)} requested benchmark(s): "
                f"{', '.join(missing)}",
                long_msg="NPB's make carries on after a compile error; see the build log "
                "(spack-build-out.txt) for the first error.",
            )

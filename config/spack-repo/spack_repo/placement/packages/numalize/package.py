# Copyright the placement project developers.
# SPDX-License-Identifier: BSD-3-Clause

import os

from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


class Numalize(MakefilePackage):
    """Numalize: a Pin tool that traces the memory accesses of shared-memory
    parallel programs (OpenMP, Pthreads) and writes their communication
    pattern (-c) and page usage (-p), used to derive thread and data mappings.

    Needs Intel Pin (intel-pin), which is proprietary software distributed by
    Intel under its own licence: by installing this package you download Pin
    and accept Intel's licence terms for it.
    """

    homepage = "https://github.com/matthiasdiener/numalize"
    git = "https://github.com/matthiasdiener/numalize.git"

    maintainers("matthiasdiener")

    license("GPL-2.0-only")

    # No releases upstream: the head of master ("fix pagegraph", 2019-02-07).
    version("2019.02.07", commit="fbf3f9c0b610957401752647f4c6afdb48759614")

    depends_on("cxx", type="build")
    depends_on("gmake", type="build")

    # The upstream README asks for Pin 3.x; the tool is dlopen'ed by the pin
    # launcher of the same kit at run time.
    depends_on("intel-pin@3:", type=("build", "run"))

    # Pin tools are x86 only.
    requires("target=x86_64:", msg="Intel Pin supports only x86-64")
    requires("platform=linux", msg="this package builds the Linux Pin tool only")

    def edit(self, spec, prefix):
        makefile = FileFilter("Makefile")
        # Upstream links a libelf.a from a hard-coded Pin 2.14 kit
        # (/opt/pin-2.14-.../intel64/lib-ext/libelf.a), which no Pin 3 kit has.
        makefile.filter(r"^\s*TOOL_LIBS\s*\+=\s*/opt/pin-.*libelf\.a\s*$", "")
        # ... and passes -lelf as a compile flag; numalize.cpp calls no libelf
        # function (it runs `readelf` instead), so neither flag nor header is
        # needed, and a host libelf.h would not mix with Pin's own CRT headers.
        makefile.filter(r"\s-lelf\b", "")
        filter_file(r"^#include <libelf\.h>", "// #include <libelf.h>", "numalize.cpp")

    @property
    def build_targets(self):
        # PIN_ROOT on the command line beats the Makefile's auto-detection
        # (which searches ~ and /opt and caches the result in .pin_root).
        return [f"PIN_ROOT={self.spec['intel-pin'].prefix}"]

    def install(self, spec, prefix):
        mkdirp(prefix.lib, prefix.bin)
        install(join_path("obj-intel64", "numalize.so"), prefix.lib)
        install_tree("scripts", join_path(prefix.share, "numalize", "scripts"))
        install("README.md", join_path(prefix.share, "numalize"))

        # run.sh upstream recompiles the tool in its own directory and reads
        # .pin_root; the installed launcher calls the installed tool instead.
        launcher = join_path(prefix.bin, "numalize")
        with open(launcher, "w", encoding="utf-8") as f:
            f.write(
                f"""#!/bin/bash
# numalize [-c|-p] [numalize options] -- program [args]   (see share/numalize/README.md)
set -o nounset -o pipefail
PROGARGS=$(echo "$@" | sed 's,.*-- ,,')
PROG=$(basename "${{PROGARGS%% *}}")
"{spec['intel-pin'].prefix}/pin" -t "{prefix.lib}/numalize.so" "$@"
rc=$?
if [[ "${{1:-}}" == "-p" ]]; then
    for f in "$PROG".*.page.csv; do
        [[ -e "$f" ]] && sort -n -t, -k 1,1 -o "$f" "$f"
    done
fi
exit $rc
"""
            )
        os.chmod(launcher, 0o755)

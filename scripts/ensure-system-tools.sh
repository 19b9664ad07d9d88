#!/usr/bin/env bash
# Make sure the system tools the suite runs are present.
#   ensure-system-tools.sh run    hwloc, numactl, compilers, likwid, Open MPI
#   ensure-system-tools.sh test   the same plus Slurm, munge, Grid Engine, Chromium, graphviz and
#                                 QEMU, a kernel, busybox and OpenSSH for the emulated
#                                 NUMA node (for the test suite)
#   ensure-system-tools.sh docs   graphviz alone (the documentation's diagrams, make docs)
# As root on Debian/Ubuntu, missing packages are installed with apt-get.
# Otherwise the script names what is missing and how to get it, and exits 2.
set -euo pipefail
what=${1:-run}

# ReFrame's job scripts fail in a stage directory whose path has a blank, with only
# "Permission denied" naming the path's first word: refuse such a checkout up front
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
case $root in *[[:space:]]*)
  echo "error: the checkout path '$root' contains a blank, which ReFrame's job scripts" \
       "cannot run from: move or clone the checkout to a path without blanks" >&2
  exit 2 ;;
esac

# command-or-file -> Debian package
declare -A need=(
  [lstopo-no-graphics]=hwloc [numactl]=numactl [/usr/include/numaif.h]=libnuma-dev
  [/usr/include/hwloc.h]=libhwloc-dev [gcc]=gcc [make]=make [gfortran]=gfortran
  [likwid-pin]=likwid [mpicc]=libopenmpi-dev [mpirun]=openmpi-bin [clang]=clang [/usr/lib/llvm-14/lib/libomp.so]=libomp-dev
)
if [ "$what" = test ]; then
  need+=([slurmctld]=slurmctld [slurmd]=slurmd [srun]=slurm-client [munged]=munge
         [qsub]=gridengine-client [/usr/lib/gridengine/sge_qmaster]=gridengine-master
         [/usr/lib/gridengine/sge_execd]=gridengine-exec
         [chromium]=chromium [pdftoppm]=poppler-utils
         [qemu-system-x86_64]=qemu-system-x86 [/vmlinuz]=linux-image-amd64
         [/bin/busybox]=busybox-static [cpio]=cpio [ssh]=openssh-client
         [/usr/sbin/sshd]=openssh-server [dot]=graphviz)
fi

if [ "$what" = docs ]; then
  need=([dot]=graphviz)
fi

missing_pkgs=()
missing_names=()
for item in "${!need[@]}"; do
  if [[ "$item" == /* ]]; then [ -e "$item" ] && continue
  else command -v "$item" >/dev/null 2>&1 && continue
  fi
  missing_names+=("$item")
  missing_pkgs+=("${need[$item]}")
done
[ ${#missing_pkgs[@]} -eq 0 ] && exit 0

pkgs=$(printf '%s\n' "${missing_pkgs[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing missing system packages: $pkgs"
  export DEBIAN_FRONTEND=noninteractive
  if [[ " $pkgs" == *" gridengine-"* ]]; then
    # no system-wide cell: the tests start their own (tests/sge_cluster.py)
    echo 'gridengine-common shared/gridengineconfig boolean false' | debconf-set-selections
  fi
  apt-get update -q >/dev/null
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $pkgs >/dev/null
  exit 0
fi
{
  echo "error: missing tools: ${missing_names[*]}"
  echo "  On Debian/Ubuntu as root:  apt-get install $pkgs"
  echo "  On a cluster without root: spack env activate . && spack install"
  echo "  (the Spack environment in spack.yaml builds hwloc, numactl, likwid and Open MPI;"
  echo "   put its view's bin/ on PATH before running make)"
} >&2
exit 2

#!/usr/bin/env bash
# Installs Debian's OpenBLAS (libopenblas0-pthread), idempotently, without
# changing the machine's default BLAS: the libblas/liblapack alternatives are
# pinned to their current values first (Debian would otherwise switch to
# OpenBLAS automatically). Tests and benchmarks run OpenBLAS in child
# processes with R_LD_LIBRARY_PATH pointing at it. Not fatal on failure.
set -uo pipefail
openblas_dir=/usr/lib/x86_64-linux-gnu/openblas-pthread
[ -e "$openblas_dir/libblas.so.3" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-openblas: cannot install libopenblas0-pthread (needs root and apt-get)"
  exit 0
fi
for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
  cur=$(update-alternatives --query "$alt" 2>/dev/null | sed -n 's/^Value: //p')
  status=$(update-alternatives --query "$alt" 2>/dev/null | sed -n 's/^Status: //p')
  if [ -n "$cur" ] && [ "$status" = auto ]; then
    update-alternatives --set "$alt" "$cur" >/dev/null
  fi
done
echo "install-openblas: apt-get install libopenblas0-pthread"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null 2>&1
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  libopenblas0-pthread >/dev/null 2>&1 || echo "install-openblas: apt-get install failed"
exit 0

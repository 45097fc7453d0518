#!/usr/bin/env bash
# Installs the benchmark's peers, idempotently: scikit-learn (Debian's
# python3-sklearn, for /usr/bin/python3), the CRAN package `bases`, and
# Debian's OpenBLAS (libopenblas0-pthread) for the second table. A peer that
# cannot be installed is reported and skipped by bench.R, not fatal here.
#
# OpenBLAS comes from tools/install-openblas.sh, which leaves the machine's
# default BLAS alone; bench.R runs the OpenBLAS table in child processes
# with LD_LIBRARY_PATH pointing at it.
set -uo pipefail

py=/usr/bin/python3
have_py() { "$py" -c "import $1" >/dev/null 2>&1; }
have_rpkg() { Rscript -e "quit(status = !requireNamespace('$1', quietly = TRUE))" >/dev/null 2>&1; }

bash "$(dirname "$0")/../tools/install-openblas.sh"

need_deb=()
have_py sklearn || need_deb+=(python3-sklearn)
have_py threadpoolctl || need_deb+=(python3-threadpoolctl)

if [ ${#need_deb[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bench setup: apt-get install ${need_deb[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null 2>&1
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
      "${need_deb[@]}" >/dev/null 2>&1 || echo "bench setup: apt-get install failed"
  else
    echo "bench setup: cannot install ${need_deb[*]} (needs root and apt-get)"
  fi
fi

if ! have_rpkg bases; then
  echo "bench setup: installing bases from CRAN"
  lib=$(Rscript -e 'cat(.libPaths()[1])')
  Rscript -e "install.packages('bases', lib = '$lib', repos = 'https://cloud.r-project.org')" \
    >/dev/null 2>&1 || true
  have_rpkg bases || echo "bench setup: bases could not be installed"
fi
exit 0

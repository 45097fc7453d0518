#!/usr/bin/env bash
# Installs what a job of the project needs and the machine lacks, by profile:
#   demo   what `make demo` runs: R's recommended MASS, nothing system-wide
#   test   what `make test` needs (the default): pandoc, qpdf, tidy, a small
#          LaTeX, Debian's OpenBLAS beside the default BLAS, and the R
#          packages of the tests and vignettes (Suggests)
#   site   the test profile, pkgdown and Chromium (make site, site-check)
#   bench  the test profile and the peers only the benchmarks run (lightgbm)
# Usage: tools/install-deps.sh [demo|test|site|bench]. Idempotent: does
# nothing when everything is present. Debian packages first (prebuilt,
# fast); CRAN as the fallback.
set -euo pipefail
profile=${1:-test}
case "$profile" in
  demo|test|site|bench) ;;
  *) echo "install-deps: unknown profile '$profile' (demo, test, site or bench)" >&2; exit 2 ;;
esac

have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_rpkg() { Rscript -e "quit(status = !requireNamespace('$1', quietly = TRUE))" >/dev/null 2>&1; }

if [ "$profile" = demo ]; then
  # the demo needs rff and MASS (a recommended package, shipped with R)
  have_rpkg MASS && exit 0
  if [ "$(id -u)" = 0 ] && have_cmd apt-get; then
    echo "install-deps: apt-get install r-cran-mass"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends r-cran-mass >/dev/null
  fi
  have_rpkg MASS || Rscript -e "install.packages('MASS', lib = .libPaths()[1], repos = 'https://cloud.r-project.org')"
  exit 0
fi

# OpenBLAS for the tests of rff's threads under a threaded BLAS, without
# changing the default BLAS
bash "$(dirname "$0")/install-openblas.sh"

need_deb=()

have_cmd pandoc   || need_deb+=(pandoc)
have_cmd qpdf     || need_deb+=(qpdf)
have_cmd tidy     || need_deb+=(tidy)
have_cmd pdflatex || need_deb+=(texlive-latex-base texlive-latex-recommended texlive-fonts-recommended)

if [ "$profile" = site ]; then
  have_cmd chromium || need_deb+=(chromium)   # looking at the pkgdown site
fi

# the ecosystem integrations' frameworks (Suggests) come from Debian too
r_pkgs=(testthat knitr rmarkdown roxygen2 pkgbuild ggplot2 MASS nnet glmnet kernlab mlbench ranger future future.apply
        generics broom recipes caret progressr hardhat rsample ${RFF_EXTRA_RPKGS:-})
[ "$profile" = site ] && r_pkgs+=(pkgdown)
need_r=()
for p in "${r_pkgs[@]}"; do have_rpkg "$p" || need_r+=("$p"); done
# not in Debian: from CRAN, with the dependencies they need newer than Debian's
cran_pkgs=(parsnip workflows dials tune yardstick)
[ "$profile" = bench ] && cran_pkgs+=(lightgbm)
need_cran=()
for p in "${cran_pkgs[@]}"; do have_rpkg "$p" || need_cran+=("$p"); done

if [ ${#need_deb[@]} -eq 0 ] && [ ${#need_r[@]} -eq 0 ] && [ ${#need_cran[@]} -eq 0 ]; then
  exit 0
fi

apt_ok=0
if [ "$(id -u)" = 0 ] && have_cmd apt-get; then apt_ok=1; fi

if [ $apt_ok = 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  debs=("${need_deb[@]}")
  for p in "${need_r[@]}"; do debs+=("r-cran-$(echo "$p" | tr '[:upper:]' '[:lower:]')"); done
  echo "install-deps: apt-get install ${debs[*]}"
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null
elif [ ${#need_deb[@]} -gt 0 ]; then
  echo "install-deps: missing system tools (${need_deb[*]}); install them with your package manager" >&2
fi

still=()
for p in "${need_r[@]}"; do have_rpkg "$p" || still+=("$p"); done
if [ ${#still[@]} -gt 0 ]; then
  echo "install-deps: installing from CRAN: ${still[*]}"
  lib=$(Rscript -e 'cat(.libPaths()[1])')
  Rscript -e "install.packages(commandArgs(TRUE), lib = '$lib', repos = 'https://cloud.r-project.org')" "${still[@]}"
fi
if [ ${#need_cran[@]} -gt 0 ]; then
  Rscript "$(dirname "$0")/install-cran.R" "${need_cran[@]}"
fi

#!/usr/bin/env bash
# R CMD check --as-cran as CRAN's check without suggested packages runs it:
# examples and tests see only the hard dependencies (Depends, Imports,
# LinkingTo) and the test runner (testthat); recommended packages such as
# MASS and nnet are hidden unless declared in those fields
# (_R_CHECK_DEPENDS_ONLY_, _R_CHECK_NO_RECOMMENDED_). The vignettes are not
# rebuilt (they need rmarkdown, itself a suggested package, and take minutes);
# make test rebuilds them. Extra arguments of R CMD check in BARE_ARGS (e.g.
# BARE_ARGS=--no-tests for the examples only). Exits non-zero on an ERROR or
# a WARNING.
set -uo pipefail
cd "$(dirname "$0")/.."
out=.build/bare
rm -rf "$out" && mkdir -p "$out"
(cd "$out" && R CMD build --no-build-vignettes --no-manual ../.. > build.log 2>&1) || {
  cat "$out/build.log"; exit 1; }
tarball=$(ls "$out"/rff_*.tar.gz | head -n 1)
export _R_CHECK_LIMIT_CORES_=TRUE
# a time zone, so that packages loaded by the check do not ask systemd for one
export TZ="${TZ:-UTC}"
export _R_CHECK_DEPENDS_ONLY_=true
export _R_CHECK_NO_RECOMMENDED_=true
export _R_CHECK_FORCE_SUGGESTS_=false
# shellcheck disable=SC2086
(cd "$out" && R CMD check --as-cran --no-manual --ignore-vignettes ${BARE_ARGS:-} \
   "$(basename "$tarball")" > check.log 2>&1)
log="$out/rff.Rcheck/00check.log"
status=$(grep -E '^Status:' "$log" 2>/dev/null | tail -n 1)
echo "R CMD check --as-cran, hard dependencies only: ${status:-did not finish}"
awk '/\.\.\. (NOTE|WARNING|ERROR)$/ {p = 1} /^\* / && !/\.\.\. (NOTE|WARNING|ERROR)$/ {p = 0} p' "$log" 2>/dev/null
# the examples' timings, slowest first
timings="$out/rff.Rcheck/rff-Ex.timings"
[ -f "$timings" ] && { echo "slowest examples (user, system, elapsed):"; sort -k4 -g -r "$timings" | head -n 3; }
[ -n "$status" ] && ! echo "$status" | grep -qE 'ERROR|WARNING'

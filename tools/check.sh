#!/usr/bin/env bash
# The test command: builds the package, runs R CMD check --as-cran on the
# tarball (which runs the testthat suite and builds the vignettes), reports
# the check's NOTEs, and ends with the testthat line "N passed, N failed".
# Exits non-zero on any test failure, check ERROR or check WARNING. The
# layering check of the C files (tools/layers.sh), the check that no
# mutant is stale (tools/mutants.R --check) and R CMD check --as-cran with
# the hard dependencies only (tools/check-bare.sh, examples) count as three
# more tests.
set -uo pipefail
cd "$(dirname "$0")/.."
out=.build
rm -rf "$out" && mkdir -p "$out"

bash tools/install-deps.sh || { echo "install-deps failed"; echo "0 passed, 1 failed"; exit 1; }

extra_failed=0
bash tools/layers.sh || extra_failed=1
# every mutant of tools/mutants.txt still finds its snippet (a stale one
# would silently test nothing in `make mutants`): one more test
Rscript tools/mutants.R --check || extra_failed=$((extra_failed + 1))

(cd "$out" && R CMD build --no-manual .. > build.log 2>&1)
tarball=$(ls "$out"/rff_*.tar.gz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
  cat "$out/build.log"
  echo "0 passed, 1 failed"
  exit 1
fi

export _R_CHECK_LIMIT_CORES_=TRUE
# a time zone, so that packages loaded by the check (lubridate through
# recipes) do not ask systemd for one and print its errors
export TZ="${TZ:-UTC}"
# The PDF manual uses the inconsolata font when LaTeX has it (Debian ships it
# only in the 1.4 GB texlive-fonts-extra); otherwise the standard fonts.
if ! kpsewhich inconsolata.sty >/dev/null 2>&1; then export R_RD4PDF="times,hyper"; fi
(cd "$out" && R CMD check --as-cran "$(basename "$tarball")" > check.log 2>&1)
rc=$?
log="$out/rff.Rcheck/00check.log"
status=$(grep -E '^Status:' "$log" 2>/dev/null | tail -n 1)
echo "R CMD check --as-cran: ${status:-did not finish}"
# every NOTE and WARNING, with its text
awk '/\.\.\. (NOTE|WARNING|ERROR)$/ {p = 1} /^\* / && !/\.\.\. (NOTE|WARNING|ERROR)$/ {p = 0} p' "$log" 2>/dev/null

rout=$(ls "$out"/rff.Rcheck/tests/testthat.Rout* 2>/dev/null | head -n 1)
summary=""
[ -n "$rout" ] && summary=$(grep -E '\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$rout" | tail -n 1)
if [ -z "$summary" ]; then
  [ -n "$rout" ] && tail -n 40 "$rout"
  echo "testthat did not report a summary"
  echo "0 passed, 1 failed"
  exit 1
fi
if [ "${rout##*.}" = "fail" ]; then tail -n 60 "$rout"; fi
fail=$(echo "$summary" | sed -E 's/.*FAIL ([0-9]+).*/\1/')
skip=$(echo "$summary" | sed -E 's/.*SKIP ([0-9]+).*/\1/')
pass=$(echo "$summary" | sed -E 's/.*PASS ([0-9]+).*/\1/')

# the tarball as CRAN checks it without the suggested packages (hard
# dependencies only; examples, no tests nor vignettes, which the check
# above runs with them): one more test, timed
bare_start=$(date +%s)
if BARE_ARGS=--no-tests bash tools/check-bare.sh; then bare_ok=1; else bare_ok=0; fi
echo "check without the suggested packages: $(( $(date +%s) - bare_start )) s"
[ "$bare_ok" = 1 ] || extra_failed=$((extra_failed + 1))

pass=$((pass + 3 - extra_failed))
fail=$((fail + extra_failed))

bad=0
[ "$rc" -ne 0 ] && bad=1
echo "$status" | grep -qE 'ERROR|WARNING' && bad=1
[ -z "$status" ] && bad=1
[ "$fail" -ne 0 ] && bad=1
echo "${pass} passed, ${fail} failed, ${skip} skipped"
exit $bad

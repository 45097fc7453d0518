#!/usr/bin/env bash
# Runs the testthat suite under valgrind (memcheck) against a normal build of
# rff. Fails on any invalid read/write, use of uninitialised memory or
# definite leak whose stack passes through rff's shared library. R's own
# allocations (reachable at exit) are not rff's and are not counted.
set -uo pipefail
cd "$(dirname "$0")/.."
out=.build/valgrind
rm -rf "$out" && mkdir -p "$out/lib"
command -v valgrind >/dev/null 2>&1 || {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
  fi
}
command -v valgrind >/dev/null 2>&1 || { echo "valgrind: not installed"; exit 1; }
R CMD INSTALL --no-test-load --library="$out/lib" . > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
rm -f src/*.o src/*.so
export R_LIBS="$PWD/$out/lib${R_LIBS:+:$R_LIBS}"
# tests that time an interrupt skip themselves: valgrind runs ~50x slower
export RFF_UNDER_VALGRIND=true
# RFF_TEST_FILTER (a regular expression on test file names, as testthat's
# filter) runs part of the suite, e.g. the files that exercise changed C code
cat > "$out/run.R" <<'RS'
library(rff)
f <- Sys.getenv("RFF_TEST_FILTER")
testthat::test_dir("tests/testthat", package = "rff", load_package = "installed",
                   stop_on_failure = TRUE, filter = if (nzchar(f)) f else NULL)
RS
R -d "valgrind --leak-check=full --track-origins=yes --log-file=$out/vg.%p.log" \
  --vanilla --slave -f "$out/run.R" > "$out/tests.log" 2>&1
rc=$?
grep -E '^\[ FAIL' "$out/tests.log" | tail -n 1
# error records that mention rff's library
errs=$(awk '/^==[0-9]+== [A-Z]/ {blk = $0; next} /^==[0-9]+== +(at|by) / {blk = blk "\n" $0; next} /^==[0-9]+== *$/ {if (blk ~ /rff\.so/) print blk "\n"; blk = ""}' $out/vg.*.log)
total=$(grep -h "ERROR SUMMARY" $out/vg.*.log | sed -E 's/.*ERROR SUMMARY: ([0-9]+) errors.*/\1/' | awk '{s += $1} END {print s + 0}')
echo "valgrind: $total errors in all (R's own included) across $(ls $out/vg.*.log | wc -l) processes; records through rff.so are listed below"
if [ -n "$errs" ]; then
  echo "$errs" | head -n 80
  echo "valgrind: reports in rff's code"
  exit 1
fi
[ $rc -eq 0 ] || { tail -n 30 "$out/tests.log"; echo "valgrind: test run failed"; exit 1; }
echo "valgrind: no errors or leaks in rff's code"

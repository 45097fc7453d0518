#!/usr/bin/env bash
# Runs the testthat suite N times in a row (default 20) against one install
# of the package, each run in a fresh R process, and prints one line per
# run (passed, failed, skipped, errors, seconds, load average); exits
# non-zero if any run failed. Meant to be run while the machine is loaded
# (other jobs, or `yes > /dev/null &` once per core), to show that no test
# depends on timing or load: `make stress` or `bash tools/stress.sh 20`.
set -uo pipefail
n=${1:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$(mktemp -d)
trap 'rm -rf "$lib"' EXIT
R CMD INSTALL --no-test-load --library="$lib" "$root" > "$lib/install.log" 2>&1 ||
  { cat "$lib/install.log"; exit 1; }
bad=0
for i in $(seq 1 "$n"); do
  start=$(date +%s)
  line=$(cd "$root" && R_LIBS="$lib" Rscript -e '
    library(rff)
    r <- as.data.frame(testthat::test_dir("tests/testthat", package = "rff",
      load_package = "installed", reporter = "silent", stop_on_failure = FALSE))
    cat(sprintf("passed=%d failed=%d skipped=%d errors=%d\n", sum(r$passed), sum(r$failed),
                sum(r$skipped), sum(r$error)))' 2>/dev/null | tail -1)
  echo "run $i: $line seconds=$(( $(date +%s) - start )) load=$(cut -d' ' -f1-3 /proc/loadavg)"
  case "$line" in *"failed=0 skipped="*"errors=0"*) ;; *) bad=$((bad + 1)) ;; esac
done
echo "stress: $((n - bad)) of $n runs passed"
[ "$bad" -eq 0 ]

#!/usr/bin/env bash
# Builds rff with AddressSanitizer and UndefinedBehaviorSanitizer and runs
# the whole testthat suite on it (including the gctorture and randomized
# robustness tests). Any sanitizer report fails the run. R itself is not instrumented, so
# libasan is preloaded and leak detection (which would report R's own
# allocations) is left to `make valgrind`.
set -uo pipefail
cd "$(dirname "$0")/.."
out=.build/sanitize
rm -rf "$out" && mkdir -p "$out/lib"

cat > "$out/Makevars" <<'MK'
CFLAGS = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDFLAGS = -fsanitize=address,undefined
MK
export R_MAKEVARS_USER="$PWD/$out/Makevars"
if ! R CMD INSTALL --preclean --no-test-load --library="$out/lib" . > "$out/install.log" 2>&1; then
  cat "$out/install.log"; echo "sanitize: build failed"; exit 1
fi
rm -f src/*.o src/*.so

asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
export LD_PRELOAD="$asan:$ubsan"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:print_summary=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export RFF_TEST_LIB="$PWD/$out/lib"
# child R processes started by the tests find the same build
export R_LIBS="$RFF_TEST_LIB${R_LIBS:+:$R_LIBS}"

run() {
  local name=$1; shift
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] || grep -qE 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer' "$out/$name.log"; then
    tail -n 60 "$out/$name.log"
    echo "sanitize: $name failed (exit $rc)"
    return 1
  fi
  grep -E '^\[ FAIL|^(gctorture|robustness):' "$out/$name.log" | tail -n 2
  return 0
}

bad=0
run tests Rscript -e "library(rff, lib.loc = '$RFF_TEST_LIB'); testthat::test_dir('tests/testthat', package = 'rff', load_package = 'installed', stop_on_failure = TRUE)" || bad=1
if [ $bad -eq 0 ]; then echo "sanitize: no AddressSanitizer or UndefinedBehaviorSanitizer reports"; fi
exit $bad

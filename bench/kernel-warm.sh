#!/usr/bin/env bash
# Builds bench/kernel-warm.c against src/fused.c with R's compiler flags and
# runs it: the featurization kernel's time on warm memory, one thread.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CC=$(R CMD config CC)
CFLAGS="$(R CMD config CFLAGS) $(R CMD config CPPFLAGS) -I$(R RHOME)/include -I/usr/share/R/include -Isrc -DNDEBUG"
$CC $CFLAGS -fopenmp -fpic -c src/fused.c -o "$out/fused.o"
$CC $CFLAGS -c bench/kernel-warm.c -o "$out/kernel-warm.o"
$CC -o "$out/kernel-warm" "$out/kernel-warm.o" "$out/fused.o" -fopenmp \
  $(R CMD config --ldflags) $(R CMD config BLAS_LIBS) -lm
"$out/kernel-warm"
